"""The words of a result's field names, and the English words Chinese text names them by.

A field name is English (``parcel_no``, ``latestStatus``); a person asking in Chinese
says 运单号 or 状态. Text is matched to a field by the words of its name: English text by its
own words, Chinese text by the English words its common nouns of records mean (a tool may
declare more of its own: ``ToolHints.field_labels``). The list holds words of records in
general, not of any one toolset's.
"""

from __future__ import annotations

import re

__all__ = ["english_words", "name_words"]

# Chinese nouns of records → the English words of the field names they mean; the longest
# noun is read first ("运单号" before "单号", "列表" on its own)
_CHINESE_NOUNS: dict[str, tuple[str, ...]] = {
    "服务": ("service", "services"), "列表": ("list",), "状态": ("status",), "健康": ("health",),
    "订单": ("order",), "运单": ("tracking",), "快递单": ("tracking",), "物流单": ("tracking",),
    "单号": ("id", "no", "number"), "编号": ("id", "no", "number"), "号码": ("number", "no"),
    "退款": ("refund",), "价格": ("price",), "数量": ("count",), "总数": ("total", "count"),
    "名称": ("name",), "名字": ("name",), "时间": ("time",), "日期": ("date",), "汇率": ("rate",),
    "余额": ("balance",), "承运商": ("carrier",), "快递公司": ("carrier",),
    "错误": ("error", "errors"), "原因": ("reason", "cause"), "副本": ("replicas",),
    "延迟": ("latency",), "用户": ("user", "users"), "结果": ("results",), "文档": ("documents",),
    "记录": ("records",), "版本": ("version",), "地址": ("address",), "航班": ("flight",),
    "登机口": ("gate",), "到达": ("arrival",), "出发": ("departure",), "起飞": ("departure",),
    "电话": ("phone",), "邮箱": ("email",), "截止": ("deadline",),
}
_NOUNS = sorted(_CHINESE_NOUNS, key=len, reverse=True)
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
_NAME_PART = re.compile(r"[A-Za-z][a-z]*|[A-Z]+(?![a-z])|\d+")


def english_words(text: str) -> list[str]:
    """The English words of field names that the Chinese nouns of ``text`` mean, in the
    order the nouns appear (a noun inside a longer one counts once, as the longer)."""
    found: list[tuple[int, str]] = []
    taken = [False] * len(text)
    for noun in _NOUNS:
        for match in re.finditer(re.escape(noun), text):
            start, end = match.span()
            if any(taken[start:end]):
                continue
            taken[start:end] = [True] * (end - start)
            found += [(start, word) for word in _CHINESE_NOUNS[noun]]
    return [word for _, word in sorted(found, key=lambda item: item[0])]


def name_words(field: str) -> list[str]:
    """The lower-case words of a field name (``parcel_no`` → parcel, no;
    ``latestStatus`` → latest, status)."""
    return [part.lower() for chunk in re.split(r"[\W_]+", _CAMEL.sub("_", field))
            for part in _NAME_PART.findall(chunk)]

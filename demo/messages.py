"""The demo pack's own messages, worded here in both languages.

The engine's catalogue (core.base.message_texts) holds the engine's words only. A demo tool
reports a problem as the engine's ``tool.reported`` code around a :class:`Both` text, so
that a record of it reads in either language wherever it is shown, with or without the
pack loaded.
"""

from __future__ import annotations

from typing import Any

from core.base.language import Language
from core.base.messages import Both, Message, msg, render

__all__ = ["TEXTS", "in_language", "said"]

TEXTS: dict[str, tuple[str, str]] = {
    "ops.unknown_service": ("unknown service {name}; known services are: {known}",
                             "未知服务 {name}；已知的服务有：{known}"),
    "shop.order_unknown": ("order {order_id} does not exist; check the number (demo orders "
                           "include {known})",
                           "订单 {order_id} 不存在；请核对单号（演示订单有 {known}）"),
    "shop.tracking_unknown": ("tracking number {tracking_no} is unknown; take it from "
                              "query_order's tracking_no",
                              "运单号 {tracking_no} 不存在；请使用 query_order 返回的 "
                              "tracking_no"),
    "shop.refund_not_delivered": (
        "order {order_id} is {status}, not delivered; a refund can be requested once it has "
        "been signed for",
        "订单 {order_id} 的状态是“{status}”，尚未签收；签收后才能申请退款"),
    "shop.refund_window_passed": (
        "order {order_id} is past its {days}-day return window (ended {deadline}); contact "
        "customer service for after-sales repair instead",
        "订单 {order_id} 已超过 {days} 天退货期（{deadline} 截止）；请联系客服申请售后维修"),
    "sql.refused": ("run_sql refused {keyword}: only one read-only SELECT is allowed (no "
                    "INSERT, UPDATE, DELETE, ATTACH, PRAGMA or DDL)",
                    "run_sql 拒绝执行 {keyword}：只允许一条只读的 SELECT（不允许 INSERT、UPDATE、"
                    "DELETE、ATTACH、PRAGMA 或 DDL）"),
    "sql.empty_query": ("an empty query", "空查询"),
    "sql.one_statement": ("run_sql runs exactly one statement; split the query ({error})",
                          "run_sql 每次只执行一条语句；请拆分查询（{error}）"),
    "sql.too_big": ("run_sql stopped the query: a value grew past {limit} bytes or memory ran "
                    "short; return smaller values",
                    "run_sql 中止了查询：某个值超过 {limit} 字节或内存不足；请返回更小的值"),
    "sql.printf": ("run_sql could not run printf/format: a width or precision over {limit}, or "
                   "text that is not UTF-8; use smaller sizes",
                   "run_sql 无法执行 printf/format：宽度或精度超过 {limit}，或文本不是 UTF-8；"
                   "请用更小的数值"),
    "sql.too_many_columns": ("run_sql allows at most {limit} columns; select fewer",
                             "run_sql 最多返回 {limit} 列；请少选几列"),
    "sql.not_read_only": ("run_sql refused the query: only reading with SELECT is allowed",
                          "run_sql 拒绝了查询：只允许用 SELECT 读取"),
    "sql.timed_out": ("run_sql stopped the query after {seconds} s; add filters or a LIMIT",
                      "run_sql 在 {seconds} 秒后中止了查询；请加上过滤条件或 LIMIT"),
    "sql.bad": ("run_sql: bad SQL ({error}); call describe_tables to see tables and columns",
                "run_sql：SQL 有误（{error}）；请先调用 describe_tables 查看表和列"),
}


def in_language(language: Language, english: str, chinese: str) -> str:
    """The demo's own text (an offline plan's step, an offline answer: what a model would
    have written) in the request's ``language``."""
    return chinese if language == "zh" else english


def said(code: str, **params: Any) -> Message:
    """The demo's message ``code`` with ``params``, worded in both languages."""
    english, chinese = TEXTS[code]
    return msg("tool.reported", text=Both(en=english.format(**_worded(params, "en")),
                                          zh=chinese.format(**_worded(params, "zh"))))


def _worded(params: dict[str, Any], language: str) -> dict[str, Any]:
    def one(value: Any) -> Any:
        if isinstance(value, Message):
            return render(value, language)
        if isinstance(value, Both):
            return value.word(language)
        return "" if value is None else value

    return {name: one(value) for name, value in params.items()}

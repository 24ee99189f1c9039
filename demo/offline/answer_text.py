"""Text helpers of the offline answer: Markdown tables, and names in the answer's language."""

from __future__ import annotations

import re
from typing import Any

from core.base.language import Language
from core.plan.model import Plan

__all__ = ["CARRIERS_EN", "bilingual_half", "english_names", "markdown_table", "table_lines"]

_ROWS_SHOWN = 12


def markdown_table(columns: list[Any], rows: list[Any]) -> list[str]:
    """The lines of a Markdown (GFM) table; a ``|`` or line break inside a cell is escaped."""
    if not columns:
        return []

    def cell(value: Any) -> str:
        return " ".join(str(value).split()).replace("|", "\\|") or " "

    def line(values: list[Any]) -> str:
        return "| " + " | ".join(cell(v) for v in values) + " |"

    width = len(columns)
    body = [list(row)[:width] + [""] * (width - len(row)) for row in rows
            if isinstance(row, (list, tuple))]
    return [line(columns), "|" + "---|" * width, *(line(row) for row in body)]


def table_lines(lines: list[str]) -> list[str]:
    """A document's table rows rebuilt as one well-formed Markdown table (header first)."""
    rows = [[c.strip() for c in re.split(r"(?<!\\)\|", line.strip().strip("|"))]
            for line in lines]
    rows = [row for row in rows if not all(re.fullmatch(r":?-{3,}:?", c) for c in row)]
    if not rows:
        return []
    return markdown_table(rows[0], rows[1:_ROWS_SHOWN + 1])


_BILINGUAL = re.compile(
    r"[\u3400-\u9fff][\u3400-\u9fff\w .\-]*?\s*\(([A-Za-z][^()\u3400-\u9fff]*)\)")
_CJK = re.compile(r"[\u3400-\u9fff]")


def english_names(text: str, plan: Plan) -> str:
    """``text`` with the Chinese names the data also gives in English replaced by those:
    "比特 S10 Lite (Bit S10 Lite)" and later "比特 S10 Lite" become "Bit S10 Lite"."""
    names: dict[str, str] = {}
    for match in _BILINGUAL.finditer(text):
        names[match.group(0)[:match.start(1) - match.start(0)].rstrip(" (")] = match.group(1)
    for step in plan.steps:
        zh, en = _field(step.result, "product"), _field(step.result, "product_en")
        if isinstance(zh, str) and isinstance(en, str):
            names[zh] = en
    text = _BILINGUAL.sub(lambda m: m.group(1), text)
    for zh in sorted(names, key=len, reverse=True):
        if _CJK.search(zh):
            text = text.replace(zh, names[zh])
    return text


# the shop's carriers, which the demo data names in Chinese only
CARRIERS_EN = {"顺丰速运": "SF Express", "圆通速递": "YTO Express", "中通快递": "ZTO Express",
               "京东物流": "JD Logistics"}


def bilingual_half(text: str, lang: Language) -> str:
    """The half of a bilingual "中文 / English" text in ``lang`` (other texts as they are)."""
    zh, sep, en = text.partition(" / ")
    if not sep or not _CJK.search(zh) or _CJK.search(en):
        return text
    return zh.strip() if lang == "zh" else en.strip()


def _field(value: Any, key: str) -> Any:
    return value.get(key) if isinstance(value, dict) else None

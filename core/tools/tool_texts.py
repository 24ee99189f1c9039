"""Tools described in the reader's language, and the built-in tools' Chinese descriptions.

A tool's English description and parameter descriptions come from its docstring (and go to
the models as they are); a toolset may give a tool its texts in other languages when it
registers it (:func:`translated`, kept in ``Tool.translations``), and a person reading the
dashboard in that language sees those. A tool without them (a person's own, an MCP
server's) shows its own text.
"""

from __future__ import annotations

import copy
import dataclasses
from collections.abc import Mapping
from typing import Any

from core.base.language import Language
from core.tools.registry import Tool, ToolText

__all__ = ["BUILTIN_TEXTS_ZH", "tool_description", "tool_parameters", "translated"]

# the built-in tools: tool -> (its description, {parameter: its description})
BUILTIN_TEXTS_ZH: dict[str, tuple[str, dict[str, str]]] = {
    "calculate": ("安全地计算算术表达式（数字、+ - * / // % **、sqrt、log、round 等）。", {
        "expression": "算术表达式，例如“1999 * 0.9 + 15”。"}),
    "get_current_time": ("返回某个时区的当前日期和时间。", {
        "timezone": "IANA 时区名，例如“Asia/Shanghai”或“Europe/London”。"}),
    "web_search": ("通过 SearXNG 在网上搜索：返回标题、链接和摘要。", {
        "query": "要搜索的内容，例如“AI 编程工具 对比”。",
        "max_results": "返回的结果数（1-10）。"}),
}


def translated(tool: Tool, texts: Mapping[str, tuple[str, Mapping[str, str]]]) -> Tool:
    """``tool`` with its texts in other languages: ``{language: (description, {parameter:
    description})}``; the tool's own texts, which models read, are unchanged."""
    given = {language: ToolText(description=description, parameters=dict(parameters))
             for language, (description, parameters) in texts.items()}
    return dataclasses.replace(tool, translations={**tool.translations, **given})


def tool_description(tool: Tool, language: Language | str) -> str:
    """The tool's description in ``language`` (its own one without a text in it)."""
    text = tool.translations.get(language)
    return text.description if text is not None else tool.description


def tool_parameters(tool: Tool, language: Language | str) -> dict[str, Any]:
    """The tool's parameter schema with its parameters described in ``language``."""
    text = tool.translations.get(language)
    if text is None:
        return tool.parameters
    schema = copy.deepcopy(tool.parameters)
    for name, prop in (schema.get("properties") or {}).items():
        if name in text.parameters and isinstance(prop, dict):
            prop["description"] = text.parameters[name]
    return schema

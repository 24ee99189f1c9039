"""A route: how a request is handled and why, with the rules' reasons worded in both languages.

The router (core.planning.router) decides; a pack's offline reading of its own domain may
decide too (core.planning.packs). Either way a rule's decision is a :class:`Route` with a
reason code from :data:`ROUTE_REASONS`, made by :func:`ruled`.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, field_validator

from core.planning.choices import RouteMode

__all__ = ["ROUTE_ALIASES", "ROUTE_REASONS", "Route", "reason_text", "ruled"]

ROUTE_ALIASES = {"react": "direct", "simple": "direct", "workflow": "knowledge",
                 "rag": "knowledge", "qa": "knowledge", "hierarchical": "plan",
                 "complex": "plan"}

# reason code -> (Chinese, English) wording; {names}, {count} and {mode} are the parameters
ROUTE_REASONS: dict[str, tuple[str, str]] = {
    "empty": ("请求为空，交给规划器", "empty request; planning"),
    "condition": ("请求包含条件判断（如“到了的话……”），需要先规划再执行",
                  "the request has a condition (\"if ...\"), so it needs a plan"),
    "side_effect": ("请求要执行有副作用的操作，需要先核对再执行",
                    "the request asks for an action with a side effect, so it is planned"),
    "chained": ("要先查到一个结果，再用它查下一个，需要先规划",
                "one lookup needs what another finds first, so it is planned"),
    "parts": ("请求包含 {count} 个子任务，需要先规划再执行",
              "the request has {count} separate parts, so it needs a plan"),
    "analysis": ("任务需要多步分析，需要先规划", "the task needs a multi-step analysis"),
    "lookup": ("一个简单的查询（{names}），一到三次工具调用即可完成",
               "a single lookup ({names}) that one to three tool calls can do"),
    "knowledge": ("知识问答（政策、说明或选购建议），没有要查询的单号，直接检索知识库回答",
                  "a knowledge question (policy, guide or advice) with no id to look up; "
                  "answered from the knowledge base"),
    "several": ("请求包含多个部分，需要先规划", "the request has several parts, so it is planned"),
    "simple": ("简单请求，直接处理", "a simple request, handled directly"),
    "no_knowledge_tool": ("没有能检索文档回答问题的工具，改为规划",
                          "no tool answers questions from documents; planning"),
    "no_source": ("知识库里没有相关资料，而工具可以回答（{names}），改为规划",
                  "no knowledge-base source covers it, but tools can ({names}); planning"),
    "person": ("由用户指定：{mode}", "chosen by a person: {mode}"),
}


class Route(BaseModel):
    """The way a request will be handled, and why (``source``: who decided).

    A rule's reason has a ``code`` (a key of ROUTE_REASONS) and ``params``: ``reason`` is its
    English sentence (the CLI's JSON contract) and :meth:`reason_in` words it in any language.
    A model's reason has no code and is shown as the model wrote it.
    """

    mode: RouteMode
    reason: str = ""
    source: Literal["llm", "rules", "person"] = "rules"
    code: str = ""
    params: dict[str, str] = {}

    @field_validator("mode", mode="before")
    @classmethod
    def _alias(cls, value: Any) -> Any:
        text = str(value or "").strip().strip("\"'").lower()
        return ROUTE_ALIASES.get(text, text)

    def reason_in(self, lang: str) -> str:
        """The reason worded in ``lang`` ("zh" or "en")."""
        return reason_text(self.code, self.params, lang) or self.reason


def reason_text(code: str, params: dict[str, str], lang: str) -> str:
    """The wording of reason ``code`` in ``lang``; "" for an unknown code."""
    wording = ROUTE_REASONS.get(code)
    if wording is None:
        return ""
    return (wording[0] if lang == "zh" else wording[1]).format(**params)


def ruled(route_mode: str, code: str, source: str = "rules", **params: str) -> Route:
    """A rule's route: ``route_mode`` for reason ``code`` with ``params``."""
    return Route(mode=route_mode, code=code, params=params, source=source,
                 reason=reason_text(code, params, "en"))

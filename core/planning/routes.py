"""A route: how a request is handled and why, with the rules' reasons worded in both languages.

The router (core.planning.router) decides; a pack's offline reading of its own domain may
decide too (core.planning.packs). Either way a rule's decision is a :class:`Route` with a
reason code (worded by the message ``route.<code>``), made by :func:`ruled`.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, field_validator

from core.base.messages import TEXTS, msg, render
from core.planning.choices import RouteMode

__all__ = ["ROUTE_ALIASES", "Route", "reason_text", "ruled"]

ROUTE_ALIASES = {"react": "direct", "simple": "direct", "workflow": "knowledge",
                 "rag": "knowledge", "qa": "knowledge", "phases": "hierarchical",
                 "phased": "hierarchical", "complex": "plan"}


class Route(BaseModel):
    """The way a request will be handled, and why (``source``: who decided).

    A rule's reason has a ``code`` (worded by the message ``route.<code>``) and ``params``:
    ``reason`` is its English sentence (the CLI's JSON contract) and :meth:`reason_in` words
    it in any language.
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
    if f"route.{code}" not in TEXTS:
        return ""
    return render(msg(f"route.{code}", **params), lang)


def ruled(route_mode: str, code: str, source: str = "rules", **params: str) -> Route:
    """A rule's route: ``route_mode`` for reason ``code`` with ``params``."""
    return Route(mode=route_mode, code=code, params=params, source=source,
                 reason=reason_text(code, params, "en"))

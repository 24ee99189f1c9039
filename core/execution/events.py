"""Events a run emits as it goes, so that a store, a CLI or a UI can follow along."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, Field

from core.plan.model import now

__all__ = ["EventKind", "EventSink", "RunEvent"]

EventKind = Literal[
    "run_started",
    "step_started",
    "step_completed",
    "step_failed",
    "step_skipped",
    "waiting_confirmation",
    "confirmed",
    "rejected",
    "replanned",
    "reflected",
    "paused",
    "resumed",
    "cancelled",
    "interrupted",
    "step_reset",
    "run_finished",
    "tool_called",  # an outside agent reported a tool call of a step (core.review)
]


class RunEvent(BaseModel):
    """One thing that happened in a run; ``data`` carries what a reader needs to show it.

    ``plan`` is the plan object the event was emitted with (the new version for
    ``replanned``), so a recorder can snapshot exactly that version. It lives only in
    memory: it is never serialised (``model_dump``/JSON leave it out) nor stored.
    """

    kind: EventKind
    step_id: str | None = None
    plan_version: int = 1
    data: dict[str, Any] = Field(default_factory=dict)
    at: datetime = Field(default_factory=now)
    plan: Any = Field(default=None, exclude=True, repr=False)


EventSink = Callable[[RunEvent], None]

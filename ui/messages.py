"""Core's errors and recorded reasons on the dashboard, worded in the session's language.

An error raised with a message code (core.base.messages) reads in English or Chinese as
the sidebar's language says; one raised with plain text, and text a person, model or tool
wrote, is shown as written.
"""

from __future__ import annotations

from core.base.messages import Message, render
from ui.i18n import current_language
from ui.safe_text import literal

__all__ = ["error_text", "said"]


def said(item: Message | BaseException | str | None) -> str:
    """``item`` worded in the session's language (plain text, to show through a safe form)."""
    return render(item, current_language())


def error_text(exc: BaseException) -> str:
    """An error's first line (PlanBoard's errors are one line) in the session's language,
    safe for Streamlit's Markdown elements."""
    text = said(exc).strip()
    return literal(text.splitlines()[0] if text else type(exc).__name__)

"""What the command line prints and asks: JSON, progress lines, yes/no questions."""

from __future__ import annotations

import argparse
import json
import re
import sys
from typing import Any

from core.base.messages import Message, recorded, render
from core.base.text import preview
from core.cli.text import cli_language, say
from core.execution.events import RunEvent
from core.plan.model import STATUS_ICONS
from core.tools.results import json_safe

__all__ = ["ask", "ask_text", "bounded_float", "bounded_int", "error_code", "print_error",
           "print_json", "print_progress", "short"]

_CAPITALS = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")  # OSError: os_error
_NOTED_EVENTS = {"replanned", "reflected", "waiting_confirmation", "confirmed", "rejected",
                 "paused", "resumed", "cancelled"}
_STATUS_WORDS = {"started", "completed", "failed", "skipped"}
_HOW = {"direct", "forced_tool", "react", "synthesis", "condition"}  # the executor's StepMode


def print_json(value: Any) -> None:
    """Print ``value`` as indented JSON, keeping Chinese text readable.

    ``json_safe`` first: NaN, infinities, bytes and huge numbers are not JSON, and a lone
    surrogate cannot be written to a UTF-8 terminal.
    """
    print(json.dumps(json_safe(value), ensure_ascii=False, indent=2))


def print_error(error: BaseException, text: str, *, as_json: bool) -> None:
    """Report a command's error: ``error: TEXT`` on stderr, or, for a command asked for
    ``--json``, ``{"error": {"code", "message"}}`` on stdout, where its reader looks."""
    if as_json:
        print_json({"error": {"code": error_code(error), "message": text}})
    else:
        print(say("error", text=text), file=sys.stderr)


def error_code(error: BaseException) -> str:
    """The error's message code when it carries one, else its class in snake case
    (``unservable_request_error``): stable for a script to branch on."""
    carried = getattr(error, "message", None)
    if isinstance(carried, Message):
        return carried.code
    return _CAPITALS.sub("_", type(error).__name__).lower()


def print_progress(event: RunEvent, out: Any) -> None:
    """One live line per step transition, and a note for replans, pauses and the like."""
    if event.step_id is None or not event.kind.startswith("step_"):
        if event.kind in _NOTED_EVENTS:
            detail = event.data.get("reason") or event.data.get("lesson") or ""
            if "version" in event.data:  # a new version beyond the approved plan
                detail = f"v{event.data['version']}: {', '.join(event.data.get('steps', []))}"
            label = say(f"event_{event.kind}")
            print(f"  [{label}] {short(str(detail), 100)}".rstrip(), file=out, flush=True)
        return
    status = event.kind.removeprefix("step_")
    icon = STATUS_ICONS.get("running" if status == "started" else status, "·")
    # the status word is said once: a blocked step's reason begins with it ("skipped: …")
    detail = _reason(event).removeprefix(f"{status}: ")
    if not detail and status == "completed" and event.data.get("mode") in _HOW:
        detail = say(f"step_how_{event.data['mode']}")  # how it ran, in plain words
    word = say(f"step_{status}") if status in _STATUS_WORDS else status
    if detail:
        word = say("step_detail", status=word, detail=short(str(detail), 100))
    print(f"  {icon} {event.step_id} {word}", file=out, flush=True)


def _reason(event: RunEvent) -> str:
    """Why the step ended so: its message in the command line's language when the event
    carries its code (``error_message``), else its error as recorded."""
    coded = recorded(event.data.get("error_message"))
    if coded is not None:
        return render(coded, cli_language())
    return str(event.data.get("error") or "")


def ask(question: str) -> bool:
    """Ask a yes/no question on the terminal; no answer (no terminal) means no."""
    return ask_text(question).strip().lower() in {"y", "yes", "是", "好"}


def ask_text(question: str) -> str:
    """Ask for a line of text; an empty string when nothing can be read."""
    try:
        return input(question)
    except EOFError:
        print("\n" + say("no_answer_read"), file=sys.stderr)
        return ""


def short(text: str, width: int = 60) -> str:
    """``text`` on one line, cut to ``width`` characters."""
    return preview(text, width)


def bounded_int(low: int, high: int) -> Any:
    """An argparse type: a whole number from ``low`` to ``high``."""
    return _bounded(int, "a whole number", low, high)


def bounded_float(low: float, high: float) -> Any:
    """An argparse type: a number from ``low`` to ``high``."""
    return _bounded(float, "a number", low, high)


def _bounded(kind: type, what: str, low: float, high: float) -> Any:
    def parse(text: str) -> Any:
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"must be {what}, got {text!r}") from None
        if not low <= value <= high:  # NaN fails here too
            raise argparse.ArgumentTypeError(f"must be between {low} and {high}, got {text}")
        return value

    return parse

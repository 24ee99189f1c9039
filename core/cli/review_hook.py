"""``python -m core review-hook``: a coding assistant's plan, reviewed in PlanBoard.

Installed as a ``PermissionRequest`` hook with the matcher ``ExitPlanMode``, it reads the
hook's JSON from stdin (the Markdown plan in ``tool_input.plan``), sends the plan for review
and waits for the person's decision. It prints
``{"hookSpecificOutput": {"hookEventName": "PermissionRequest", "decision": {"behavior":
"allow"}}}`` once approved, or ``"behavior": "deny"`` with the reviewer's comment as
``message`` once rejected. Without a decision in ``--timeout`` seconds, with the dashboard
out of reach or a plan it refuses, it prints nothing on stdout, says why on stderr and
exits 0: the assistant then asks its own question, as without the hook.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from typing import Any, TextIO

from core.cli.text import say
from core.review.client import ReviewClient, ReviewError, UnreachableError

__all__ = ["add_review_hook_command", "answer_hook"]

HOOK_EVENT = "PermissionRequest"
DEFAULT_TIMEOUT_S = 600.0
AGENT = "coding assistant"


def add_review_hook_command(commands: Any) -> None:
    hook = commands.add_parser(
        "review-hook", help="review a coding assistant's plan in PlanBoard "
                            "(a PermissionRequest hook for ExitPlanMode)")
    hook.add_argument("--url", help="the dashboard's address (default: PLANBOARD_URL, "
                                    "else http://localhost:8501)")
    hook.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT_S,
                      help="seconds to wait for the decision (default: %(default)s); keep "
                           "it under the hook's own timeout")
    hook.add_argument("--agent", default=AGENT, help="the name the review shows")
    hook.set_defaults(handler=cmd_review_hook)


def cmd_review_hook(args: argparse.Namespace) -> int:
    """Answer the hook on stdin; always exit 0 (the assistant falls back on no answer)."""
    client = ReviewClient(args.url, timeout=min(10.0, max(args.timeout, 0.1)))
    answer = answer_hook(sys.stdin.read(), client, timeout=args.timeout, agent=args.agent,
                         log=sys.stderr)
    if answer is not None:
        print(json.dumps(answer))
    return 0


def answer_hook(hook_input: str, client: ReviewClient, *, timeout: float,
                agent: str = AGENT, log: TextIO) -> dict[str, Any] | None:
    """The hook's answer to ``hook_input`` (None: no answer, and why written to ``log``)."""
    plan = _plan(hook_input, log)
    if plan is None:
        return None
    started = time.monotonic()
    try:
        review_id = client.submit(plan, agent=agent)
        print(say("hook_sent", url=f"{client.url}/?review={review_id}"), file=log)
        decision = client.decision(review_id, wait=0)
        while decision.status == "pending" and time.monotonic() - started < timeout:
            left = timeout - (time.monotonic() - started)
            decision = client.decision(review_id, wait=left)
    except UnreachableError as exc:
        print(say("hook_unreachable", reason=exc), file=log)
        return None
    except ReviewError as exc:
        print(say("hook_refused", reason=exc), file=log)
        return None
    if decision.approved:
        return _output({"behavior": "allow"})
    if decision.rejected:
        return _output({"behavior": "deny", "message": decision.comment or ""})
    print(say("hook_undecided", review_id=review_id, seconds=f"{timeout:g}"), file=log)
    return None


def _plan(hook_input: str, log: TextIO) -> str | None:
    try:
        data = json.loads(hook_input)
        plan = data["tool_input"]["plan"]
    except (ValueError, KeyError, TypeError) as exc:
        print(say("hook_no_plan", reason=type(exc).__name__ if not str(exc) else exc), file=log)
        return None
    if not isinstance(plan, str) or not plan.strip():
        print(say("hook_no_plan", reason="tool_input.plan is empty"), file=log)
        return None
    return plan


def _output(decision: dict[str, str]) -> dict[str, Any]:
    return {"hookSpecificOutput": {"hookEventName": HOOK_EVENT, "decision": decision}}

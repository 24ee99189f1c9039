"""Repair: a field read from a step whose result is text reads the whole text.

A small model writes ``{{s4.result}}`` or ``{{s4.summary}}`` for the output of a reasoning
step, as it would for a tool's data, and, in a replan, for a tool step that came back as
plain text (a git log). Such a result is text, with no fields, so the plan cannot be run as
written; the validator says to read ``{{s4}}`` instead, and a small model, told so in a
corrective turn, often writes the same reference again (each round costs it the whole
reply). The whole text is the only thing such a reference can read, so the reference is
rewritten to it, with a note for the person approving.
"""

from __future__ import annotations

import re
from typing import Any

from core.plan.model import Plan, substitute_references
from core.planning.checks.shape import STAGES, Check, CheckContext, Problem

__all__ = ["CHECK", "read_whole_texts"]


def read_whole_texts(plan: Plan, context: CheckContext) -> list[Problem]:
    """Rewrite, in each pending step's arguments, every ``{{sN.path}}`` of a step whose
    result is text (:meth:`Plan.text_results`) to ``{{sN}}``; one note per reference
    rewritten."""
    texts = plan.text_results()
    notes: list[Problem] = []
    for step in plan.steps:
        if step.status != "pending" or not step.args:
            continue
        step.args, rewritten = _whole(step.args, texts)
        notes.extend(Problem("check.text_field_read_whole", {
            "step": step.id, "reference": reference, "whole": whole}, step.id)
            for reference, whole in rewritten.items())
    return notes


def _whole(args: dict[str, Any], texts: set[str]) -> tuple[dict[str, Any], dict[str, str]]:
    """``args`` with each field reference of a step in ``texts`` made whole, and what was
    rewritten to what."""
    rewritten: dict[str, str] = {}

    def whole(match: re.Match[str]) -> str:
        if match.group(1) not in texts or not match.group(2):
            return match.group(0)
        rewritten[match.group(0)] = "{{" + match.group(1) + "}}"
        return rewritten[match.group(0)]

    return substitute_references(args, whole), rewritten


CHECK = Check(name="text_fields", kind="repair", stages=frozenset(STAGES), run=read_whole_texts,
              weak_models_only=True)

"""Scoring with BFCL's own checker: entry accuracy, and the turns right in a row.

A result line is ``{"id", "result": [[[call, ...], ...], ...]}``: per turn, per step, the
calls made, as strings BFCL executes. An entry is right when BFCL's ``multi_turn_checker``
passes on all its turns, as BFCL's evaluation runs it (a step without calls is dropped; a
result with fewer turns than the ground truth was cut short and fails, as BFCL's
"force-terminated" entries do). The turns right in a row are the largest k for which the
checker passes on the entry's first k turns: at a small model's accuracy whole entries
separate nothing on a small sample, while the turns an agent gets right before its first
mistake do.

The checker keeps the backend instances it executes on in its module's globals, keyed by
the model name and the entry id; each check here runs under a name of its own and removes
its instances afterwards, so checks never see each other's state.
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass
from typing import Any

from bench.bfcl.data import CATEGORY, Entry

__all__ = ["EntryScore", "check_turns", "score_result"]

_names = itertools.count()


@dataclass(frozen=True)
class EntryScore:
    """What BFCL's checker says of one entry."""

    entry_id: str
    valid: bool
    turns_right: int  # the largest k whose first k turns pass
    turns: int
    error: str = ""


def _decoded(result: list[Any]) -> list[list[list[str]]]:
    """Each turn's steps that hold calls (BFCL's evaluation drops empty ones)."""
    return [[list(step) for step in turn if isinstance(step, list) and step]
            for turn in result]


def check_turns(entry: Entry, result: list[Any], turns: int) -> dict[str, Any]:
    """BFCL's ``multi_turn_checker`` on the first ``turns`` turns of ``result``."""
    from bfcl_eval.eval_checker.multi_turn_eval import multi_turn_utils
    from bfcl_eval.eval_checker.multi_turn_eval.multi_turn_checker import multi_turn_checker

    if len(result) < turns:
        return {"valid": False, "error_message": f"the run ended after {len(result)} of "
                f"{turns} turns (cut short)", "error_type": "multi_turn:force_terminated"}
    name = f"planboard_bench_{next(_names)}"
    test_entry = {key: value for key, value in entry.raw.items() if key != "function"}
    try:
        return multi_turn_checker(_decoded(result[:turns]), entry.ground_truth[:turns],
                                  test_entry, CATEGORY, name)
    finally:
        prefix = re.sub(r"[-./:]", "_", name)
        for key in [key for key in vars(multi_turn_utils) if key.startswith(prefix)]:
            del vars(multi_turn_utils)[key]


def score_result(entry: Entry, result: list[Any]) -> EntryScore:
    """The entry's verdict (all turns) and its turns right in a row."""
    total = len(entry.ground_truth)
    whole = check_turns(entry, result, total) if len(result) == total else {
        "valid": False, "error_message": f"{len(result)} turns in the result, {total} in "
        "the ground truth (cut short)"}
    if whole.get("valid"):
        return EntryScore(entry.id, True, total, total)
    right = 0
    for turns in range(1, min(total, len(result)) + 1):
        if not check_turns(entry, result, turns).get("valid"):
            break
        right = turns
    return EntryScore(entry.id, False, right, total,
                      str(whole.get("error_message") or whole.get("error_type") or ""))

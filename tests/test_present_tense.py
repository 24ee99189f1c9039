"""The engine's text states its rules in the present: no diary in core/.

A docstring or comment says what a rule is and why, not which issue asked for it, which
work session found it, or which model once misbehaved; that history belongs to the
CHANGELOG and to the commit log.
"""

from __future__ import annotations

import re

import pytest

from tests.support import REPO

DIARY = {
    "an issue number": re.compile(r"\bissue\s*#?\d+", re.IGNORECASE),
    "a work session": re.compile(r"\b(this|last|previous|earlier|a) session('s)? (found|saw|"
                                 r"measured|fixed|tried)\b|\bsession \d+\b", re.IGNORECASE),
    "a model's size as a witness": re.compile(r"\b\d+(\.\d+)?B model\b"),
}


def _core_lines() -> list[tuple[str, int, str]]:
    return [(str(path.relative_to(REPO)), number, line)
            for path in sorted((REPO / "core").rglob("*.py"))
            for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)]


@pytest.mark.parametrize("what", sorted(DIARY))
def test_core_text_tells_no_history(what):
    pattern = DIARY[what]
    found = [f"{path}:{number}: {line.strip()}" for path, number, line in _core_lines()
             if pattern.search(line)]
    assert not found, f"core/ mentions {what}:\n" + "\n".join(found)


@pytest.mark.parametrize(("line", "what"), [
    ("# fixed in issue 13", "an issue number"),
    ("a 1.5B model once answered", "a model's size as a witness"),
    ("the last session found this", "a work session"),
])
def test_the_diary_patterns_catch_what_they_name(line, what):
    assert DIARY[what].search(line)

"""A request's language is decided once, where it enters, and carried from there.

The places that decide it are listed here by module; any other module of core/, ui/ or
pages/ that calls ``detect_language`` guesses again, and fails this test.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FACES_AND_CORE = ("core", "ui", "pages")

# module -> why it decides the language
DECIDERS = {
    "core/runs/session.py": "a request enters (route, questions, draft)",
    "core/planning/followup.py": "a follow-up enters",
    "core/plan/model.py": "a plan given no language (a bare goal, a plan file or record "
                          "written before plans held one) has it decided once",
}


def _python_files() -> list[Path]:
    return sorted(path for folder in FACES_AND_CORE for path in (ROOT / folder).rglob("*.py"))


def _detections(path: Path) -> list[int]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return [node.lineno for node in ast.walk(tree) if isinstance(node, ast.Call)
            and getattr(node.func, "id", getattr(node.func, "attr", None)) == "detect_language"]


def test_only_the_entry_points_detect_the_language():
    found = {str(path.relative_to(ROOT)): lines for path in _python_files()
             if (lines := _detections(path))}
    guessing = {module: lines for module, lines in found.items() if module not in DECIDERS}
    assert not guessing, (
        "these modules guess the request's language again: take it from the plan, the run "
        f"or the request instead: {guessing}")
    assert sum(len(lines) for lines in found.values()) <= 4, found
    assert set(found) == set(DECIDERS), "a listed entry point no longer decides: drop it"

"""What one entry's run leaves: its calls in BFCL's result format, and what each turn cost.

One JSON line per entry: ``{"id", "result", "mode", "turns": [...]}``. ``result`` is what
BFCL's checker reads (per turn, per step, the call strings); ``turns`` holds per turn the
model calls, prompt and completion tokens, wall seconds, and for a PlanBoard turn the run,
its status and the warnings its plan got; ``error`` says why an entry stopped before its
last turn. A line is written whole, once its entry ended, so that ``--resume`` finds only
finished entries in a file.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

__all__ = ["EntryRun", "TurnRecord", "append_line", "read_lines"]


@dataclass
class TurnRecord:
    """One turn: its steps' calls and what it cost."""

    steps: list[list[str]] = field(default_factory=list)
    model_calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    wall_s: float = 0.0
    run_id: str | None = None
    status: str | None = None
    warnings: list[str] = field(default_factory=list)  # what the plan's checks left on it

    def cost(self) -> dict[str, Any]:
        """The turn's figures, without its calls (those are in ``result``)."""
        figures = asdict(self)
        del figures["steps"]
        return {key: value for key, value in figures.items() if value not in (None, [])}


@dataclass
class EntryRun:
    """One entry under one mode: its turns so far, and why it stopped early if it did."""

    entry_id: str
    mode: str
    turns: list[TurnRecord] = field(default_factory=list)
    error: str = ""
    settings: dict[str, Any] = field(default_factory=dict)

    def line(self) -> dict[str, Any]:
        """The JSON line of BFCL's result format, with the costs beside it."""
        data: dict[str, Any] = {"id": self.entry_id,
                                "result": [turn.steps for turn in self.turns],
                                "mode": self.mode, "settings": self.settings,
                                "turns": [turn.cost() for turn in self.turns]}
        if self.error:
            data["error"] = self.error
        return data


def append_line(path: Path, run: EntryRun) -> None:
    """Append ``run``'s line to ``path`` in one write."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a", encoding="utf-8") as out:
        out.write(json.dumps(run.line(), ensure_ascii=False) + "\n")
        out.flush()


def read_lines(path: Path) -> list[dict[str, Any]]:
    """The lines of a result file (none when it does not exist yet); ValueError names a
    line that is not a result."""
    if not path.exists():
        return []
    lines = []
    for number, text in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not text.strip():
            continue
        try:
            data = json.loads(text)
        except ValueError:
            data = None
        if not isinstance(data, dict) or "id" not in data or not isinstance(
                data.get("result"), list):
            raise ValueError(f"{path}:{number} is not a BFCL result line "
                             '({"id", "result": [...]})')
        lines.append(data)
    return lines

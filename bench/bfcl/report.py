"""The table of result files: BFCL's entry accuracy and turns right in a row per file, on
the entries every file holds, with what a turn cost.

A row is one result file (one way of running: PlanBoard with the weak-model checks on or
off, with constrained output, the plain loop). Rows compare only the entries all files
hold, so that a measurement gathered over several sittings, cut short in one mode, still
compares like with like; the table says how many that is. Where the files hold different
entries, :func:`own_table` gives each row on every entry it ran, its own sample size in
the row. The per-turn columns are means over every turn those entries ran.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench.bfcl.data import Entry, entries
from bench.bfcl.score import EntryScore, score_result
from bench.tables import Table

__all__ = ["BFCL_PUBLISHED", "Row", "different_entries", "own_table", "row_of", "table"]

BFCL_PUBLISHED = ("BFCL v4 leaderboard, multi_turn_base: Qwen2.5-1.5B-Instruct 4.0 (function "
                  "calling) and 1.5 (prompt), the closest published model to the local "
                  "Qwen2.5-Coder-1.5B; Qwen3-1.7B 15; xLAM-2-1b 45.5; the best 82.5.")


@dataclass
class Row:
    """One file's figures on the shared entries."""

    name: str
    scores: list[EntryScore]
    turns: list[dict[str, Any]]

    def cells(self) -> list[str]:
        """Formatted: entries, accuracy, turns right in a row, calls, prompt tokens and
        wall seconds per turn."""
        count = len(self.scores)
        right = sum(score.valid for score in self.scores)
        in_a_row = sum(score.turns_right for score in self.scores)
        total = sum(score.turns for score in self.scores)
        ran = max(1, len(self.turns))

        def mean(key: str) -> float:
            return sum(float(turn.get(key) or 0) for turn in self.turns) / ran

        return [self.name, str(count), f"{right}/{count} ({100 * right / max(1, count):.1f}%)",
                f"{in_a_row}/{total} ({in_a_row / max(1, count):.2f} per entry)",
                f"{mean('model_calls'):.1f}", f"{mean('prompt_tokens'):,.0f}",
                f"{mean('wall_s'):.0f}"]


def row_of(name: str, lines: list[dict[str, Any]], chosen: list[Entry]) -> Row:
    """The figures of ``lines`` on the ``chosen`` entries."""
    by_id = {line["id"]: line for line in lines}
    scores, turns = [], []
    for entry in chosen:
        line = by_id[entry.id]
        scores.append(score_result(entry, line["result"]))
        turns.extend(line.get("turns") or [])
    return Row(name, scores, turns)


def label(path: Path, lines: list[dict[str, Any]]) -> str:
    """A row's name: the way its file was run, as its lines record it."""
    settings = lines[0].get("settings") or {} if lines else {}
    if settings.get("mode") == "loop":
        return "plain tool-calling loop"
    parts = [f"weak-model checks {settings.get('weak_checks', '?')}"]
    if settings.get("constrained") == "on":
        parts.append("constrained output")
    return f"PlanBoard, {', '.join(parts)} ({path.name})"


_COLUMNS = ["row", "entries", "entry accuracy", "turns right in a row", "model calls / turn",
            "prompt tokens / turn", "wall s / turn"]


def table(files: dict[Path, list[dict[str, Any]]]) -> Table:
    """One row per file, on the entries every file holds."""
    shared = set.intersection(*({line["id"] for line in lines} for lines in files.values()))
    chosen = [entry for entry in entries() if entry.id in shared]
    result = Table(f"BFCL v4 multi_turn_base, {len(chosen)} entries every row ran", _COLUMNS,
                   timed=False)
    for path, lines in files.items():
        result.rows.append(row_of(label(path, lines), lines, chosen).cells())
    result.notes.append(BFCL_PUBLISHED)
    result.notes.append("Entries: " + _numbers(chosen) + ".")
    return result


def own_table(files: dict[Path, list[dict[str, Any]]]) -> Table:
    """One row per file, on every entry that file holds: rows of different sample sizes,
    which compare like with like only where :func:`table` says so."""
    result = Table("BFCL v4 multi_turn_base, each row on every entry it ran", _COLUMNS,
                   timed=False)
    for path, lines in files.items():
        held = {line["id"] for line in lines}
        chosen = [entry for entry in entries() if entry.id in held]
        name = label(path, lines)
        result.rows.append(row_of(name, lines, chosen).cells())
        result.notes.append(f"{name}: entries {_numbers(chosen)}.")
    result.notes.append(BFCL_PUBLISHED)
    return result


def different_entries(files: dict[Path, list[dict[str, Any]]]) -> bool:
    """Whether the files hold different entries (then :func:`table` leaves some out)."""
    return len({frozenset(line["id"] for line in lines) for lines in files.values()}) > 1


def _numbers(chosen: list[Entry]) -> str:
    return ", ".join(str(entry.number) for entry in chosen)

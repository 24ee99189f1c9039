"""Benchmark tables: one shape, printed as aligned text or as a GitHub Markdown table.

A benchmark builds a :class:`Table` (a title saying what was measured, the columns, rows of
formatted cells, notes) and prints ``table.text()`` or, under ``--markdown``,
``table.markdown()``: a one-line heading that says what was measured, on what machine and
when, the command that measured it, and the table. Cells are text already formatted by the
benchmark, so both forms show the same figures.
"""

from __future__ import annotations

import datetime
import os
import platform
from dataclasses import dataclass, field

__all__ = ["Table", "load_average", "machine", "markdown_table", "measured_on"]


def machine() -> str:
    """The machine a benchmark runs on: architecture, cores, Python (no host name)."""
    return (f"{platform.machine() or 'unknown'}, {os.cpu_count() or '?'} cores, "
            f"Python {platform.python_version()}")


def load_average() -> float | None:
    """The one-minute load average, or None where the platform has none."""
    try:
        return os.getloadavg()[0]
    except OSError:
        return None


def measured_on(command: str, load: float | None = None) -> str:
    """The line under a Markdown heading: the command, and for a timed benchmark the load
    when it started (other work on the machine pushes times up)."""
    if load is None:
        return f"`{command}`."
    return f"`{command}`; load average {load:.2f} when it started."


def _escape(cell: str) -> str:
    return cell.replace("|", "\\|").replace("\n", " ")


def markdown_table(columns: list[str], rows: list[list[str]], align: str = "") -> str:
    """A GitHub table; ``align`` holds ``l`` or ``r`` per column (default: the first column
    left, the others right). A row shorter than the columns is padded with empty cells."""
    align = align or "l" + "r" * (len(columns) - 1)
    lines = ["| " + " | ".join(_escape(c) for c in columns) + " |",
             "| " + " | ".join("---:" if a == "r" else "---" for a in align) + " |"]
    for row in rows:
        cells = [*row, *[""] * (len(columns) - len(row))]
        lines.append("| " + " | ".join(_escape(c) for c in cells) + " |")
    return "\n".join(lines)


@dataclass
class Table:
    """A benchmark's result: ``title`` says what was measured; ``rows`` hold formatted
    cells (a row may stop early, as ``["PostgreSQL", "skipped: why"]`` does); ``notes``
    are sentences printed under the table; ``timed`` is false for a table of counts or
    sizes, which the machine's load does not change. The load average is read when the
    table is made: make it before measuring."""

    title: str
    columns: list[str]
    rows: list[list[str]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    align: str = ""
    timed: bool = True
    load: float | None = field(default_factory=load_average)

    def _align(self) -> str:
        return self.align or "l" + "r" * (len(self.columns) - 1)

    def text(self) -> str:
        """The table as aligned plain text, ``## title`` first, cells joined by `` | ``."""
        # the last cell of a short row ("skipped: why") spans the rest: it sets no width
        widths = [max(len(c) for c in [col, *(row[i] for row in self.rows if i < len(row) and (
            len(row) == len(self.columns) or i < len(row) - 1))])
            for i, col in enumerate(self.columns)]
        align = self._align()

        def line(cells: list[str]) -> str:
            return " | ".join(cell.ljust(widths[i]) if align[i] == "l" or len(cells) < len(
                self.columns) else cell.rjust(widths[i]) for i, cell in enumerate(cells))

        return "\n".join(["", f"## {self.title}", line(self.columns),
                          *(line(row).rstrip() for row in self.rows), *self.notes])

    def markdown(self, command: str, date: datetime.date | None = None) -> str:
        """The table in Markdown: a heading with what was measured, on what and when, the
        command, the table and the notes (one paragraph each)."""
        day = (date or datetime.date.today()).isoformat()
        parts = [f"### {self.title} — {machine()}, {day}",
                 measured_on(command, self.load if self.timed else None),
                 markdown_table(self.columns, self.rows, self._align()), *self.notes]
        return "\n\n".join(parts) + "\n"

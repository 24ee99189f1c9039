"""Parser robustness benchmark: hostile planner replies, parsed and validated, timed.

``python -m bench.parser [--per-category N]`` feeds the generated replies of
``tests/support/hostile_plans.py`` (deep nesting, floods of tags and fences, huge strings, odd and
duplicate ids, broken text, long plans, deep conditions) to ``parse_plan`` and
``Plan.validate`` and prints, per category, how many ended in a plan, in the project's own
error or in anything else, the largest input, and the slowest and median times
(``--markdown``: as a GitHub table).
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections import defaultdict

from bench.tables import Table
from core.errors import PlanBoardError
from core.plan.parse import parse_plan
from tests.support.hostile_plans import hostile_replies

_SLOW_S = 1.0
_MB = 1024 * 1024  # the budget holds for inputs up to this size


def _run_one(reply: str) -> tuple[str, float]:
    started = time.perf_counter()
    try:
        plan = parse_plan(reply, "")
        plan.validate()
        plan.to_json().encode("utf-8")
        outcome = "plan"
    except PlanBoardError:
        outcome = "own error"
    except Exception as exc:  # counting what escapes is the point
        outcome = f"other: {type(exc).__name__}"
    return outcome, time.perf_counter() - started


def measure(per_category: int) -> tuple[Table, int]:
    """The table of outcomes and times per category, and how many inputs escaped with a
    foreign exception or were slow."""
    times: dict[str, list[float]] = defaultdict(list)
    slow: dict[str, int] = defaultdict(int)
    outcomes: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    largest: dict[str, int] = defaultdict(int)
    table = Table("", ["category", "inputs", "plans", "own err", "other", "max KB", "p50 ms",
                       "max ms", "slow"])  # made first: it reads the load as measuring starts
    for category, reply in hostile_replies(per_category):
        outcome, seconds = _run_one(reply)
        size = len(reply.encode("utf-8", "replace"))
        times[category].append(seconds)
        outcomes[category][outcome] += 1
        largest[category] = max(largest[category], size)
        slow[category] += seconds > _SLOW_S and size <= _MB
    total = sum(len(s) for s in times.values())
    table.title = f"Hostile planner replies: {total:,} inputs parsed and validated"
    bad = 0
    for category, seconds in times.items():
        counts = outcomes[category]
        other = sum(n for name, n in counts.items() if name.startswith("other"))
        bad += other + slow[category]
        table.rows.append([
            category, str(len(seconds)), str(counts["plan"]), str(counts["own error"]),
            str(other), f"{largest[category] / 1024:.0f}",
            f"{statistics.median(seconds) * 1000:.1f}", f"{max(seconds) * 1000:.1f}",
            str(slow[category])])
    table.notes.append(f"{total} inputs; {bad} escaped with a foreign exception or took over "
                       f"{_SLOW_S:.0f} s (slow: inputs up to 1 MB over {_SLOW_S:.0f} s).")
    for category, counts in outcomes.items():
        for name, n in counts.items():
            if name.startswith("other"):
                table.notes.append(f"{category}: {n} × {name}")
    return table, bad


def main(argv: list[str] | None = None) -> int:
    """Print the table; exit 1 when an input escaped with a foreign exception or was slow."""
    parser = argparse.ArgumentParser(prog="python -m bench.parser", description=__doc__)
    parser.add_argument("--per-category", type=int, default=300)
    parser.add_argument("--markdown", action="store_true",
                        help="print a GitHub Markdown table headed by what, on what and when")
    args = parser.parse_args(argv)
    table, bad = measure(args.per_category)
    command = "python -m bench.parser"
    if args.per_category != 300:
        command += f" --per-category {args.per_category}"
    print(table.markdown(command) if args.markdown else table.text())
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main())

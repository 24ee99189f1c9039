"""Parser robustness benchmark: hostile planner replies, parsed and validated, timed.

``python -m bench.parser [--per-category N]`` feeds the generated replies of
``tests/hostile_plans.py`` (deep nesting, floods of tags and fences, huge strings, odd and
duplicate ids, broken text, long plans, deep conditions) to ``parse_plan`` and
``Plan.validate`` and prints, per category, how many ended in a plan, in the project's own
error or in anything else, the largest input, and the slowest and median times.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections import defaultdict

from core.errors import PlanBoardError
from core.plan.parse import parse_plan
from tests.hostile_plans import hostile_replies

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


def main(argv: list[str] | None = None) -> int:
    """Print the table; exit 1 when an input escaped with a foreign exception or was slow."""
    parser = argparse.ArgumentParser(prog="python -m bench.parser", description=__doc__)
    parser.add_argument("--per-category", type=int, default=300)
    args = parser.parse_args(argv)
    times: dict[str, list[float]] = defaultdict(list)
    slow: dict[str, int] = defaultdict(int)
    outcomes: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    largest: dict[str, int] = defaultdict(int)
    for category, reply in hostile_replies(args.per_category):
        outcome, seconds = _run_one(reply)
        size = len(reply.encode("utf-8", "replace"))
        times[category].append(seconds)
        outcomes[category][outcome] += 1
        largest[category] = max(largest[category], size)
        slow[category] += seconds > _SLOW_S and size <= _MB
    header = (f"{'category':<14} {'inputs':>6} {'plans':>6} {'own err':>7} {'other':>6} "
              f"{'max KB':>7} {'p50 ms':>7} {'max ms':>7} {'slow':>5}")
    print(header)
    print("-" * len(header))
    bad = 0
    for category, seconds in times.items():
        counts = outcomes[category]
        other = sum(n for name, n in counts.items() if name.startswith("other"))
        bad += other + slow[category]
        print(f"{category:<14} {len(seconds):>6} {counts['plan']:>6} {counts['own error']:>7} "
              f"{other:>6} {largest[category] / 1024:>7.0f} "
              f"{statistics.median(seconds) * 1000:>7.1f} {max(seconds) * 1000:>7.1f} "
              f"{slow[category]:>5}")
    total = sum(len(s) for s in times.values())
    print(f"\n{total} inputs; {bad} escaped with a foreign exception or took over "
          f"{_SLOW_S:.0f} s (slow: inputs up to 1 MB over {_SLOW_S:.0f} s)")
    for category, counts in outcomes.items():
        for name, n in counts.items():
            if name.startswith("other"):
                print(f"  {category}: {n} × {name}")
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main())

"""How the plan page scales: render time of a 100-step plan against a 5-step plan.

Renders the real page (app.py through AppTest: table, graph, validation, metrics) with a
plan preset in the session, several times each, and prints the median and the ratio.
Run with ``python -m bench.ui_plan_page`` (``--markdown``: as a GitHub table).
"""

from __future__ import annotations

import argparse
import logging
import os
import statistics
import tempfile
import time
from pathlib import Path

from streamlit.testing.v1 import AppTest

from bench.tables import Table, load_average
from core.plan.model import Plan, Step

APP = str(Path(__file__).resolve().parents[1] / "app.py")


def layered_plan(steps: int) -> Plan:
    """A plan of calculator steps in layers of four, each depending on the previous layer."""
    body = []
    for index in range(1, steps):
        layer = (index - 1) // 4
        deps = [f"s{j}" for j in range(max(1, 4 * (layer - 1) + 1), 4 * layer + 1)]
        body.append(Step(id=f"s{index}", description=f"Compute part {index}",
                         tool="calculate", args={"expression": f"{index} * 2"},
                         depends_on=deps[:2]))
    synthesis = Step(id=f"s{steps}", description="Summarise",
                     depends_on=[s.id for s in body[-4:]])
    return Plan(goal=f"a {steps}-step plan", steps=[*body, synthesis])


def render_seconds(plan: Plan) -> float:
    """Seconds for one full render of the plan page with ``plan`` under review."""
    at = AppTest.from_file(APP, default_timeout=120)
    at.session_state["plan"] = plan
    at.session_state["plan_revision"] = 1
    started = time.perf_counter()
    at.run()
    elapsed = time.perf_counter() - started
    if at.exception:
        raise SystemExit(f"the plan page failed: {at.exception[0].value}")
    rows = len(at.dataframe[0].value)
    if rows != len(plan.steps):
        raise SystemExit(f"the plan table shows {rows} rows for {len(plan.steps)} steps")
    return elapsed


def main(argv: list[str] | None = None) -> int:
    """Print the median render time of small and large plans and their ratio."""
    parser = argparse.ArgumentParser(prog="python -m bench.ui_plan_page")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--markdown", action="store_true",
                        help="print a GitHub Markdown table headed by what, on what and when")
    args = parser.parse_args(argv)
    logging.getLogger("streamlit").setLevel(logging.ERROR)  # bare-mode notices, not results
    os.environ.setdefault("PLANBOARD_HOME", tempfile.mkdtemp(prefix="planboard-bench-"))
    load = load_average()
    render_seconds(layered_plan(5))  # warm-up: imports and caches
    medians = {}
    for size in (5, 100):
        plan = layered_plan(size)
        assert not plan.validate(), plan.validate()
        medians[size] = statistics.median(render_seconds(plan) for _ in range(args.repeat))
    table = render_table(medians, args.repeat, load)
    command = "python -m bench.ui_plan_page"
    if args.repeat != 5:
        command += f" --repeat {args.repeat}"
    print(table.markdown(command) if args.markdown else table.text())
    return 0


def render_table(medians: dict[int, float], repeat: int, load: float | None = None) -> Table:
    """Median render seconds per plan size, with the ratio to the smallest plan (``load``:
    the load average when measuring started)."""
    smallest = medians[min(medians)]
    table = Table(f"Plan page render time (AppTest, median of {repeat} runs)",
                  ["steps", "ms", f"vs {min(medians)} steps"], align="rrr", load=load)
    for size, seconds in medians.items():
        table.rows.append([str(size), f"{seconds * 1000:.1f}", f"{seconds / smallest:.2f}"])
    return table


if __name__ == "__main__":
    raise SystemExit(main())

"""How the plan page scales: render time of a 100-step plan, and of a 60-step plan in 12
phases of 5, against a 5-step plan.

Renders the real page (dashboard.py through AppTest: table, graph, validation, metrics) with a
plan preset in the session, several times each, and prints the median and the ratio. A
plan in phases is reviewed as one table per phase and opens with only its current phase
unfolded in the graph (the target: within 3 x the 5-step plan).
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
from core.plan.model import Phase, Plan, Step

APP = str(Path(__file__).resolve().parents[1] / "dashboard.py")


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


def phased_plan(phases: int, per_phase: int) -> Plan:
    """A plan of ``phases`` phases in a row, each of ``per_phase`` calculator steps in a
    chain; the last step of the last phase answers."""
    steps: list[Step] = []
    for number in range(1, phases + 1):
        for _ in range(per_phase):
            index = len(steps) + 1
            steps.append(Step(id=f"s{index}", description=f"Compute part {index}",
                              tool="calculate", args={"expression": f"{index} * 2"},
                              depends_on=[f"s{index - 1}"] if index > 1 else [],
                              phase=f"p{number}"))
    steps[-1] = steps[-1].model_copy(update={"tool": None, "args": None,
                                             "description": "Summarise"})
    return Plan(goal=f"a {len(steps)}-step plan in {phases} phases", phases=[
        Phase(id=f"p{n}", title=f"Stage {n}", depends_on=[f"p{n - 1}"] if n > 1 else [])
        for n in range(1, phases + 1)], steps=steps)


PLANS = {"5": lambda: layered_plan(5), "100": lambda: layered_plan(100),
         "60 in 12 phases": lambda: phased_plan(12, 5)}
TARGET = 3.0  # the 60-step phased plan renders within this many times the 5-step plan


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
    rows = sum(len(frame.value) for frame in at.dataframe)  # a table per phase, or one
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
    for name, make in PLANS.items():
        plan = make()
        assert not plan.validate(), plan.validate()
        medians[name] = statistics.median(render_seconds(plan) for _ in range(args.repeat))
    table = render_table(medians, args.repeat, load)
    command = "python -m bench.ui_plan_page"
    if args.repeat != 5:
        command += f" --repeat {args.repeat}"
    print(table.markdown(command) if args.markdown else table.text())
    return 0


def render_table(medians: dict[str, float], repeat: int, load: float | None = None) -> Table:
    """Median render seconds per plan, with the ratio to the first (smallest) plan
    (``load``: the load average when measuring started)."""
    first = next(iter(medians))
    smallest = medians[first]
    table = Table(f"Plan page render time (AppTest, median of {repeat} runs)",
                  ["steps", "ms", f"vs {first} steps"], align="rrr", load=load)
    for name, seconds in medians.items():
        table.rows.append([str(name), f"{seconds * 1000:.1f}", f"{seconds / smallest:.2f}"])
    if any("phases" in str(name) for name in medians):
        table.notes.append(f"target: the plan in phases within {TARGET:.0f} x the {first}-step "
                           "plan (one table per phase, the graph open on the current phase)")
    return table


if __name__ == "__main__":
    raise SystemExit(main())

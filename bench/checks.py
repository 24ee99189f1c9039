"""Plan check pipeline benchmark: 1 MB planner replies through every check, in CPU seconds.

``python -m bench.checks [--repeat N] [--markdown]`` builds planner replies of about 1 MB in
three shapes (one step with a huge description, 200 steps of 5 kB each, one huge argument)
and puts each through what a drafted plan goes through, with the 100-tool catalogue of
``bench/catalogues.py``: parsing, tool-name normalisation, and the draft stage's whole
:class:`core.planning.checks.Pipeline` (repairs and validation, problems, then the final
repairs), with the checks for weak models on and off. It prints the CPU seconds of the
pipeline alone and of the whole, the best of ``--repeat`` runs, against a budget of 0.3 s
(exit 1 when a row is over it).
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Callable
from typing import Any

from bench.catalogues import catalogue_registry
from bench.tables import Table
from core.errors import PlanBoardError
from core.plan.parse import parse_plan
from core.planning.checks import Pipeline
from core.planning.checks.shape import CheckContext
from core.planning.planner import normalise_tool_names
from core.tools.registry import ToolRegistry

_BUDGET_S = 0.3
_MB = 1_000_000
_TOOLS = 100
REQUEST = "Check the order service and the payments, and tell me what to scale."
_WORDS = ("the order service answered slowly at peak while payments waited on the "
          "database pool, so look at latency, errors, replicas and queue depth ")


def _prose(size: int) -> str:
    return (_WORDS * (size // len(_WORDS) + 1))[:size]


def _reply(steps: list[dict[str, Any]]) -> str:
    return json.dumps({"goal": REQUEST, "steps": steps})


def one_long_description() -> str:
    """A step whose description is almost all of the megabyte (a model that ran on)."""
    return _reply([
        {"id": "s1", "description": _prose(_MB - 400), "tool": "check_health",
         "args": {"service": "order-service"}},
        {"id": "s2", "description": "Summarise the results", "tool": None,
         "depends_on": ["s1"]}])


def many_steps() -> str:
    """200 steps of 5 kB each (the description and the rest), every tenth without a tool."""
    steps: list[dict[str, Any]] = []
    for n in range(1, 201):
        tool = None if n % 10 == 0 else "check_health"
        step: dict[str, Any] = {"id": f"s{n}", "description": _prose(4_880), "tool": tool,
                                "depends_on": [f"s{n - 1}"] if n > 1 else []}
        if tool:
            step["args"] = {"service": "order-service"}
        steps.append(step)
    return _reply(steps)


def one_long_argument() -> str:
    """A knowledge search whose query is almost all of the megabyte."""
    return _reply([
        {"id": "s1", "description": "Search the runbooks", "tool": "search_knowledge",
         "args": {"query": _prose(_MB - 400)}},
        {"id": "s2", "description": "Summarise the results", "tool": None,
         "depends_on": ["s1"]}])


SHAPES: dict[str, Callable[[], str]] = {
    "one 1 MB description": one_long_description,
    "200 steps of 5 kB": many_steps,
    "one 1 MB argument": one_long_argument,
}


def _cpu(work: Callable[[], object]) -> float:
    started = time.process_time()
    work()
    return time.process_time() - started


def run_once(reply: str, registry: ToolRegistry, *, weak: bool) -> tuple[float, float, str]:
    """CPU seconds of parsing (with the tool names) and of the draft stage's pipeline, and
    how it ended (``plan``, ``plan, N warnings`` or the project's own error)."""
    plan_box: list[Any] = []
    parsing = _cpu(lambda: plan_box.append(
        normalise_tool_names(parse_plan(reply, REQUEST, "en"), registry)))
    checks = Pipeline(CheckContext(request=REQUEST, language="en", registry=registry,
                                   stage="draft", weak_models=weak))
    ended: list[str] = []

    def pipeline() -> None:
        try:
            plan = checks.accept(plan_box[0])
        except PlanBoardError as exc:
            ended.append(f"sent back: {str(exc)[:40]}")
            return
        checks.review(plan)
        checks.settle(plan)
        ended.append(f"plan, {len(plan.warnings)} warnings" if plan.warnings else "plan")

    return parsing, _cpu(pipeline), ended[0]


def measure(repeat: int) -> tuple[Table, int]:
    """The table, and how many rows were over the budget."""
    registry = catalogue_registry(_TOOLS)
    table = Table(f"Every plan check on a 1 MB planner reply, {_TOOLS} tools, CPU seconds "
                  f"(best of {repeat})",
                  ["reply", "weak checks", "KB", "parse s", "checks s", "total s", "ended"])
    over = 0
    for name, make in SHAPES.items():
        reply = make()
        for weak in (True, False):
            runs = [run_once(reply, registry, weak=weak) for _ in range(repeat)]
            parsing = min(r[0] for r in runs)
            checking = min(r[1] for r in runs)
            total = min(r[0] + r[1] for r in runs)
            over += total > _BUDGET_S
            table.rows.append([name, "on" if weak else "off",
                               f"{len(reply.encode()) / 1024:.0f}", f"{parsing:.3f}",
                               f"{checking:.3f}", f"{total:.3f}", runs[0][2]])
    table.notes.append(f"Budget: {_BUDGET_S} s of CPU for parsing and every check together; "
                       f"{over} row(s) over it.")
    return table, over


def main(argv: list[str] | None = None) -> int:
    """Print the table; exit 1 when a reply took more than the budget."""
    parser = argparse.ArgumentParser(prog="python -m bench.checks", description=__doc__)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--markdown", action="store_true",
                        help="print a GitHub Markdown table headed by what, on what and when")
    args = parser.parse_args(argv)
    table, over = measure(max(1, args.repeat))
    command = "python -m bench.checks" + (f" --repeat {args.repeat}" if args.repeat != 3
                                          else "")
    print(table.markdown(command) if args.markdown else table.text())
    return 1 if over else 0


if __name__ == "__main__":
    raise SystemExit(main())

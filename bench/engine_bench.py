"""Engine benchmarks against the fake endpoint with a fixed latency per LLM call.

Prints three tables: parallel wall time against the critical-path bound, LLM calls per
plan shape (predicted and measured), and the prompt size of the last step of a 20-step
chain against the first (context folding keeps it flat). ``--markdown`` prints them as
GitHub tables (bench/tables.py).
"""

from __future__ import annotations

import argparse
import time
from typing import Any

from bench.tables import Table
from core.execution.executor import predict_llm_calls
from core.execution.scheduler import RunOptions, run_plan
from core.llm.client import OpenAIChatModel
from core.llm.engine import Engine
from core.plan.model import Plan, Step
from core.tools.builtin import register_builtin_tools
from core.tools.registry import ToolRegistry, make_tool
from tests.support.fake_openai import FakeOpenAI, text, tool_call


def fetch_report(page: int) -> dict:
    """Return one page of a long report (a large result, to test context folding).

    Args:
        page: the page number.
    """
    return {"page": page, "body": f"page {page}: " + "lorem ipsum " * 400}


def _registry() -> ToolRegistry:
    registry = ToolRegistry()
    register_builtin_tools(registry)
    registry.add(make_tool(fetch_report, read_only=True))
    return registry


def _responder(body: dict[str, Any]) -> Any:
    """Call the one tool offered (with plausible arguments), or answer in text."""
    tools = body.get("tools") or []
    if len(tools) == 1:
        name = tools[0]["function"]["name"]
        args = {"expression": "6 * 7"} if name == "calculate" else {"page": 1}
        return tool_call(name, args)
    return text("All steps are done.")


def _synthesis(ids: list[str]) -> Step:
    return Step(id=f"s{len(ids) + 1}", description="Summarise", depends_on=ids)


def _independent_plan(n: int) -> Plan:
    steps = [Step(id=f"s{i}", description=f"compute {i}", tool="calculate") for i in
             range(1, n + 1)]
    return Plan(goal="parallel", steps=[*steps, _synthesis([s.id for s in steps])])


def _chain_plan(n: int) -> Plan:
    steps = [
        Step(id=f"s{i}", description=f"read page {i}", tool="fetch_report",
             depends_on=[f"s{i - 1}"] if i > 1 else [])
        for i in range(1, n + 1)
    ]
    return Plan(goal="chain", steps=[*steps, _synthesis([f"s{n}"])])


_models: dict[int, OpenAIChatModel] = {}


def _model(server: FakeOpenAI) -> OpenAIChatModel:
    """One client per server, warmed up, so that SDK import time is not measured."""
    if server.port not in _models:
        model = OpenAIChatModel(server.settings())
        model.chat([{"role": "user", "content": "warm-up"}])
        _models[server.port] = model
    return _models[server.port]


def _run(server: FakeOpenAI, plan: Plan, max_parallel: int) -> tuple[float, Plan, int]:
    engine = Engine(registry=_registry(), model=_model(server))
    before = len(server.chat_bodies)
    started = time.perf_counter()
    outcome = run_plan(plan, engine, options=RunOptions(max_parallel=max_parallel))
    wall = time.perf_counter() - started
    return wall, outcome.plan, len(server.chat_bodies) - before


def bench_parallel(server: FakeOpenAI, latency: float, n: int) -> Table:
    """Wall time of ``n`` independent model-bound steps, one at a time and all at once,
    against the critical-path bound."""
    bound = _independent_plan(n).critical_path_length() * latency
    table = Table(f"{n} independent LLM-bound steps + synthesis, {latency:.2f}s per call",
                  ["max_parallel", "wall s", "LLM calls", "wall / bound"])
    for parallel in (1, n):
        wall, _, calls = _run(server, _independent_plan(n), parallel)
        table.rows.append([str(parallel), f"{wall:.2f}", str(calls), f"{wall / bound:.2f}"])
    table.notes.append(f"critical-path bound: {bound:.2f}s")
    return table


def bench_calls(server: FakeOpenAI) -> Table:
    """LLM calls per plan shape: predicted before the run and counted at the endpoint."""
    shapes = {
        "3 tool steps, complete args": Plan(goal="g", steps=[
            *(Step(id=f"s{i}", description="c", tool="calculate",
                   args={"expression": f"{i} + 1"}) for i in (1, 2, 3)),
            _synthesis(["s1", "s2", "s3"])]),
        "3 tool steps, missing args": _independent_plan(3),
        "1 reasoning step": Plan(goal="g", steps=[
            Step(id="s1", description="think"), _synthesis(["s1"])]),
    }
    table = Table("LLM calls per plan (planning call not included)",
                  ["plan", "predicted", "measured"], timed=False)
    for name, plan in shapes.items():
        predicted = predict_llm_calls(plan, _registry())
        _, _, calls = _run(server, plan, 4)
        table.rows.append([name, str(predicted), str(calls)])
    return table


def bench_prompt_size(server: FakeOpenAI, n: int) -> Table:
    """Prompt characters along an ``n``-step chain of large results."""
    before = len(server.chat_bodies)
    _run(server, _chain_plan(n), 1)
    bodies = server.chat_bodies[before:]
    sizes = [sum(len(str(m.get("content") or "")) for m in b["messages"]) for b in bodies]
    table = Table(f"Prompt size along a {n}-step chain (each result ~5 kB)",
                  ["step", "prompt chars", "vs s2"], timed=False)
    for index in (1, 2, n // 2, n):
        ratio = sizes[index - 1] / sizes[1]
        table.rows.append([f"s{index}", str(sizes[index - 1]), f"{ratio:.2f}"])
    table.notes.append("s1 has no dependency; every later step sees only its one "
                       f"dependency's result, so s{n} costs what s2 costs instead of growing "
                       "with the history.")
    return table


def engine_tables(latency: float, steps: int) -> list[Table]:
    """The three engine tables, measured against a fake endpoint of ``latency`` s a call."""
    with FakeOpenAI(latency_s=latency, responder=_responder) as server:
        return [bench_parallel(server, latency, steps), bench_calls(server),
                bench_prompt_size(server, 20)]


def main(argv: list[str] | None = None) -> int:
    """Run every engine benchmark, then streamed planning's (bench/planning_stream.py: time
    to the first step against the planning time; bench/read_ahead.py: request to answer
    with read-only steps started while planning), the DBOS ones (bench/durable_bench.py)
    and the workers' (bench/workers_bench.py: the submission of ``run --detach``, two
    workers against one), and print their tables (as Markdown with ``--markdown``)."""
    parser = argparse.ArgumentParser(prog="python -m bench")
    parser.add_argument("--latency", type=float, default=0.25, help="seconds per LLM call")
    parser.add_argument("--steps", type=int, default=4, help="independent steps")
    parser.add_argument("--only", choices=("engine", "planning", "durable", "workers"),
                        help="run only the engine, streamed planning, the DBOS or the "
                        "workers benchmarks")
    parser.add_argument("--pg-url", help="a scratch PostgreSQL database for the DBOS and "
                        "workers benchmarks (default: a throwaway cluster when PostgreSQL is "
                        "installed)")
    parser.add_argument("--markdown", action="store_true",
                        help="print GitHub Markdown tables headed by what, on what and when")
    args = parser.parse_args(argv)
    command = _command(args)
    if args.only in (None, "engine"):
        for table in engine_tables(args.latency, args.steps):
            print(table.markdown(command) if args.markdown else table.text())
    if args.only in (None, "planning"):
        from bench import planning_stream, read_ahead

        for table in (planning_stream.scripted_table(), read_ahead.scripted_table()):
            print(table.markdown(command) if args.markdown else table.text())
    if args.only in (None, "durable"):
        from bench.durable_bench import run_durable_benches  # imports dbos (0.7 s)

        run_durable_benches(args.pg_url, markdown=args.markdown, command=command)
    if args.only in (None, "workers"):
        from bench.workers_bench import run_workers_benches

        run_workers_benches(args.pg_url, markdown=args.markdown, command=command)
    return 0


def _command(args: argparse.Namespace) -> str:
    """The command line that measures what ``args`` ask for (said under each heading)."""
    words = ["python -m bench"]
    if args.only:
        words.append(f"--only {args.only}")
    if args.latency != 0.25:
        words.append(f"--latency {args.latency}")
    if args.steps != 4:
        words.append(f"--steps {args.steps}")
    if args.pg_url:
        words.append("--pg-url URL")  # never the URL itself: it may hold a password
    return " ".join(words)

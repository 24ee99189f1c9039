"""Engine benchmarks against the fake endpoint with a fixed latency per LLM call.

Prints three tables: parallel wall time against the critical-path bound, LLM calls per
plan shape (predicted and measured), and the prompt size of the last step of a 20-step
chain against the first (context folding keeps it flat).
"""

from __future__ import annotations

import argparse
import time
from typing import Any

from core.execution.executor import predict_llm_calls
from core.execution.scheduler import RunOptions, run_plan
from core.llm.client import OpenAIChatModel
from core.llm.engine import Engine
from core.plan.model import Plan, Step
from core.tools.builtin import register_builtin_tools
from core.tools.registry import ToolRegistry, make_tool
from tests.fake_openai import FakeOpenAI, text, tool_call


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


def bench_parallel(server: FakeOpenAI, latency: float, n: int) -> None:
    bound = _independent_plan(n).critical_path_length() * latency
    print(f"\n## {n} independent LLM-bound steps + synthesis, {latency:.2f}s per call")
    print(f"{'max_parallel':>12} | {'wall s':>7} | {'LLM calls':>9} | {'wall / bound':>12}")
    for parallel in (1, n):
        wall, _, calls = _run(server, _independent_plan(n), parallel)
        print(f"{parallel:>12} | {wall:7.2f} | {calls:>9} | {wall / bound:12.2f}")
    print(f"critical-path bound: {bound:.2f}s")


def bench_calls(server: FakeOpenAI) -> None:
    shapes = {
        "3 tool steps, complete args": Plan(goal="g", steps=[
            *(Step(id=f"s{i}", description="c", tool="calculate",
                   args={"expression": f"{i} + 1"}) for i in (1, 2, 3)),
            _synthesis(["s1", "s2", "s3"])]),
        "3 tool steps, missing args": _independent_plan(3),
        "1 reasoning step": Plan(goal="g", steps=[
            Step(id="s1", description="think"), _synthesis(["s1"])]),
    }
    print("\n## LLM calls per plan (planning call not included)")
    print(f"{'plan':<28} | {'predicted':>9} | {'measured':>8}")
    for name, plan in shapes.items():
        predicted = predict_llm_calls(plan, _registry())
        _, _, calls = _run(server, plan, 4)
        print(f"{name:<28} | {predicted:>9} | {calls:>8}")


def bench_prompt_size(server: FakeOpenAI, n: int) -> None:
    before = len(server.chat_bodies)
    _run(server, _chain_plan(n), 1)
    bodies = server.chat_bodies[before:]
    sizes = [sum(len(str(m.get("content") or "")) for m in b["messages"]) for b in bodies]
    print(f"\n## Prompt size along a {n}-step chain (each result ~5 kB)")
    print(f"{'step':>6} | {'prompt chars':>12} | {'vs s2':>6}")
    for index in (1, 2, n // 2, n):
        ratio = sizes[index - 1] / sizes[1]
        print(f"{f's{index}':>6} | {sizes[index - 1]:>12} | {ratio:6.2f}")
    print("s1 has no dependency; every later step sees only its one dependency's result,")
    print(f"so s{n} costs what s2 costs instead of growing with the history.")


def main(argv: list[str] | None = None) -> int:
    """Run every engine benchmark, then the DBOS ones (bench/durable_bench.py), and print
    their tables."""
    parser = argparse.ArgumentParser(prog="python -m bench")
    parser.add_argument("--latency", type=float, default=0.25, help="seconds per LLM call")
    parser.add_argument("--steps", type=int, default=4, help="independent steps")
    parser.add_argument("--only", choices=("engine", "durable"),
                        help="run only the engine or only the DBOS benchmarks")
    parser.add_argument("--pg-url", help="a scratch PostgreSQL database for the DBOS "
                        "benchmarks (default: a throwaway cluster when PostgreSQL is installed)")
    args = parser.parse_args(argv)
    if args.only != "durable":
        with FakeOpenAI(latency_s=args.latency, responder=_responder) as server:
            bench_parallel(server, args.latency, args.steps)
            bench_calls(server)
            bench_prompt_size(server, 20)
    if args.only != "engine":
        from bench.durable_bench import run_durable_benches  # imports dbos (0.7 s)

        run_durable_benches(args.pg_url)
    return 0

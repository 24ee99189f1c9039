"""Streamed planning: when the first step of a plan is known, against the whole planning time.

The planner's reply is streamed from the fake endpoint at a steady pace (a few characters
every few milliseconds, as a model writes tokens); the time to the first step is when the
planner's step listener first hears a step, the planning time when the checked plan is
back. The same reply asked for whole (a server that does not stream) shows its first step
only with the plan. ``--endpoint`` measures the model the environment configures instead
(``OPENAI_BASE_URL`` …, e.g. a local model), once.

    python -m bench.planning_stream [--endpoint] [--markdown]
"""

from __future__ import annotations

import argparse
import json
import time

from bench.tables import Table
from core.llm.client import OpenAIChatModel
from core.llm.engine import Engine
from core.llm.settings import LLMSettings
from core.planning.planner import plan_request
from core.tools.builtin import register_builtin_tools
from core.tools.registry import ToolRegistry
from tests.support.fake_openai import FakeOpenAI, FakeReply, streamed

__all__ = ["endpoint_table", "main", "scripted_table"]

REQUEST = "Work out six sums and tell me every result"
CHUNK_CHARS = 8  # about two tokens a chunk
CHUNK_DELAY_S = 0.04  # 200 characters a second: about 50 tokens a second, a hosted model's pace
_COLUMNS = ["reply", "steps", "replies", "first step s", "plan s", "first / plan"]


def _plan_json(steps: int) -> str:
    work = [{"id": f"s{n}", "description": f"Work out {n} + {n}", "tool": "calculate",
             "args": {"expression": f"{n} + {n}"}, "depends_on": []}
            for n in range(1, steps + 1)]
    answer = {"id": f"s{steps + 1}", "description": "Tell the user every result", "tool": None,
              "depends_on": [step["id"] for step in work]}
    return json.dumps({"goal": REQUEST, "steps": [*work, answer]}, indent=1)


def _registry() -> ToolRegistry:
    registry = ToolRegistry()
    register_builtin_tools(registry)
    return registry


def _timed(model: OpenAIChatModel, registry: ToolRegistry) -> tuple[float, float, int, int]:
    """(seconds to the first step heard, seconds to the checked plan, steps planned, replies
    asked for: a corrective turn is a second one)."""
    first: list[float] = []
    started = time.perf_counter()
    result = plan_request(REQUEST, Engine(registry=registry, model=model), language="en",
                          on_steps=lambda _steps: first or first.append(time.perf_counter()))
    done = time.perf_counter()
    assert result.plan is not None  # plan_request always returns one
    heard = first[0] if first else done
    return heard - started, done - started, len(result.plan.steps), result.attempts


def _row(label: str, timing: tuple[float, float, int, int]) -> list[str]:
    to_first, total, steps, replies = timing
    return [label, str(steps), str(replies), f"{to_first:.2f}", f"{total:.2f}",
            f"{to_first / total:.2f}"]


def scripted_table(steps: int = 6) -> Table:
    """The fake endpoint streaming a plan of ``steps`` tool steps and an answer, and the
    same reply asked for whole after the same wait."""
    plan = _plan_json(steps)
    pace = -(-len(plan) // CHUNK_CHARS) * CHUNK_DELAY_S  # how long the stream takes
    table = Table(f"Time to the first step / planning time, a {steps + 1}-step plan streamed "
                  f"at {CHUNK_CHARS} characters every {CHUNK_DELAY_S * 1000:.0f} ms",
                  _COLUMNS)
    registry = _registry()
    with FakeOpenAI(responder=lambda _body: streamed(
            plan, chunk_chars=CHUNK_CHARS, chunk_delay_s=CHUNK_DELAY_S)) as server:
        model = OpenAIChatModel(server.settings(weak_model_checks=False))
        model.chat([{"role": "user", "content": "warm-up"}])  # SDK import and connection
        table.rows.append(_row("streamed", _timed(model, registry)))
    with FakeOpenAI(streams=False, responder=lambda _body: FakeReply(
            content=plan, delay_s=pace)) as server:
        model = OpenAIChatModel(server.settings(weak_model_checks=False))
        model.chat([{"role": "user", "content": "warm-up"}])
        table.rows.append(_row("whole (server does not stream)", _timed(model, registry)))
    table.notes.append("The first step is on screen (the Plan page, `python -m core plan`) "
                       "when the listener hears it; validation and the plan checks still "
                       "run on the finished plan.")
    return table


def endpoint_table() -> Table:
    """One planning call to the model the environment configures, streamed."""
    settings = LLMSettings.from_env()
    model = OpenAIChatModel(settings)
    table = Table(f"Time to the first step / planning time, {settings.planner_model} at "
                  f"{settings.public_dict().get('base_url')} ({model.profile.name} profile)",
                  _COLUMNS)
    table.rows.append(_row("streamed", _timed(model, _registry())))
    return table


def main(argv: list[str] | None = None) -> int:
    """Print the table (the scripted one, or the configured endpoint's with --endpoint)."""
    parser = argparse.ArgumentParser(prog="python -m bench.planning_stream")
    parser.add_argument("--endpoint", action="store_true",
                        help="measure the model OPENAI_BASE_URL and friends configure, once")
    parser.add_argument("--markdown", action="store_true")
    args = parser.parse_args(argv)
    table = endpoint_table() if args.endpoint else scripted_table()
    command = "python -m bench.planning_stream" + (" --endpoint" if args.endpoint else "")
    print(table.markdown(command) if args.markdown else table.text())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

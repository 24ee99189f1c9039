"""Read ahead: from the request to the answer, with read-only steps started while the planner
writes the plan, against starting them once it is approved.

The fake endpoint streams a plan of slow lookups (a read-only tool that answers after
``READ_S`` seconds, as a search or a database query does) and an answer step at a hosted
model's pace; the plan is approved the moment it is checked (``run --yes``), and the run
executes in this process. With read ahead the lookups start as their JSON arrives, and the
run takes their results.

    python -m bench.read_ahead [--markdown]
"""

from __future__ import annotations

import argparse
import json
import threading
import time

from bench.tables import Table
from core.execution.options import RunOptions
from core.execution.read_ahead import APPROVAL_WAIT_S, ReadAhead, for_version
from core.execution.scheduler import run_plan
from core.llm.client import OpenAIChatModel
from core.llm.engine import Engine
from core.planning.planner import plan_request
from core.tools.registry import ToolRegistry, make_tool
from tests.support.fake_openai import FakeOpenAI, streamed

__all__ = ["main", "scripted_table"]

REQUEST = "Look up four suppliers and tell me which can deliver first"
READS = 4
READ_S = 1.0
CHUNK_CHARS = 8  # about two tokens a chunk
CHUNK_DELAY_S = 0.04  # about 50 tokens a second: a hosted model's pace
_COLUMNS = ["read ahead", "lookups called", "planning s", "request → answer s",
            "answer / without"]


def _plan_json() -> str:
    reads = [{"id": f"s{n}", "description": f"Look up supplier {n}", "tool": "lookup_supplier",
              "args": {"supplier": f"supplier-{n}"}, "depends_on": []}
             for n in range(1, READS + 1)]
    answer = {"id": f"s{READS + 1}", "description": "Say which supplier delivers first",
              "tool": None, "depends_on": [step["id"] for step in reads]}
    return json.dumps({"goal": REQUEST, "steps": [*reads, answer]}, indent=1)


def _registry(calls: list[str]) -> ToolRegistry:
    lock = threading.Lock()

    def lookup_supplier(supplier: str) -> dict:
        """Look up a supplier's delivery time.

        Args:
            supplier: the supplier's name.
        """
        time.sleep(READ_S)
        with lock:
            calls.append(supplier)
        return {"supplier": supplier, "days": 3}

    registry = ToolRegistry()
    registry.add(make_tool(lookup_supplier, read_only=True))
    return registry


def _preview(_steps: list) -> None:
    """The Plan page's preview, which does not read ahead."""


def _timed(server: FakeOpenAI, *, read_ahead: bool) -> list[str]:
    calls: list[str] = []
    registry = _registry(calls)
    plan_text = _plan_json()
    model = OpenAIChatModel(server.settings(weak_model_checks=False))
    model.chat([{"role": "user", "content": "warm-up"}])  # SDK import and connection
    server.script(streamed(plan_text, chunk_chars=CHUNK_CHARS, chunk_delay_s=CHUNK_DELAY_S))
    engine = Engine(registry=registry, model=model)
    reader = ReadAhead(registry) if read_ahead else None
    started = time.perf_counter()
    # the preview listens in both cases: the reply is streamed at the same pace
    result = plan_request(REQUEST, engine, language="en",
                          on_steps=reader.offer if reader is not None else _preview)
    planned = time.perf_counter()
    options = RunOptions(confirm_side_effects=False)
    if reader is not None:
        options.read_ahead = for_version(reader.results(wait_s=APPROVAL_WAIT_S),
                                         result.plan.version)
        reader.close()
    outcome = run_plan(result.plan, engine, options=options)
    done = time.perf_counter()
    assert outcome.status == "completed", outcome.status
    return ["on" if read_ahead else "off", str(len(calls)), f"{planned - started:.2f}",
            f"{done - started:.2f}"]


def scripted_table() -> Table:
    """The same streamed plan, run without and with read ahead."""
    table = Table(f"Read ahead: {READS} lookups of {READ_S:g} s each and an answer, planned at "
                  f"{CHUNK_CHARS} characters every {CHUNK_DELAY_S * 1000:.0f} ms, approved "
                  "at once", _COLUMNS)
    with FakeOpenAI(responder=lambda _body: "Supplier 1 delivers first.") as server:
        rows = [_timed(server, read_ahead=False), _timed(server, read_ahead=True)]
    without = float(rows[0][3])
    for row in rows:
        row.append(f"{float(row[3]) / without:.2f}")
    table.rows.extend(rows)
    table.notes.append("With read ahead each lookup is called once, while the planner writes; "
                       "the run takes the result of the same call. Side effects never start "
                       "before approval.")
    return table


def main(argv: list[str] | None = None) -> int:
    """Print the table."""
    parser = argparse.ArgumentParser(prog="python -m bench.read_ahead")
    parser.add_argument("--markdown", action="store_true")
    args = parser.parse_args(argv)
    table = scripted_table()
    print(table.markdown("python -m bench.read_ahead") if args.markdown else table.text())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Runs a test steers: a gated slow tool and an idempotent refund, a slow plan, the event
kinds of a run, and the wait until a run has read its mailbox."""

from __future__ import annotations

import threading
import time

from dbos import DBOS

from core.llm.engine import Engine
from core.plan.model import Plan, Step
from core.store.run_store import RunStore
from core.tools.builtin import register_builtin_tools
from core.tools.registry import ToolRegistry, current_idempotency_key, make_tool
from tests.support.waiting import DEFAULT_TIMEOUT_S, wait_until


class Gate:
    """A slow tool that blocks until the test opens the gate, and a side-effecting tool
    (idempotent: it keeps its idempotency key, so a resumed run may call it again)."""

    def __init__(self) -> None:
        self.open = threading.Event()
        self.entered = threading.Event()
        self.keys: list[str | None] = []

    def engine(self) -> Engine:
        registry = ToolRegistry()
        register_builtin_tools(registry)

        def slow(label: str) -> dict:
            """Wait until the gate opens, then echo the label.

            Args:
                label: any text.
            """
            self.entered.set()
            self.open.wait(10)
            return {"label": label, "at": time.time()}

        def refund(order_id: str) -> dict:
            """Refund an order (a side effect).

            Args:
                order_id: the order.
            """
            self.keys.append(current_idempotency_key())
            return {"refunded": order_id}

        registry.add(make_tool(slow, read_only=True))
        registry.add(make_tool(refund, idempotent=True))  # it keeps idempotency keys
        return Engine(registry=registry, model=None)


def slow_plan() -> Plan:
    return Plan(goal="slow work", steps=[
        Step(id="s1", description="slow one", tool="slow", args={"label": "a"}),
        Step(id="s2", description="slow two", tool="slow", args={"label": "b"},
             depends_on=["s1"]),
        Step(id="s3", description="add", tool="calculate", args={"expression": "2+3"},
             depends_on=["s2"]),
    ])


def kinds(store: RunStore, run_id: str) -> list[str]:
    return [e.kind for e in store.events(run_id)]


def await_mail_taken(run_id: str, action: str, timeout: float = DEFAULT_TIMEOUT_S) -> None:
    """Block until the run's workflow has taken ``action`` from its mailbox (DBOS records
    every read of it as a step): from then on the run applies it before its next step."""
    wait_until(lambda: action in {step["output"] for step in DBOS.list_workflow_steps(run_id)
                                  if step["function_name"] == "DBOS.recv"},
               timeout, what=f"the run to take {action!r} from its mailbox", poll_s=0.05)

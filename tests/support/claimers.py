"""Claimers racing for one paused run, in threads or in spawned processes.

A spawned process imports this module to find its target, so it imports the store alone
(not a test module with the engine, DBOS and pytest).
"""

from __future__ import annotations

from typing import Any

from core.errors import StoreError
from core.execution.events import RunEvent
from core.store.run_store import RunStore
from tests.support.waiting import DEFAULT_TIMEOUT_S

__all__ = ["claim", "claim_in_a_process"]


def claim(store: RunStore, run_id: str, workflow_id: str) -> str | None:
    """Claim the paused run under ``workflow_id``; None when won, else why it was refused."""
    try:
        store.claim_run(run_id, {"paused", "interrupted"}, workflow_id=workflow_id,
                        events=[RunEvent(kind="resumed", data={"by": workflow_id})])
    except StoreError as exc:
        return str(exc)
    return None


def claim_in_a_process(url: str, run_id: str, n: int, barrier: Any, results: Any) -> None:
    """Claimer ``n`` of a spawned process: connected before the start line, then it claims
    as ``wf-{n + 1}`` and puts (workflow id, refusal) on ``results``."""
    store = RunStore(url)
    store.get_run(run_id)  # connected and warmed up before the start line
    barrier.wait(DEFAULT_TIMEOUT_S)
    results.put((f"wf-{n + 1}", claim(store, run_id, f"wf-{n + 1}")))
    store.close()

"""Runs whose process died: recorded as interrupted, and given an engine to go on with.

DBOS continues a workflow from its last recorded step, but only when someone asks: an
embedded process's workflows are its own (each process has its own executor id), and a
person decides whether a run cut off by a crash goes on. :func:`recover_interrupted` finds
runs whose workflow is pending under an embedded process of this host that has ended,
and records them as ``interrupted`` (their running steps back to pending) so that the
dashboard shows it and ``resume`` continues them. A worker's runs are not seen from here:
``python -m core recover --worker NAME`` hands them over.
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Mapping
from typing import TYPE_CHECKING

from core.errors import ConfigError
from core.execution.events import RunEvent
from core.runs.executors import executor_gone
from core.store.claims import STARTING_S
from core.store.run_store import RunRecord, RunStore

if TYPE_CHECKING:
    from core.llm.engine import Engine

__all__ = ["engine_for_record", "recover_interrupted", "recover_run"]

logger = logging.getLogger(__name__)


def recover_interrupted(store: RunStore) -> list[str]:
    """Record every run whose embedded process has ended as interrupted; return their ids.

    A run executed as a workflow is judged by the executor DBOS recorded for it; a run
    recorded without one (a tool trial) by the ``executor`` its options name.
    """
    recovered = []
    for record in store.held_runs():
        if _process_gone(record) and recover_run(store, store.get_run(record.run_id)):
            recovered.append(record.run_id)
    if recovered:
        logger.warning("runs interrupted by a crash: %s", ", ".join(recovered))
    return recovered


def _process_gone(record: RunRecord) -> bool:
    if record.claimed_at is not None and time.time() - record.claimed_at.timestamp() < STARTING_S:
        return False  # its claimer is starting it, or taking it over, right now
    if record.workflow_id is None:
        return executor_gone(str(record.options.get("executor") or ""))
    import core.runs.durable as durable  # slow to import: only for workflow runs

    found = durable.workflow_state(record.workflow_id)
    return found is not None and found[0] == "PENDING" and executor_gone(found[1])


def recover_run(store: RunStore, record: RunRecord) -> bool:
    """Reset the run's running steps (step_reset events) and mark it interrupted, at once."""
    plan = record.plan
    resets = []
    if plan is not None:
        for step in plan.steps:
            if step.status == "running":
                step.advance("pending", reason="crash reset")
                resets.append(RunEvent(
                    kind="step_reset", step_id=step.id, plan_version=plan.version,
                    data={"reason": "the process running it stopped; back to pending"},
                ))
    event = RunEvent(kind="interrupted", plan_version=plan.version if plan else 1,
                     data={"status": record.status})
    return store.mark_interrupted(record, plan, resets, event)


_RECORDED_LLM = ("base_url", "planner_model", "executor_model", "provider", "timeout_s",
                 "max_retries")


def engine_for_record(record: RunRecord, environ: Mapping[str, str] | None = None) -> Engine:
    """The engine for a run continued in a new process: tools plus the model it was set up with.

    An offline run stays offline. An online run talks to the endpoint and models it
    recorded (``record.settings``), with the API key from the environment (keys are never
    stored); ConfigError when the environment has no key the endpoint needs.
    """
    from core.llm.engine import engine_for
    from core.llm.settings import LLMSettings
    from core.tools.toolsets import default_registry

    env = os.environ if environ is None else environ
    registry = default_registry(env)
    if bool(record.settings.get("offline", True)):
        return engine_for(registry, None)
    recorded = {k: record.settings[k] for k in _RECORDED_LLM
                if record.settings.get(k) is not None}
    settings = LLMSettings.from_env(env).updated(**recorded)
    if not settings.configured:
        raise ConfigError(
            f"run {record.run_id} used the model at {settings.base_url}, which needs a key: "
            "set OPENAI_API_KEY in the environment or a .env file, then resume it again"
        )
    return engine_for(registry, settings)

"""Runs whose process died: recorded as interrupted, and given an engine to go on with.

DBOS continues a workflow from its last recorded step, but only when someone asks: an
embedded process's workflows are its own (each process has its own executor id), and a
person decides whether a run cut off by a crash goes on. DBOS cannot tell whether an
executor is alive, nor see a run whose process died after recording it and before its
workflow started; this host can (:func:`core.runs.executors.executor_gone`).
:func:`recover_interrupted` finds the runs whose workflow is pending under an embedded
process of this host that has ended, and the unfinished runs whose recorded holder (the
process that recorded or claimed them, :func:`core.runs.dispatch.holder`) has ended
before DBOS showed their workflow running. It records them as ``interrupted`` (their
running steps back to pending) so that the dashboard shows it and ``resume`` continues
them. A worker's runs are not seen from here: ``python -m core recover --worker NAME``
hands them over.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping
from typing import TYPE_CHECKING

from core.errors import ConfigError
from core.execution.events import RunEvent
from core.lifecycle import ACTIVE_STATUSES
from core.runs.dispatch import holder
from core.store.claims import HOLDER
from core.store.run_store import RunRecord, RunStore

if TYPE_CHECKING:
    from core.llm.engine import Engine

__all__ = ["cut_off", "engine_for_record", "recover_interrupted", "recover_run"]

logger = logging.getLogger(__name__)


def recover_interrupted(store: RunStore) -> list[str]:
    """Record every run whose process has ended while it held the run as interrupted;
    return their ids."""
    recovered = []
    for held in store.held_runs():
        if not cut_off(held):
            continue
        record = store.get_run(held.run_id)  # with its plan, whose running steps are reset
        # as judged: no claim came between (the run would be another process's now)
        if record.event_seq == held.event_seq and recover_run(store, record):
            recovered.append(record.run_id)
    if recovered:
        logger.warning("runs interrupted by a crash: %s", ", ".join(recovered))
    return recovered


def cut_off(record: RunRecord) -> bool:
    """True when nothing executes the run any more although a process held it: its
    workflow is pending under an ended process, or the process that recorded or claimed
    an unfinished run ended before DBOS showed its workflow. A paused run whose workflow
    its process stopped on purpose stays paused; a run recorded without a holder or a
    workflow (a test's, a benchmark's) is not judged."""
    if holder(record) is not None:
        return False
    if record.status in ACTIVE_STATUSES and record.options.get(HOLDER):
        return True
    if record.workflow_id is None:
        return False
    import core.runs.durable as durable  # slow to import: only for workflow runs

    found = durable.workflow_state(record.workflow_id)
    return found is not None and found[0] == "PENDING"


def recover_run(store: RunStore, record: RunRecord, reason: str | None = None) -> bool:
    """Reset the run's running steps (step_reset events) and mark it interrupted, at once
    (``reason``: why, when it is not that its process ended)."""
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
                     data={"status": record.status} | ({"reason": reason} if reason else {}))
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

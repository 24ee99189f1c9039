"""Runs across processes: control requests read from the store, and recovery after a crash.

A run is executed by one process, but a person may steer it from another (the CLI, a second
dashboard). :class:`StoreBackedControl` applies the requests those processes write to the
store. :func:`recover_interrupted` finds runs whose process died and records them as
``interrupted``, putting their running steps back to pending so that ``resume`` can go on.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING

from core.errors import ConfigError, StoreError
from core.execution.control import RunControl
from core.execution.events import RunEvent
from core.store.run_store import RunRecord, RunStore, owner_alive

if TYPE_CHECKING:
    from core.llm.engine import Engine

__all__ = [
    "StoreBackedControl",
    "await_resume_taken",
    "engine_for_record",
    "recover_interrupted",
    "recover_run",
]

logger = logging.getLogger(__name__)


class StoreBackedControl(RunControl):
    """A RunControl that also obeys pause/resume/cancel/confirm requests stored in the DB.

    Requests are read when the scheduler asks (``is_paused`` / ``is_cancelled``, at most
    every ``min_interval_s``) and by the runner's watcher thread; ``on_action(action)`` is
    called after each one is applied (a resume only when it found the run paused).
    """

    def __init__(self, store: RunStore, run_id: str, *, min_interval_s: float = 0.2,
                 on_action: Callable[[str], None] | None = None) -> None:
        super().__init__()
        self._store = store
        self._on_action = on_action
        self._run_id = run_id
        self._min_interval_s = min_interval_s
        self._last_sync = 0.0
        self._sync_lock = threading.Lock()

    def sync(self) -> str | None:
        """Apply the control request waiting in the store, if any; return it."""
        with self._sync_lock:
            self._last_sync = time.monotonic()
            try:
                action = self._store.pending_control(self._run_id)
            except StoreError:
                logger.exception("cannot read control requests of run %s", self._run_id)
                return None
        if action is not None:
            logger.info("run %s: applying control request %s", self._run_id, action)
            was_paused = RunControl.is_paused(self)  # as it was, without syncing again
            self.apply(action)
            if self._on_action is not None and (action != "resume" or was_paused):
                self._on_action(action)
        return action

    def _maybe_sync(self) -> None:
        if time.monotonic() - self._last_sync >= self._min_interval_s:
            self.sync()

    def is_paused(self) -> bool:
        self._maybe_sync()
        return super().is_paused()

    def is_cancelled(self) -> bool:
        self._maybe_sync()
        return super().is_cancelled()


def recover_interrupted(store: RunStore, *, stale_after_s: float = 30.0) -> list[str]:
    """Record every run whose owner died as interrupted; return their ids.

    Runs owned by this process count as alive (a runner of this process may execute them).
    """
    recovered = []
    for record in store.find_stale_running(stale_after_s):
        if recover_run(store, store.get_run(record.run_id)):
            recovered.append(record.run_id)
    if recovered:
        logger.warning("runs interrupted by a crash: %s", ", ".join(recovered))
    return recovered


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
                     data={"owner_pid": record.owner_pid, "owner_host": record.owner_host,
                           "status": record.status})
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
    from core.tools.catalog import default_registry

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


def await_resume_taken(store: RunStore, run_id: str, *, timeout: float = 10.0,
                       stale_after_s: float = 30.0, poll_s: float = 0.1) -> None:
    """Wait (bounded) until the process that owns the run has taken a resume request."""
    deadline = time.monotonic() + timeout
    pause = threading.Event()  # never set: the owner is another process, read the store again
    while time.monotonic() < deadline:
        record = store.get_run(run_id)
        taken = record.control_request is None and record.status != "paused"
        if taken or not owner_alive(record, stale_after_s):
            return
        pause.wait(poll_s)

"""Where a workflow's plan steps run: DBOS steps on the run's threads, and recorded waits.

:class:`DurableLauncher` is the :class:`core.execution.launcher.StepLauncher` of a run
executed as a DBOS workflow (:mod:`core.runs.workflow`). Each plan step is a DBOS step
``step:{id}:v{version}``, reserved in launch order and run on a thread, holding one of this
process's step permits while it works; each wait for finished steps is a recorded step
``wait``; the coordinator's model calls are recorded with their result or error; the run's
mailbox is read after each of them, every half second while steps run, and waited on
while none does. So a
replay after a crash sees the same starts, completions and messages in the same order.
"""

from __future__ import annotations

import contextvars
import logging
import pickle
import sqlite3
import threading
import time
from collections.abc import Callable
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from functools import partial
from typing import Any, TypeVar

from dbos import DBOS
from sqlalchemy.exc import SQLAlchemyError

from core.base import tracing
from core.execution.control import ControlWake
from core.execution.executor import StepOutcome
from core.execution.launcher import Finished, StepHandle, StepWork, finished
from core.plan.model import Plan, Step
from core.runs.attachments import RunSuspended
from core.runs.durable import CONTROL_TOPIC, record_intact

__all__ = ["IDLE_WAIT_S", "MAIL_EVERY_S", "DurableLauncher", "EngineFault", "engine_call",
           "read_mailbox", "recorded", "recorded_call", "set_step_permits", "with_permit"]

logger = logging.getLogger(__name__)

MAIL_EVERY_S = 0.5  # while steps run, the mailbox is read at most this often
IDLE_WAIT_S = 60.0  # while none runs, one wait in the mailbox (then the loop looks again)
T = TypeVar("T")

_permits = threading.BoundedSemaphore(16)


class EngineFault(BaseException):
    """DBOS itself failed under a run: its engine stopped, or a replay diverged from what
    was recorded. Not the run's own failure, so no ``except Exception`` of the run's code
    may take it for one (a BaseException, as DBOS's own cancellation is)."""


def engine_call(call: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    """``call(...)``, a call into DBOS: its own errors become an EngineFault, as do its
    database's once the engine's SQLite file was lost under it."""
    try:
        return call(*args, **kwargs)
    except Exception as exc:
        lost = isinstance(exc, (SQLAlchemyError, sqlite3.Error)) and not record_intact()
        if lost or type(exc).__module__.split(".")[0] == "dbos":
            raise EngineFault(f"{type(exc).__name__}: {exc}") from exc
        raise


def _captured(call: Callable[..., T], *args: Any, **kwargs: Any) -> tuple[str, Any]:
    """The body of a recorded step: its result, or the error it raised, as a value (so that
    a replay raises the same error and DBOS's own errors stay apart)."""
    try:
        return "returned", call(*args, **kwargs)
    except Exception as exc:
        try:
            pickle.dumps(exc)
        except Exception:  # DBOS pickles what it records
            exc = RuntimeError(f"{type(exc).__name__}: {exc}")
        return "raised", exc


def _decided(name: str, call: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    """A recorded decision, traced as a span ``decide KIND`` (a replay, which does not call
    it, makes none)."""
    with tracing.span(f"decide {name.partition(':')[0]}", {"planboard.decision": name}):
        return call(*args, **kwargs)


def recorded(name: str, call: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    """``call(...)`` as the DBOS step ``name`` of the running workflow: a replay returns the
    recorded result, or raises the recorded error, without calling it."""
    return recorded_call(name, _decided, name, call, *args, **kwargs)


def recorded_call(name: str, call: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    """As :func:`recorded`, for a call that is traced by a span of its own (an answer's
    model or tool call): no ``decide`` span around it."""
    outcome, value = engine_call(DBOS.run_step, {"name": name}, _captured, call, *args,
                                 **kwargs)
    if outcome == "raised":
        raise value
    return value


def with_permit(call: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    """``call(...)`` holding one of this process's step permits while it works."""
    with _permits:
        return call(*args, **kwargs)


def read_mailbox(on_mail: Callable[[str], None], timeout_s: float) -> None:
    """Apply with ``on_mail`` the messages waiting in the running workflow's mailbox,
    waiting up to ``timeout_s`` for the first (each read is recorded: a replay reads the
    same messages at the same point)."""
    action = engine_call(DBOS.recv, CONTROL_TOPIC, timeout_seconds=timeout_s)
    while action is not None:
        on_mail(str(action))
        action = engine_call(DBOS.recv, CONTROL_TOPIC, timeout_seconds=0)


def set_step_permits(count: int) -> None:
    """Let at most ``count`` plan steps of this process's runs work at once (a worker's
    ``--concurrency``); runs waiting for a person or paused hold none."""
    global _permits
    _permits = threading.BoundedSemaphore(count)


class DurableLauncher:
    """Runs a workflow's plan steps as DBOS steps and records what finished, and when.

    ``on_mail(action)`` applies a control message read from the run's mailbox; ``mail``,
    when set, says that one was sent from this process: it is read when the next step
    ends, before another starts.
    """

    def __init__(self, work: StepWork, max_parallel: int,
                 on_mail: Callable[[str], None], mail: threading.Event | None = None) -> None:
        self._work = work
        self._on_mail = on_mail
        self._mail = mail or threading.Event()
        self._pool = ThreadPoolExecutor(max_workers=max_parallel,
                                        thread_name_prefix="planboard-durable-step")
        self._running: dict[int, tuple[Future[StepOutcome], StepHandle]] = {}
        self._launched = 0
        self._mail_read_at = time.monotonic()  # the run just read it, or was just started
        self._decided = False  # a decision was recorded since the coordinator's last turn

    def start(self, plan: Plan, step: Step, key: str) -> StepHandle:
        handle = StepHandle(seq=self._launched, step_id=step.id, key=key)
        self._launched += 1
        reservation = engine_call(DBOS.reserve_step)  # in launch order, as on a replay
        context = contextvars.copy_context()  # the workflow's context, for the thread
        try:
            future = self._pool.submit(context.run, reservation.run,
                                       {"name": f"step:{step.id}:v{plan.version}"},
                                       self._permitted, plan, step, key)
        except RuntimeError as exc:  # the interpreter is exiting: it starts no thread
            raise RunSuspended(f"step {step.id} not started: {exc}") from None
        self._running[handle.seq] = (future, handle)
        return handle

    def _permitted(self, plan: Plan, step: Step, key: str) -> StepOutcome:
        return with_permit(self._work, plan, step, key)

    def next_done(self, timeout: float, wake: ControlWake) -> list[Finished]:
        if not self._running:  # waiting for a person or a decision: only mail can help
            self.read_mail(IDLE_WAIT_S)
            return []
        ended, read_mail = engine_call(DBOS.run_step, {"name": "wait"}, self._wait, timeout)
        ended_steps = []
        for seq in ended:
            future, handle = self._running.pop(seq)
            ended_steps.append(finished(handle, partial(engine_call, future.result)))
        if read_mail:
            self.read_mail(0)
        return ended_steps

    def _wait(self, timeout: float) -> tuple[list[int], bool]:
        """The recorded wait: launch numbers that ended (in launch order), and whether the
        mailbox is due to be read."""
        wait([future for future, _ in self._running.values()], timeout=timeout,
             return_when=FIRST_COMPLETED)
        ended = [seq for seq, (future, _) in self._running.items() if future.done()]
        # mail waits while steps are ending (the coordinator has work), at most twice as long
        since = time.monotonic() - self._mail_read_at
        due = (self._mail.is_set() or since >= 2 * MAIL_EVERY_S
               or (since >= MAIL_EVERY_S and not ended))
        return ended, due

    def read_mail(self, timeout_s: float) -> None:
        """Apply the messages waiting in the run's mailbox, waiting up to ``timeout_s`` for
        the first."""
        self._mail_read_at = time.monotonic()  # only the recorded answer decides (replays)
        self._mail.clear()
        read_mailbox(self._on_mail, timeout_s)

    def record(self, name: str, call: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        """``call`` recorded as the step ``name``; the mailbox is read before the next
        step starts (:meth:`catch_up`): a control sent while the model decided applies."""
        self._decided = True
        return recorded(name, call, *args, **kwargs)

    def catch_up(self) -> None:
        # after every decision, and only then: a replay reads at the same points
        if self._decided:
            self._decided = False
            self.read_mail(0)

    def close(self) -> None:
        self._pool.shutdown(wait=True)

    def __enter__(self) -> DurableLauncher:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

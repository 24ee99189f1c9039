"""Where a run's steps execute: each one started, and the finished ones collected in order.

The coordinator decides which step starts and what a finished step changes; a
:class:`StepLauncher` only runs steps. The coordinator sees no thread or future: it gets a
:class:`StepHandle` from :meth:`StepLauncher.start` and the finished handles with their
outcomes, in launch order, from :meth:`StepLauncher.next_done`. So a durable launcher can
record each start (in launch order) and each ``next_done`` answer, and a replay of the run
sees the same completions in the same order. The coordinator's own calls to a model
(success checks, checkpoints, replans) go through :meth:`StepLauncher.record`, so that a
replay gets their recorded answers too. The default is :class:`ThreadPoolLauncher`.
"""

from __future__ import annotations

import contextvars
import logging
from collections.abc import Callable, Mapping
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass
from typing import Any, NamedTuple, Protocol, TypeVar

from core.base import tracing
from core.execution.control import ControlWake, RunControl
from core.execution.executor import StepOutcome, execute_step
from core.execution.in_doubt import CallLedger
from core.llm.engine import Engine
from core.plan.model import Plan, Step

__all__ = ["Finished", "StepHandle", "StepLauncher", "StepWork", "ThreadPoolLauncher",
           "finished", "paced_work"]

logger = logging.getLogger(__name__)

StepWork = Callable[[Plan, Step, str], StepOutcome]  # (plan, step, idempotency key)
T = TypeVar("T")


@dataclass(frozen=True)
class StepHandle:
    """One started step: its place in the launch order, its id and its idempotency key."""

    seq: int
    step_id: str
    key: str


class Finished(NamedTuple):
    """A handle whose step has ended, and how it ended."""

    handle: StepHandle
    outcome: StepOutcome


class StepLauncher(Protocol):
    """Starts steps and reports which ones finished."""

    def start(self, plan: Plan, step: Step, key: str) -> StepHandle:
        """Run ``step`` of ``plan`` (idempotency key ``key``) somewhere; return at once."""
        ...

    def next_done(self, timeout: float, wake: ControlWake) -> list[Finished]:
        """Wait until a started step finished, ``wake`` fired or ``timeout`` seconds passed;
        return every finished step not returned before, in launch order (maybe none)."""
        ...

    def record(self, name: str, call: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        """``call(*args, **kwargs)``: a decision of the coordinator that asks a model (its
        result must not depend on anything else that varies); ``name`` says which one."""
        ...

    def catch_up(self) -> None:
        """Before the coordinator starts more steps: apply the controls that arrived while
        it decided (a run steered from afar reads them now)."""
        ...


def paced_work(engine: Engine, control: RunControl, delay_s: float,
               ledger: CallLedger | None = None,
               read_ahead: Mapping[str, Any] | None = None) -> StepWork:
    """The work of one step: the demo pace (``delay_s``, 0 for none), then the step (its
    side effects noted in ``ledger``, when the run has one: core.execution.in_doubt; its
    call's result taken from ``read_ahead`` when it was made while the plan was written)."""

    def work(plan: Plan, step: Step, key: str) -> StepOutcome:
        if delay_s:
            control.pace(delay_s)  # parallel steps wait side by side; a cancel ends it
        with tracing.span(f"step {step.id}", {
                "planboard.step.id": step.id, "planboard.step.tool": step.tool,
                "planboard.plan.version": plan.version}) as span:
            outcome = execute_step(plan, step, engine, cancel=control.cancel_event,
                                   idempotency_key=key, ledger=ledger, read_ahead=read_ahead)
            span.set(_outcome_attributes(outcome))
            if outcome.status == "failed":
                span.fail(outcome.error_message.code if outcome.error_message else "failed")
        return outcome

    return work


def _outcome_attributes(outcome: StepOutcome) -> dict[str, Any]:
    """What a step span says of how the step ended (its error as a code, never its text)."""
    return {"planboard.step.status": outcome.status, "planboard.step.mode": outcome.mode,
            "planboard.step.in_doubt": outcome.in_doubt or None,
            "planboard.usage.llm_calls": outcome.usage.llm_calls,
            "gen_ai.usage.input_tokens": outcome.usage.prompt_tokens,
            "gen_ai.usage.output_tokens": outcome.usage.completion_tokens}


class ThreadPoolLauncher:
    """Runs steps on a pool of ``max_parallel`` threads (started when first needed)."""

    def __init__(self, work: StepWork, max_parallel: int) -> None:
        self._work = work
        self._pool = ThreadPoolExecutor(max_workers=max_parallel,
                                        thread_name_prefix="planboard-step")
        self._running: dict[Future[StepOutcome], StepHandle] = {}  # in launch order
        self._launched = 0

    def start(self, plan: Plan, step: Step, key: str) -> StepHandle:
        handle = StepHandle(seq=self._launched, step_id=step.id, key=key)
        self._launched += 1
        # in the caller's context: the step's span is a child of the run's (or a phase's)
        future = self._pool.submit(contextvars.copy_context().run, self._work, plan, step, key)
        self._running[future] = handle
        return handle

    def next_done(self, timeout: float, wake: ControlWake) -> list[Finished]:
        wait([*self._running, wake.future], timeout=timeout, return_when=FIRST_COMPLETED)
        done = [future for future in self._running if future.done()]
        return [finished(self._running.pop(future), future.result) for future in done]

    def record(self, name: str, call: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        return call(*args, **kwargs)

    def catch_up(self) -> None:
        """Nothing to do: controls reach an in-process run's control at once."""

    def close(self) -> None:
        """Wait for the steps still running, then stop the threads."""
        self._pool.shutdown(wait=True)

    def __enter__(self) -> ThreadPoolLauncher:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


def finished(handle: StepHandle, outcome_of: Callable[[], StepOutcome]) -> Finished:
    """``handle`` with the outcome ``outcome_of()`` gives (a finished future's result, say);
    an error raised there (execute_step never raises) is the step's failure."""
    try:
        return Finished(handle, outcome_of())
    except Exception as exc:  # execute_step never raises; this guards the guarantee
        logger.exception("step %s raised out of the executor", handle.step_id)
        return Finished(handle, StepOutcome(status="failed",
                                            error=f"{type(exc).__name__}: {exc}"))

"""PlanBoard on a BFCL entry: the first turn a run, each later turn a follow-up of that run.

A turn is what ``python -m core run --yes --approve-replans`` does with a request, and each
later one what ``followup`` does: the planner drafts the plan (no clarifying questions:
nobody is there to answer them) on the entry's toolset, the run executes it with every
side effect approved up front (later versions too: replans, retries, the follow-ups), and
the follow-up extends the same run, on the same backend state, with the earlier steps and
their results kept. The calls that reached the backends during a turn are its steps, in
the order they ran.

Two paths execute the same plans: :class:`RecordedTurns`, a :class:`core.runs.runner.Runner`
over the PlanBoard home (each run a DBOS workflow, recorded, reflected on, and open in the
dashboard like any other), which ``python -m bench.bfcl`` takes; and :class:`InlineTurns`,
the scheduler in this process (:func:`core.execution.scheduler.run_plan`: the same planning
checks, executor, checkpoints and replans, with no store, workflow or reflection after
the run), which the test suite takes to replay the 200 entries in seconds.

Every model call is counted where it is made (:class:`CountingModel`): a turn's model
calls and tokens are everything the model was asked while it ran, its planning, steps,
checks and reflection included.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol

from bench.bfcl.backend import EntryBackends
from bench.bfcl.data import Entry
from bench.bfcl.records import EntryRun, TurnRecord
from core.base.usage import Usage
from core.errors import PlanBoardError
from core.execution.options import RunOptions
from core.llm.client import ChatModel, ChatReply
from core.llm.engine import Engine
from core.plan.model import Plan

__all__ = ["CountingModel", "InlineTurns", "RecordedTurns", "Turns", "run_planboard"]

TURN_TIMEOUT_S = 3600.0  # a turn still running after an hour is cancelled


class CountingModel:
    """A chat model that adds up what every call through it cost."""

    def __init__(self, model: ChatModel) -> None:
        self.model = model
        self._spent = Usage()
        self._lock = threading.Lock()

    def __getattr__(self, name: str) -> Any:
        return getattr(self.model, name)

    def chat(self, messages: list[dict[str, Any]], **kwargs: Any) -> ChatReply:
        """The wrapped model's reply, its usage added up."""
        reply = self.model.chat(messages, **kwargs)
        with self._lock:
            self._spent = self._spent + reply.usage
        return reply

    def take(self) -> Usage:
        """What the calls since the last ``take`` cost."""
        with self._lock:
            spent, self._spent = self._spent, Usage()
        return spent


def approving_options() -> RunOptions:
    """What ``run --yes --approve-replans`` runs with: every side effect approved."""
    return RunOptions(confirm_side_effects=False, new_versions="approve")


class Turns(Protocol):
    """Runs an entry's turns, one request at a time, on one engine."""

    def first(self, request: str) -> tuple[str, str]:
        """Plan and run the first request; its run id and status."""
        ...

    def follow(self, request: str) -> tuple[str, str]:
        """Extend the run with a later request and run it; its run id and status."""
        ...

    def warnings(self) -> list[str]:
        """The warnings of the run's plan as it stands."""
        ...

    def close(self) -> None:
        """Release what the turns held."""
        ...


class RecordedTurns:
    """Turns as recorded runs in ``home``, the entry's own PLANBOARD_HOME (so that no
    lesson learnt on one entry reaches the planning of another): it is set while the
    turns last, and the run engine serving it stops at ``close``."""

    def __init__(self, engine: Engine, home: Path, settings_public: dict[str, Any]) -> None:
        from core.runs.runner import open_runner

        home.mkdir(parents=True, exist_ok=True)
        self._home_before = os.environ.get("PLANBOARD_HOME")
        os.environ["PLANBOARD_HOME"] = str(home)
        self.engine = engine
        self.settings_public = settings_public
        self.runner = open_runner()
        self.run_id = ""

    def first(self, request: str) -> tuple[str, str]:
        from core.runs.session import draft_plan

        draft = draft_plan(request, self.engine, store=self.runner.store, allow_questions=False)
        assert draft.plan is not None  # no questions were allowed
        draft.plan.raise_if_invalid(self.engine.registry)
        self.run_id = self.runner.start(draft.plan.goal, draft.plan, engine=self.engine,
                                        options=approving_options(),
                                        settings_public=self.settings_public,
                                        planning_usage=draft.usage)
        return self.run_id, self._wait()

    def follow(self, request: str) -> tuple[str, str]:
        self.runner.follow_up(self.run_id, request, engine=self.engine)
        return self.run_id, self._wait()

    def warnings(self) -> list[str]:
        if not self.run_id:
            return []
        plan = self.runner.store.get_run(self.run_id).plan
        return list(plan.warnings) if plan is not None else []

    def _wait(self) -> str:
        record = self.runner.wait(self.run_id, timeout=TURN_TIMEOUT_S)
        if record.status in {"completed", "failed", "cancelled"}:
            return record.status
        return self.runner.cancel(self.run_id).status

    def close(self) -> None:
        from core.runs import durable

        try:
            self.runner.close()
        finally:
            durable.shutdown()
            if self._home_before is None:
                os.environ.pop("PLANBOARD_HOME", None)
            else:
                os.environ["PLANBOARD_HOME"] = self._home_before


class InlineTurns:
    """Turns run by the scheduler in this process: planned, checked and executed as a
    recorded run is, without the store."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self.plan: Plan | None = None
        self.checked: list[Plan] = []  # each turn's plan as it ran

    def first(self, request: str) -> tuple[str, str]:
        from core.base.language import detect_language
        from core.planning.planner import plan_request

        result = plan_request(request, self.engine, language=detect_language(request))
        assert result.plan is not None  # the planner falls back to a minimal plan
        result.plan.raise_if_invalid(self.engine.registry)
        return self._run(result.plan, approving_options())

    def follow(self, request: str) -> tuple[str, str]:
        from core.planning.followup import extend_plan_request

        assert self.plan is not None, "a follow-up needs a first turn"
        extended, _ = extend_plan_request(self.plan, request, self.engine)
        options = approving_options()
        options.earlier_steps = [step.id for step in self.plan.steps]
        return self._run(extended, options)

    def _run(self, plan: Plan, options: RunOptions) -> tuple[str, str]:
        from core.execution.scheduler import run_plan

        outcome = run_plan(plan, self.engine, options=options)
        self.plan = outcome.plan
        self.checked.append(outcome.plan)
        return "", outcome.status

    def warnings(self) -> list[str]:
        return list(self.plan.warnings) if self.plan is not None else []

    def close(self) -> None:
        """Nothing to release."""


def run_planboard(entry: Entry, model: ChatModel, turns_for: Callable[[Engine], Turns], *,
                  on_backends: Callable[[EntryBackends], None] | None = None) -> EntryRun:
    """Every turn of ``entry`` through PlanBoard on ``model``; ``turns_for(engine)`` gives
    the path the turns take; ``on_backends`` is told the entry's backends first."""
    backends = EntryBackends(entry)
    if on_backends is not None:
        on_backends(backends)
    counting = CountingModel(model)
    engine = Engine(registry=backends.registry(), model=counting)
    run = EntryRun(entry.id, "planboard")
    turns = turns_for(engine)
    seen: set[str] = set()
    try:
        for number, text in enumerate(entry.turns):
            turn = TurnRecord()
            run.turns.append(turn)
            started = time.monotonic()
            try:
                turn.run_id, turn.status = (turns.first(text) if number == 0
                                            else turns.follow(text))
            except PlanBoardError as exc:  # nothing ran; a later turn may still
                turn.status = f"error: {type(exc).__name__}: {exc}"
            turn.wall_s = round(time.monotonic() - started, 2)
            spent = counting.take()
            turn.model_calls, turn.prompt_tokens = spent.llm_calls, spent.prompt_tokens
            turn.completion_tokens = spent.completion_tokens
            turn.steps = [[call] for call in backends.take_calls()]
            turn.warnings = [line for line in turns.warnings() if line not in seen]
            seen.update(turn.warnings)
            if number == 0 and not turn.run_id and isinstance(turns, RecordedTurns):
                run.error = turn.status or "the first turn recorded no run"
                break
    finally:
        turns.close()
    return run

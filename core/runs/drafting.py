"""A plan drafted in the background: the steps written so far while the planner writes them,
then the draft (or the error) once it is done.

A page starts one and keeps it between reruns; drafting goes on in its own thread whatever
the page does meanwhile, and the page reads :meth:`Drafting.progress` on a timer. The steps
are a preview of the reply being written; the draft that arrives at the end is the checked
plan (:func:`core.runs.session.draft_plan`), the only one a person reviews and approves.
With a :class:`~core.execution.read_ahead.ReadAhead`, the read-only steps of the preview
start while the rest is written.
"""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass

from core.base.copies import copied
from core.base.language import Language
from core.errors import PlanBoardError
from core.execution.read_ahead import ReadAhead
from core.llm.engine import Engine
from core.plan.model import Step
from core.runs.session import Draft, draft_plan
from core.store.run_store import RunStore

__all__ = ["Drafting", "DraftingProgress"]

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class DraftingProgress:
    """What a drafting has to show: the steps so far, and whether it is done."""

    steps: list[Step]
    done: bool


class Drafting:
    """One request drafted in a thread of its own (:meth:`start`); every field is read
    under its lock, so a page may poll it from any thread."""

    def __init__(self, request: str, *, allow_questions: bool,
                 language: Language | None = None, hierarchical: bool = False,
                 read_ahead: ReadAhead | None = None) -> None:
        self.request = request
        self.allow_questions = allow_questions
        self.language = language
        self.hierarchical = hierarchical  # the phase plan only (core.planning.phasing)
        self.read_ahead = read_ahead
        self._lock = threading.Lock()
        self._steps: list[Step] = []
        self._finished = threading.Event()
        self._draft: Draft | None = None
        self._error: Exception | None = None
        self._thread: threading.Thread | None = None

    def start(self, engine: Engine, store: RunStore | None) -> Drafting:
        """Begin drafting with ``engine`` (lessons from ``store``); returns at once."""
        self._thread = threading.Thread(target=self._draft_with, args=(engine, store),
                                        name="plan-drafting", daemon=True)
        self._thread.start()
        return self

    def _draft_with(self, engine: Engine, store: RunStore | None) -> None:
        try:
            draft = draft_plan(self.request, engine, store=store,
                               allow_questions=self.allow_questions, language=self.language,
                               hierarchical=self.hierarchical, on_steps=self._heard)
        except PlanBoardError as exc:
            self._end(error=exc)
        except Exception as exc:  # the page re-raises it where the person can see it
            logger.exception("drafting a plan failed")
            self._end(error=exc)
        else:
            self._end(draft=draft)

    def _heard(self, steps: list[Step]) -> None:
        with self._lock:
            self._steps = [copied(step) for step in steps]
        if self.read_ahead is not None:
            self.read_ahead.offer(steps)

    def _end(self, *, draft: Draft | None = None, error: Exception | None = None) -> None:
        with self._lock:
            self._draft, self._error = draft, error
        self._finished.set()

    def progress(self) -> DraftingProgress:
        """The steps written so far (those read ahead shown running or completed) and
        whether drafting is done."""
        with self._lock:
            steps, done = list(self._steps), self._finished.is_set()
        if self.read_ahead is not None:
            steps = self.read_ahead.shown(steps)
        return DraftingProgress(steps=steps, done=done)

    def result(self) -> Draft:
        """The draft; raises what drafting raised. Only once :meth:`progress` says done."""
        if not self._finished.is_set():
            raise RuntimeError("the plan is still being drafted")
        with self._lock:
            if self._error is not None:
                raise self._error
            assert self._draft is not None  # finished without an error: a draft
            return self._draft

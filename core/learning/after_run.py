"""What a finished run teaches: a reflection and a lesson, and a retry plan when one is worth it.

Seed 004: a run that fails through its replans is reflected on (root cause, lesson,
should_retry, retry hint); the lesson is stored with the run it came from, and, when a
retry is advised, a new attempt is planned with the lessons in the planner prompt. A
run that completed only after its plan changed leaves a lesson as well.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field

from core.base.usage import Usage
from core.errors import PlanBoardError
from core.execution.scheduler import RunOutcome
from core.learning.lessons import Lesson, LessonBook, lesson_prompt_lines, likely_tools
from core.learning.reflection import (
    Reflection,
    failure_text,
    reflect,
    reflect_offline,
    review_success,
)
from core.llm.engine import Engine
from core.plan.model import Plan
from core.plan.versions import without_expansions
from core.store.run_store import RunStore

__all__ = ["Learning", "learn_from_run", "lessons_for_request"]

logger = logging.getLogger(__name__)


@dataclass
class Learning:
    """The reflection on a run, the lesson kept, and the plan of the next attempt (if any)."""

    reflection: Reflection | None = None
    lesson: Lesson | None = None
    retry_plan: Plan | None = None
    usage: Usage = field(default_factory=Usage)


def lessons_for_request(store: RunStore, request: str, engine: Engine) -> list[str]:
    """Prompt lines of the enabled lessons that concern ``request`` or the tools it may use."""
    book = LessonBook(store)
    return lesson_prompt_lines(book.relevant(request, likely_tools(request, engine.registry)))


def learn_from_run(
    store: RunStore, run_id: str, request: str, outcome: RunOutcome, engine: Engine, *,
    attempt: int, max_attempts: int,
) -> Learning:
    """Reflect on a finished attempt, keep its lesson, and plan a retry when advised."""
    if outcome.status == "completed":
        return _review(store, run_id, outcome, engine)
    if outcome.status != "failed":
        return Learning()  # paused or cancelled: nothing to learn yet
    try:
        reflection, usage = reflect(outcome.plan, failure_text(outcome.plan), engine)
    except PlanBoardError as exc:
        logger.warning("reflection on run %s failed, using rules: %s", run_id, exc)
        reflection, usage = reflect_offline(outcome.plan, failure_text(outcome.plan)), Usage()
    learning = Learning(reflection=reflection, usage=usage,
                        lesson=LessonBook(store).add_reflection(reflection, run_id=run_id))
    if reflection.should_retry and attempt < max_attempts and not engine.offline:
        learning.retry_plan, spent = _retry_plan(store, request, outcome.plan, reflection,
                                                 engine)
        learning.usage += spent
    return learning


def _review(store: RunStore, run_id: str, outcome: RunOutcome, engine: Engine) -> Learning:
    """A lesson from a run that succeeded after its plan changed; a phase expanded when it
    was reached is no change of plan (core.plan.versions.without_expansions)."""
    try:
        reflection, usage = review_success(without_expansions(outcome.versions), engine)
    except PlanBoardError as exc:
        logger.warning("review of run %s failed: %s", run_id, exc)
        return Learning()
    if reflection is None:
        return Learning(usage=usage)
    lesson = LessonBook(store).add_reflection(reflection, run_id=run_id)
    return Learning(reflection=reflection, lesson=lesson, usage=usage)


def _retry_plan(store: RunStore, request: str, failed: Plan, reflection: Reflection,
                engine: Engine) -> tuple[Plan | None, Usage]:
    """The next attempt: a replan that keeps completed steps (so no side effect repeats)
    and carries the lessons and the retry hint in its prompt."""
    from core.planning.planner import replan_request

    lines = lessons_for_request(store, request, engine)
    if reflection.retry_hint:
        lines.append(reflection.retry_hint)
    try:
        result = replan_request(failed, failure_text(failed) or reflection.root_cause, engine,
                                lessons=lines)
    except PlanBoardError as exc:
        logger.warning("planning the retry failed: %s", exc)
        return None, Usage()
    return result.plan, result.usage

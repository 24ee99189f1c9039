"""The lessons pool: lessons left by earlier runs, which ones fit a new request, and storage.

A lesson is relevant when it shares terms with the request (Chinese bigrams, English words)
or concerns a tool the request can use. :class:`LessonBook` keeps lessons in the run
store's ``lessons`` table (SQLAlchemy Core, schema of core/store_schema.py unchanged).
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any

import sqlalchemy as sa
from pydantic import BaseModel, Field

from core.base.language import terms as language_terms
from core.base.messages import msg
from core.errors import StoreError
from core.learning.reflection import Reflection
from core.store.schema import as_utc, lessons, utc_now

if TYPE_CHECKING:
    from core.store.run_store import RunStore
    from core.tools.registry import ToolRegistry

__all__ = [
    "Lesson",
    "LessonBook",
    "lesson_prompt_lines",
    "likely_tools",
    "relevant_lessons",
    "terms",
]

logger = logging.getLogger(__name__)

_STOPWORDS = frozenset({
    "the", "and", "for", "with", "that", "this", "from", "into", "when", "then", "than",
    "have", "has", "was", "were", "are", "not", "you", "your", "its", "use", "using",
    "before", "after", "every", "all", "any", "can", "could", "should", "would", "will",
    "step", "steps", "plan", "run", "runs", "again",
})
_MAX_TEXT = 2000


class Lesson(BaseModel):
    """One lesson: its text, the tools it concerns, the run it came from, and whether it is on."""

    id: int | None = None
    run_id: str | None = None
    text: str = Field(min_length=1, max_length=_MAX_TEXT)
    tools: list[str] = Field(default_factory=list)
    enabled: bool = True
    created_at: datetime | None = None
    updated_at: datetime | None = None


def terms(text: str) -> set[str]:
    """Matching terms of a lesson or request: the shared terms, common words left out."""
    return language_terms(text) - _STOPWORDS


def relevant_lessons(request: str, tool_names: Iterable[str], lessons: Iterable[Lesson],
                     limit: int = 5) -> list[Lesson]:
    """Enabled lessons that share terms with ``request`` or concern one of ``tool_names``.

    Ranked by shared terms, then shared tools, then newest first; at most ``limit``.
    Pass the tools the request is likely to use (see :func:`likely_tools`) for precision.
    """
    wanted = terms(request)
    tools = set(tool_names)
    scored: list[tuple[int, int, int, Lesson]] = []
    for position, lesson in enumerate(lessons):
        if not lesson.enabled:
            continue
        shared_terms = len(wanted & (terms(lesson.text) - set(lesson.tools)))
        shared_tools = len(tools & set(lesson.tools))
        if shared_terms or shared_tools:
            scored.append((shared_terms, shared_tools, lesson.id or position, lesson))
    scored.sort(key=lambda item: (-item[0], -item[1], -item[2]))
    return [item[3] for item in scored[: max(limit, 0)]]


def likely_tools(request: str, registry: ToolRegistry) -> list[str]:
    """The tools the packs' rules would use for ``request`` (a cheap guess, no LLM; none
    without a pack that drafts)."""
    from core.planning.offline import rule_drafts

    return list(dict.fromkeys(s.tool for plan in rule_drafts(request, registry)
                              for s in plan.steps if s.tool))


def lesson_prompt_lines(lessons: Sequence[Lesson]) -> list[str]:
    """One line per lesson for the planner prompt (``lessons=`` of make_plan / replan)."""
    lines = []
    for lesson in lessons:
        text = " ".join(lesson.text.split())
        prefix = f"[{', '.join(lesson.tools)}] " if lesson.tools else ""
        lines.append(prefix + text)
    return lines


class LessonBook:
    """Lessons in the run store's ``lessons`` table: add, list, edit, disable, delete."""

    def __init__(self, store: RunStore | sa.Engine | None = None) -> None:
        if store is None:
            from core.store.run_store import RunStore

            store = RunStore()
        self.engine: sa.Engine = store if isinstance(store, sa.Engine) else store.engine

    def add(self, text: str, tools: Iterable[str] = (), run_id: str | None = None) -> Lesson:
        """Store a lesson; the same text (ignoring spacing and case) is stored only once."""
        lesson = Lesson(text=" ".join(text.split()), tools=list(dict.fromkeys(tools)),
                        run_id=run_id)
        key = lesson.text.lower()
        for existing in self.list_lessons():
            if existing.text.lower() == key:
                return existing
        now = utc_now()
        try:
            with self._begin() as conn:
                new_id = conn.execute(lessons.insert().values(
                    run_id=run_id, text=lesson.text, tools=lesson.tools, enabled=True,
                    created_at=now, updated_at=now,
                )).inserted_primary_key[0]
        except sa.exc.IntegrityError:  # stored a moment ago by another run
            return next(e for e in self.list_lessons() if e.text == lesson.text)
        return self.get(int(new_id))

    def add_reflection(self, reflection: Reflection, run_id: str | None = None) -> Lesson:
        """Store the lesson of a reflection with its tools and the run it came from."""
        return self.add(reflection.lesson, reflection.tools, run_id=run_id)

    def get(self, lesson_id: int) -> Lesson:
        """The lesson ``lesson_id``; StoreError when there is none."""
        with self._connect() as conn:
            row = conn.execute(sa.select(lessons).where(lessons.c.id == lesson_id)).first()
        if row is None:
            raise StoreError(msg("lesson.not_found", lesson_id=lesson_id))
        return _lesson(row)

    def list_lessons(self, *, enabled_only: bool = False, run_id: str | None = None
                     ) -> list[Lesson]:
        """Lessons, newest first (only enabled ones, or only one run's, when asked)."""
        query = sa.select(lessons).order_by(lessons.c.id.desc())
        if enabled_only:
            query = query.where(lessons.c.enabled.is_(True))
        if run_id is not None:
            query = query.where(lessons.c.run_id == run_id)
        with self._connect() as conn:
            return [_lesson(row) for row in conn.execute(query)]

    def update(self, lesson_id: int, *, text: str | None = None,
               tools: Iterable[str] | None = None, enabled: bool | None = None) -> Lesson:
        """Edit a lesson's text or tools, or switch it on or off."""
        values: dict[str, Any] = {"updated_at": utc_now()}
        if text is not None:
            values["text"] = Lesson(text=" ".join(text.split())).text
        if tools is not None:
            values["tools"] = list(dict.fromkeys(tools))
        if enabled is not None:
            values["enabled"] = enabled
        try:
            with self._begin() as conn:
                done = conn.execute(
                    lessons.update().where(lessons.c.id == lesson_id).values(**values))
        except sa.exc.IntegrityError:
            raise StoreError(msg("lesson.duplicate")) from None
        if done.rowcount == 0:
            raise StoreError(msg("lesson.not_found", lesson_id=lesson_id))
        return self.get(lesson_id)

    def delete(self, lesson_id: int) -> None:
        """Remove a lesson for good."""
        with self._begin() as conn:
            done = conn.execute(lessons.delete().where(lessons.c.id == lesson_id))
        if done.rowcount == 0:
            raise StoreError(msg("lesson.not_found", lesson_id=lesson_id))

    def relevant(self, request: str, tool_names: Iterable[str], limit: int = 5) -> list[Lesson]:
        """The enabled lessons relevant to ``request`` (see :func:`relevant_lessons`)."""
        return relevant_lessons(request, tool_names, self.list_lessons(enabled_only=True), limit)

    def _connect(self) -> Any:
        try:
            return self.engine.connect()
        except sa.exc.SQLAlchemyError as exc:
            raise StoreError(msg("lesson.store_unavailable", error=str(exc))) from exc

    def _begin(self) -> Any:
        try:
            return self.engine.begin()
        except sa.exc.SQLAlchemyError as exc:
            raise StoreError(msg("lesson.store_unavailable", error=str(exc))) from exc


def _lesson(row: Any) -> Lesson:
    return Lesson(
        id=row.id, run_id=row.run_id, text=row.text, tools=list(row.tools or []),
        enabled=bool(row.enabled), created_at=as_utc(row.created_at),
        updated_at=as_utc(row.updated_at),
    )

"""The plan library: plans saved as templates, which one fits a new request, and storage.

A template is saved from a run (its latest plan and its request, see
:func:`core.plan.template.parameterize`) under a name, with who saved it (the OS user) and
when, in the run store's ``plan_templates`` table. A template fits a request when the two
requests share most of their terms: the Jaccard similarity of their terms (the lessons'
terms: Chinese bigrams and English words, common words left out), with the parameters'
values and any term holding a digit left out, since those change from one request to the
next; at :data:`FIT_THRESHOLD` or more it is offered instead of planning anew.
"""

from __future__ import annotations

import getpass
import logging
import re
from collections.abc import Mapping
from datetime import datetime
from typing import TYPE_CHECKING, Any

import sqlalchemy as sa
from pydantic import BaseModel

from core.base.messages import msg
from core.errors import ConfigError, StoreError
from core.learning.lessons import terms
from core.plan.model import Plan
from core.plan.template import TemplatePlan, fill, parameterize
from core.store.database import store_failure
from core.store.schema import as_utc, plan_templates, utc_now

if TYPE_CHECKING:
    from core.store.run_store import RunStore

__all__ = [
    "FIT_THRESHOLD",
    "PlanTemplate",
    "TemplateFit",
    "TemplateLibrary",
    "check_name",
    "guess_values",
    "similarity",
    "suggest_name",
]

logger = logging.getLogger(__name__)

FIT_THRESHOLD = 0.6  # most terms shared: the same errand, not merely the same topic
_NAME = re.compile(r"^[^\W_][\w\-]{0,63}$")  # letters (any script), digits, - and _
_NOT_NAME = re.compile(r"[^\w\-]+")  # what a name cannot hold: spaces, punctuation
_PLACEHOLDER = re.compile(r"\{\{\s*\w+\s*\}\}")
_DIGIT = re.compile(r"\d")
# the word (or the last two Chinese characters) right before a parameter, and the value
# after that word in another request: an id, a number or a name written in ASCII
_LEFT_WORD = re.compile(r"([A-Za-z]+|[\u3400-\u9fff]{1,2})[^\w{]*$")
_VALUE = r"[^\w]{0,3}?([A-Za-z0-9][A-Za-z0-9_.\-]*)"
_NUMBER = r"[^\w]{0,3}?(\d+(?:\.\d+)?)"  # the value of a parameter whose example is a number


class PlanTemplate(TemplatePlan):
    """A saved template: its name, the run it came from, who saved it and when."""

    name: str
    source_run: str | None = None
    saved_by: str
    created_at: datetime

    def fill(self, values: Mapping[str, str]) -> tuple[Plan, str]:
        """The plan and request with ``values`` as the parameters (see core.plan.template)."""
        return fill(self, values)


class TemplateFit(BaseModel):
    """A template that fits a request, how well, and the values read from the request."""

    template: PlanTemplate
    score: float
    values: dict[str, str]


def check_name(name: str) -> str:
    """``name`` stripped; ConfigError unless it is 1-64 letters, digits, ``-`` or ``_``
    (the message suggests the name :func:`suggest_name` makes of it, when there is one)."""
    name = name.strip()
    if not _NAME.match(name):
        if suggestion := suggest_name(name):
            raise ConfigError(msg("template.bad_name_suggested", name=repr(name),
                                  suggestion=suggestion))
        raise ConfigError(msg("template.bad_name", name=repr(name)))
    return name


def suggest_name(name: str) -> str:
    """A valid name close to ``name``: spaces and punctuation become ``-`` ("refund check"
    gives ``refund-check``), cut to 64 characters; empty when nothing of it is usable.

    Names stay words a shell passes whole (``python -m core templates delete NAME``)."""
    dashed = re.sub(r"-{2,}", "-", _NOT_NAME.sub("-", name.strip()))
    return dashed.lstrip("-_")[:64].rstrip("-")


def similarity(request: str, template_request: str) -> float:
    """The Jaccard similarity of two requests' terms, placeholders and digits left out."""
    mine, theirs = _terms(request), _terms(template_request)
    if not mine or not theirs:
        return 0.0
    return len(mine & theirs) / len(mine | theirs)


def _terms(text: str) -> set[str]:
    return {term for term in terms(_PLACEHOLDER.sub(" ", text)) if not _DIGIT.search(term)}


def guess_values(template: TemplatePlan, request: str) -> dict[str, str]:
    """The parameters' values as ``request`` writes them, where it can tell.

    A parameter's value is what follows, in ``request``, the word its placeholder follows
    in the template's request ("order {{x}}" reads "order 66001"); a parameter with no
    such word, or whose word the request lacks, is left out.
    """
    values: dict[str, str] = {}
    for parameter in template.parameters:
        at = template.request.find("{{" + parameter.name + "}}")
        left = _LEFT_WORD.search(template.request[:at]) if at >= 0 else None
        if left is None:
            continue
        shape = _NUMBER if re.fullmatch(r"\d+(?:\.\d+)?", parameter.example) else _VALUE
        found = re.search(re.escape(left.group(1)) + shape, request, re.IGNORECASE)
        if found:
            values[parameter.name] = found.group(1)
    return values


class TemplateLibrary:
    """Templates in the run store's ``plan_templates`` table: save, list, get, delete, fit."""

    def __init__(self, store: RunStore) -> None:
        self.store = store
        self.engine: sa.Engine = store.engine

    def save_run(self, run_id: str, name: str) -> PlanTemplate:
        """Save the run's latest plan as template ``name`` (ConfigError if the name is taken
        or not a name, RunNotFoundError for an unknown run)."""
        name = check_name(name)
        record = self.store.get_run(run_id)
        if record.plan is None or not record.plan.steps:
            raise ConfigError(msg("template.no_plan", run_id=run_id))
        return self.save_plan(name, record.plan, record.request, source_run=run_id)

    def save_plan(self, name: str, plan: Plan, request: str, *,
                  source_run: str | None = None) -> PlanTemplate:
        """Save ``plan``, made for ``request``, as template ``name``: the request's values in
        its arguments become parameters; saved now, by the OS user."""
        template = parameterize(plan, request)
        saved = PlanTemplate(**template.model_dump(), name=check_name(name),
                             source_run=source_run, saved_by=_user(), created_at=utc_now())
        try:
            with self.engine.begin() as conn:
                conn.execute(plan_templates.insert().values(
                    name=saved.name, request=saved.request, plan=saved.plan,
                    parameters=[p.model_dump() for p in saved.parameters],
                    source_run=source_run, saved_by=saved.saved_by,
                    created_at=saved.created_at))
        except sa.exc.IntegrityError:
            raise ConfigError(msg("template.name_taken", name=saved.name)) from None
        except sa.exc.SQLAlchemyError as exc:
            raise StoreError(store_failure(self.engine.url, exc)) from exc
        return saved

    def get(self, name: str) -> PlanTemplate:
        """The template ``name``; ConfigError naming the saved ones when there is none."""
        row = self._rows(sa.select(plan_templates).where(plan_templates.c.name == name.strip()))
        if not row:
            raise ConfigError(msg("template.not_found", name=repr(name.strip())))
        return row[0]

    def list_templates(self) -> list[PlanTemplate]:
        """Every template, newest first."""
        return self._rows(sa.select(plan_templates).order_by(
            plan_templates.c.created_at.desc(), plan_templates.c.name))

    def delete(self, name: str) -> None:
        """Remove template ``name`` for good (ConfigError when there is none)."""
        try:
            with self.engine.begin() as conn:
                done = conn.execute(plan_templates.delete().where(
                    plan_templates.c.name == name.strip()))
        except sa.exc.SQLAlchemyError as exc:
            raise StoreError(store_failure(self.engine.url, exc)) from exc
        if not done.rowcount:
            raise ConfigError(msg("template.not_found", name=repr(name.strip())))

    def best_fit(self, request: str) -> TemplateFit | None:
        """The template whose request is most like ``request``, if it fits well enough."""
        scored = [(similarity(request, t.request), t) for t in self.list_templates()]
        scored = [(score, t) for score, t in scored if score >= FIT_THRESHOLD]
        if not scored:
            return None
        score, template = max(scored, key=lambda item: item[0])
        return TemplateFit(template=template, score=round(score, 2),
                           values=guess_values(template, request))

    def _rows(self, query: Any) -> list[PlanTemplate]:
        try:
            with self.engine.connect() as conn:
                return [_template(row) for row in conn.execute(query)]
        except sa.exc.SQLAlchemyError as exc:
            raise StoreError(store_failure(self.engine.url, exc)) from exc


def _user() -> str:
    """Who saves a template: the OS user running PlanBoard."""
    try:
        return getpass.getuser()
    except (OSError, KeyError):  # no login name and no passwd entry (some containers)
        return "unknown"


def _template(row: Any) -> PlanTemplate:
    return PlanTemplate(name=row.name, request=row.request, plan=row.plan,
                        parameters=row.parameters, source_run=row.source_run,
                        saved_by=row.saved_by, created_at=as_utc(row.created_at))

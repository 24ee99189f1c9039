"""Correct plans pass untouched: every check and repair leaves the corpus of correct plans
(tests/support/correct_plans.py) alone, with the checks for weak models on and off.

Each entry runs as a person runs it, against the scripted OpenAI-compatible endpoint (a
real HTTP server): drafted, refined or followed up, and executed to its answer. The plan
that comes back is the plan the reply holds, no check names itself on it, no version has a
warning, the answer is the entry's word for word (no note under it) and the run made
exactly the entry's number of model calls.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from core.execution.options import RunOptions
from core.execution.scheduler import run_plan
from core.llm.client import OpenAIChatModel
from core.llm.engine import Engine
from core.plan.model import Plan
from core.plan.parse import parse_plan
from core.planning.followup import extend_plan_request
from core.planning.refine import refine_plan
from core.runs.session import draft_plan, request_language
from core.tools.toolsets import default_registry
from tests.support.correct_plans import CORPUS, Entry, FrozenClock, Script
from tests.support.fake_openai import FakeOpenAI

TOOLSETS = "builtin,demo,tests.toolsets.corpus"


@pytest.fixture(scope="module")
def corpus_endpoint() -> Iterator[FakeOpenAI]:
    """One scripted endpoint for the whole corpus (each run sets its own script)."""
    with FakeOpenAI() as server:
        yield server


@pytest.fixture(autouse=True)
def frozen_clock(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("core.tools.builtin.datetime", FrozenClock)


def _approved(entry: Entry) -> RunOptions:
    """The entry's run options, its plan approved as a person approves it."""
    return RunOptions(**{"confirm_side_effects": False, **entry.options})


def _run(entry: Entry, endpoint: FakeOpenAI, *, weak: bool) -> None:
    script = Script((entry.plan, *entry.replies))
    endpoint.responder = script
    asked = len(endpoint.chat_bodies)
    registry = default_registry({"PLANBOARD_TOOLSETS": TOOLSETS})
    with OpenAIChatModel(endpoint.settings(weak_model_checks=weak)) as model:
        engine = Engine(registry=registry, model=model)
        language = request_language(entry.request)
        draft = draft_plan(entry.request, engine, language=language,
                           hierarchical=entry.hierarchical)
        plan = draft.plan
        assert plan is not None and not draft.questions
        written = parse_plan(entry.plan, entry.request, language)
        assert plan.canonical() == written.canonical()
        versions: list[Plan] = [plan]
        answers: list[str] = []
        for kind, said in entry.then:
            if kind == "refine":
                plan, _ = refine_plan(plan, said, engine)
                versions.append(plan)
        outcome = run_plan(plan, engine, options=_approved(entry))
        versions += outcome.versions
        answers.append(outcome.answer or "")
        assert outcome.status == "completed", outcome.answer
        assert outcome.warnings == []
        for kind, said in entry.then:
            if kind == "follow_up":
                extended, _ = extend_plan_request(outcome.plan, said, engine)
                outcome = run_plan(extended, engine, options=_approved(entry))
                versions += [extended, *outcome.versions]
                answers.append(outcome.answer or "")
                assert outcome.status == "completed", outcome.answer
                assert outcome.warnings == []
    assert [(v.version, v.check_notes, v.warnings) for v in versions] == [
        (v.version, [], []) for v in versions]
    assert answers == list(entry.answers)
    assert (len(endpoint.chat_bodies) - asked, script.left) == (entry.calls, 0)


@pytest.mark.parametrize("entry", CORPUS, ids=lambda entry: entry.name)
def test_a_correct_plan_passes_untouched(entry: Entry, corpus_endpoint: FakeOpenAI):
    for weak in (True, False):
        _run(entry, corpus_endpoint, weak=weak)

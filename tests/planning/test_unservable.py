"""A request nothing can serve is refused before any run is recorded (issue 9, item 2):
offline rules that map no part of it to a tool raise UnservableRequestError; the CLI prints
one line and exits 1; the Plan page says so and offers nothing to approve."""

from __future__ import annotations

import pytest

from core.cli.main import main
from core.errors import PlanError, UnservableRequestError
from core.llm.engine import Engine
from core.runs.answers import answer_direct
from core.runs.session import draft_plan
from core.tools.toolsets import default_registry
from demo.offline import offline_plan
from tests.support.app import open_app

NOTHING_MAPS = ["asdf", "top 5 customers by spend", "what's the revenue by month?",
                "随便说说", "按月统计收入"]


@pytest.mark.parametrize("request_text", NOTHING_MAPS)
def test_offline_drafting_refuses_what_no_rule_maps(request_text):
    engine = Engine(default_registry({}))
    with pytest.raises(UnservableRequestError) as caught:
        draft_plan(request_text, engine)
    assert isinstance(caught.value, PlanError) and caught.value.reasons
    assert "No run was recorded" in str(caught.value) or "没有记录任何运行" in str(caught.value)
    # the lenient planner (follow-ups, guesses) still returns a plan that says so
    assert offline_plan(request_text, engine.registry).steps


def test_the_refusal_speaks_the_language_of_the_request():
    engine = Engine(default_registry({}))
    with pytest.raises(UnservableRequestError, match="离线无法处理"):
        draft_plan("随便说说", engine)
    with pytest.raises(UnservableRequestError, match=r"SQL .*needs an LLM"):
        draft_plan("top 5 customers by spend", engine)


def test_a_request_with_one_servable_part_is_still_planned():
    plan = draft_plan("check order 88231, and also asdf", Engine(default_registry({}))).plan
    assert plan is not None and "query_order" in [s.tool for s in plan.steps]


def test_a_direct_answer_offline_refuses_too():
    with pytest.raises(UnservableRequestError):
        answer_direct("asdf", Engine(default_registry({})), language="en")


@pytest.mark.parametrize("mode", ["plan", "auto"])
def test_the_cli_prints_one_line_exits_1_and_records_no_run(capsys, store, mode):
    code = main(["run", "asdf", "--offline", "--yes", "--mode", mode])
    err = capsys.readouterr().err
    assert code == 1
    assert err.count("\n") == 1 and err.startswith("error: ") and '"asdf"' in err
    assert store.list_runs() == []


def test_the_plan_page_shows_the_message_and_no_approve_button(app_runner):
    at = open_app()
    at.text_area(key="request").input("asdf").run()
    at.button(key="generate_plan").click().run()
    assert not at.exception, [e.value for e in at.exception]
    assert any("no run was" in e.value for e in at.error)
    assert any('"asdf"' in text.value for text in at.text)
    assert at.session_state["plan"] is None
    assert not [b for b in at.button if b.key == "approve_run"]
    assert app_runner.store.list_runs() == []

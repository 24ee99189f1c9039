"""AppTest of the answers the Run page shows: the churn answer's tables reach the page as
Markdown tables, and after a follow-up the answer says no sentence twice."""

from __future__ import annotations

import pytest

from core.runs.runner import Runner
from tests.support.answer_text import sentences, tables
from tests.support.app import keyed_block, open_app, wait_for
from tests.support.waiting import DEFAULT_TIMEOUT_S


def _approved(at, runner: Runner):
    """Approve the Plan page's plan, wait for the run, and its page once it says Completed."""
    at.button(key="generate_plan").click().run()
    at.button(key="approve_run").click().run()
    assert not at.exception, [e.value for e in at.exception]
    run_id = at.query_params["run"]
    assert runner.wait(run_id, DEFAULT_TIMEOUT_S).status == "completed"
    return wait_for(at, _completed), run_id


def _completed(at) -> bool:
    return any(m.value == "**Status:** Completed" for m in at.markdown)


def _answer(at) -> str:
    """The Markdown the answer box hands to st.markdown (the subheading aside)."""
    block = keyed_block(at, "run_answer")
    assert block is not None, "the answer box is not on screen"
    return "\n".join(m.value for m in block.markdown)


def test_the_churn_answer_and_its_sql_cards_reach_the_page_as_tables(runner):
    at = open_app(language="en")
    at.button(key="scenario_churn-analysis").click().run()
    at, run_id = _approved(at, runner)
    found = tables(_answer(at))
    months = next(t for t in found if t[0] == ["month", "churned"])
    assert ["2025-10", "26"] in months and len(months) >= 4
    assert any(t[0] == ["plan", "churned", "churn_rate_pct"] for t in found), found
    sql_steps = [s for s in runner.store.get_run(run_id).plan.steps if s.tool == "run_sql"]
    assert len(sql_steps) >= 3
    for step in sql_steps:
        card = keyed_block(at, f"step_card_{step.id}")
        assert card is not None, step.id
        (frame,) = card.get("dataframe")
        assert list(frame.value.columns) == step.result["columns"]
        assert len(frame.value) == len(step.result["rows"])


@pytest.mark.parametrize(("request_text", "follow_up", "new_fact"), [
    ("check order 88231", "also track its parcel SF1234567890", "SF Express"),
    ("查一下订单 88231", "另外帮我看看有没有新款耳机", "耳机"),
])
def test_after_a_follow_up_the_answer_says_no_sentence_twice(runner, request_text, follow_up,
                                                             new_fact):
    at = open_app(language="en", plan_mode="plan")  # a plan, not a direct answer
    at.text_area(key="request").set_value(request_text).run()
    at, run_id = _approved(at, runner)
    earlier = _answer(at)
    at.text_area(key="followup_text").set_value(follow_up).run()
    at.button(key="followup_submit").click().run()
    assert not at.exception, [e.value for e in at.exception]
    assert runner.wait(run_id, DEFAULT_TIMEOUT_S).status == "completed"
    at = wait_for(at, lambda a: _completed(a) and new_fact in _answer(a))
    answer = _answer(at)
    said = sentences(answer)
    assert said and max(answer.count(s) for s in said) == 1, answer
    repeated = [s for s in sentences(earlier) if s in answer]  # it covers the new steps only
    assert not repeated, repeated

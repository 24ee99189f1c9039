"""AppTest of "Tell the planner what to change" on the Plan page."""

from __future__ import annotations

import json

from core.plan.model import Plan, Step
from tests.support.app import go_online, keyed_block, open_app
from tests.support.fake_openai import FakeOpenAI, text
from tests.support.waiting import DEFAULT_TIMEOUT_S

EDITED = Plan(goal="Check order 88231", steps=[
    Step(id="s1", description="Look up the order", tool="query_order",
         args={"order_id": "66001"}),  # edited by hand from 88231
    Step(id="s2", description="Answer the user", depends_on=["s1"]),
])

# the model's revision drops s1's arguments and adds a knowledge search
REVISION = json.dumps({"goal": "Check order 88231", "steps": [
    {"id": "s1", "description": "Look up the order", "tool": "query_order"},
    {"id": "s3", "description": "Search the return policy", "tool": "search_knowledge",
     "args": {"query": "return policy"}, "depends_on": []},
    {"id": "s2", "description": "Answer the user", "tool": None, "depends_on": ["s1", "s3"]},
]})


def _diff_text(at) -> str:
    block = keyed_block(at, "refine_diff")
    assert block is not None, "no diff on screen"
    return "\n".join(element.value for element in block.text)


def test_refining_shows_the_diff_keeps_the_edit_and_the_approval_runs_it(runner):
    with FakeOpenAI(responder=lambda body: text(REVISION)) as server:
        at = open_app(plan=EDITED.model_copy(deep=True), plan_request=EDITED.goal)
        go_online(at, server)
        at.text_input(key="refine_text").input(
            "Also search the return policy").run()
        at.button(key="refine_plan").click().run()
        assert not at.exception and not at.error, [e.value for e in at.error]

        assert len(server.chat_bodies) == 1
        diff = _diff_text(at)
        assert "v1 → v2" in diff and "+ added s3 [search_knowledge]" in diff
        plan = at.session_state["plan"]
        assert plan.ids() == ["s1", "s3", "s2"]
        assert plan.step("s1").args == {"order_id": "66001"}
        assert list(at.dataframe[0].value["id"]) == ["s1", "s3", "s2"]
        approve = at.button(key="approve_run")
        assert not approve.disabled
        approve.click().run()
        run_id = at.query_params["run"]
        assert runner.wait(run_id, DEFAULT_TIMEOUT_S).plan.step("s1").args == {"order_id": "66001"}


def test_refining_offline_says_it_needs_a_model_and_changes_nothing(runner):
    at = open_app(language="zh", plan=EDITED.model_copy(deep=True))
    assert at.text_input(key="refine_text").label == "告诉规划器要改什么"
    at.text_input(key="refine_text").input("再查一下退货政策").run()
    at.button(key="refine_plan").click().run()

    assert not at.exception
    assert any("修改计划需要大模型" in error.value for error in at.error)
    assert at.session_state["plan"].canonical() == EDITED.canonical()
    assert keyed_block(at, "refine_diff") is None

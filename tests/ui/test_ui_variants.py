"""AppTest of plan variants on the Plan page: side by side, and "Use this plan"."""

from __future__ import annotations

from tests.support.app import block_text, go_online, keyed_block, open_app
from tests.support.fake_openai import FakeOpenAI
from tests.support.variant_plans import PLANS, REQUEST, by_angle


def _draft_three(at) -> None:
    at.text_area(key="request").input(REQUEST).run()
    at.button(key="draft_variants").click().run()
    assert not at.exception and not at.error, [e.value for e in at.error]


def test_three_variants_side_by_side_and_the_chosen_one_goes_to_review(runner):
    with FakeOpenAI(responder=by_angle(PLANS)) as server:
        at = open_app()
        go_online(at, server)
        _draft_three(at)

        texts = [block_text(keyed_block(at, f"variant_{n}")) for n in (1, 2, 3)]
        assert "Variant 2" in texts[1] and "fewest tools" in texts[1]
        assert "4 steps · critical path 3 · about 1 LLM call(s)" in texts[0]
        assert "4 steps · critical path 3 · about 2 LLM call(s)" in texts[1]
        assert "critical path 4" in texts[2]
        assert all("Side effects: s3" in text for text in texts)
        assert keyed_block(at, "variant_2").warning  # its reasoning step names a policy
        assert at.session_state["plan"] is None  # nothing to approve before one is chosen
        assert not [b for b in at.button if b.key == "approve_run"]

        at.button(key="use_variant_2").click().run()

        assert not at.exception
        assert keyed_block(at, "variants") is None
        plan = at.session_state["plan"]
        assert [step.description for step in plan.steps] == [
            step["description"] for step in PLANS["few_tools"]]
        review = at.dataframe[0].value
        assert list(review["id"]) == ["s1", "s2", "s3", "s4"]
        assert list(review["tool"]) == ["query_order", "none", "apply_refund", "none"]
        assert list(review["description"]) == [step["description"]
                                               for step in PLANS["few_tools"]]


def test_offline_shows_the_one_plan_and_says_variants_need_a_model(runner):
    at = open_app(language="zh")
    at.text_area(key="request").input("查询订单 88231").run()
    at.button(key="draft_variants").click().run()

    assert not at.exception
    assert any("对比多个方案需要大模型" in info.value for info in at.info)
    assert keyed_block(at, "variant_1") is not None and keyed_block(at, "variant_2") is None
    assert at.button(key="use_variant_1").label == "采用这个方案"

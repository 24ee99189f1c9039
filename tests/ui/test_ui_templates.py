"""AppTest of the plan library: the Templates page, and the Plan page's offer and save box."""

from __future__ import annotations

from core.learning.templates import TemplateLibrary
from core.plan.model import Plan, Step
from core.runs.runner import Runner
from tests.support.app import block_text, keyed_block, open_app
from tests.support.shown import shown

TEMPLATES = "pages/templates.py"
REQUEST = "Check whether order {order} has arrived and tell me its status."


def saved_template(runner: Runner) -> TemplateLibrary:
    library = TemplateLibrary(runner.store)
    plan = Plan(goal=REQUEST.format(order="88231"), steps=[
        Step(id="s1", description="Look up order 88231 in the shop", tool="query_order",
             args={"order_id": "88231"}),
        Step(id="s2", description="Say whether order 88231 arrived", depends_on=["s1"]),
    ])
    library.save_plan("order-status", plan, REQUEST.format(order="88231"), source_run="r-1")
    return library


def test_without_templates_the_page_says_how_to_save_one(runner):
    at = open_app(TEMPLATES)
    assert at.title[0].value == "Plan templates"
    assert "python -m core templates save RUN_ID --name NAME" in at.info[0].value


def test_a_template_is_listed_with_its_parameters_and_deleted(runner):
    library = saved_template(runner)
    at = open_app(TEMPLATES)
    card = keyed_block(at, "template_order-status")
    text = shown(block_text(card))
    assert "**order-status**" in text and "from run r-1" in text
    assert "Parameters: order_id (88231)" in text
    at.button(key="template_delete_order-status").click().run()
    assert not at.exception
    assert at.success[0].value == "Deleted template order-status."
    assert library.list_templates() == []
    assert keyed_block(at, "template_order-status") is None


def test_the_templates_page_speaks_chinese(runner):
    saved_template(runner)
    at = open_app(TEMPLATES, language="zh")
    assert at.title[0].value == "计划模板"
    assert "参数：order_id (88231)" in shown(block_text(keyed_block(at, "template_order-status")))


def test_a_matching_request_is_offered_the_template_and_starts_from_it_without_the_model(
        runner, monkeypatch, fake_openai):
    monkeypatch.setenv("OPENAI_BASE_URL", fake_openai.base_url)
    monkeypatch.setenv("OPENAI_API_KEY", fake_openai.api_key)
    saved_template(runner)
    at = open_app(request=REQUEST.format(order="66001"))
    offer = keyed_block(at, "template_offer")
    assert offer is not None, "no offer on screen"
    assert "A saved plan fits: **order-status** (100% alike)" in offer.info[0].value
    param = at.text_input(key="template_param_order-status_order_id")
    assert param.value == "66001"  # read from the request
    at.button(key="template_use").click().run()
    assert not at.exception, [e.value for e in at.exception]
    plan = at.session_state["plan"]
    assert plan.steps[0].args == {"order_id": "66001"}
    assert plan.steps[0].description == "Look up order 66001 in the shop"
    assert at.session_state["plan_request"] == REQUEST.format(order="66001")
    assert fake_openai.chat_bodies == []  # no routing, no planning


def test_an_unrelated_request_is_offered_nothing(runner):
    saved_template(runner)
    at = open_app(request="Research the current state of AI coding tools.")
    assert keyed_block(at, "template_offer") is None


def test_the_plan_under_review_is_saved_as_a_template(runner):
    at = open_app()
    at.button(key="scenario_shop-refund").click().run()
    at.button(key="generate_plan").click().run()
    assert not at.exception, [e.value for e in at.exception]
    at.text_input(key="template_save_name").input("vacuum-and-refund")
    at.button(key="template_save_confirm").click().run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.success[-1].value.startswith("Saved template vacuum-and-refund with parameters:")
    [template] = TemplateLibrary(runner.store).list_templates()
    assert "{{order_id}}" in template.request


def test_a_name_with_spaces_is_refused_in_one_line_with_a_valid_one_filled_in(runner):
    at = open_app()
    at.button(key="scenario_shop-refund").click().run()
    at.button(key="generate_plan").click().run()
    at.text_input(key="template_save_name").input("vacuum and refund")
    at.button(key="template_save_confirm").click().run()
    assert not at.exception, [e.value for e in at.exception]
    [refused] = at.error
    assert "'vacuum and refund' is not a template name" in refused.value
    assert "vacuum-and-refund would do (now in the name box" in refused.value
    assert "\n" not in refused.value
    assert at.text_input(key="template_save_name").value == "vacuum-and-refund"
    assert TemplateLibrary(runner.store).list_templates() == []
    at.button(key="template_save_confirm").click().run()
    assert at.success[-1].value.startswith("Saved template vacuum-and-refund with parameters:")
    assert [t.name for t in TemplateLibrary(runner.store).list_templates()] == [
        "vacuum-and-refund"]


def test_a_template_opens_on_the_plan_page_as_a_draft_filled_with_the_values_given(runner):
    saved_template(runner)
    at = open_app(TEMPLATES)
    card = keyed_block(at, "template_order-status")
    assert "It opens as a draft on the Plan page: nothing runs until you approve it there." \
        in shown(block_text(card))
    order = at.text_input(key="template_use_order-status_order_id")
    assert order.value == "88231"  # the saved value, to start from
    order.input("66001")
    at.button(key="template_open_order-status").click().run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.title[0].value == "Plan"  # on the Plan page, the plan in review
    plan = at.session_state["plan"]
    assert plan.steps[0].args == {"order_id": "66001"}
    assert plan.steps[0].description == "Look up order 66001 in the shop"
    assert at.text_area(key="request").value == REQUEST.format(order="66001")
    assert at.button(key="approve_run").disabled is False
    assert runner.store.list_runs() == []  # a draft to review: nothing ran


def test_opening_a_template_says_it_replaces_the_plan_under_review(runner):
    saved_template(runner)
    at = open_app()
    at.button(key="scenario_shop-refund").click().run()
    at.button(key="generate_plan").click().run()
    at.switch_page(TEMPLATES)
    at.run()
    assert "It replaces the plan now on the Plan page" in shown(
        block_text(keyed_block(at, "template_order-status")))


def test_a_value_a_template_cannot_take_is_said_on_its_card_and_nothing_opens(runner):
    plan = Plan(goal="Refund order 88231 within a budget of 2000", steps=[
        Step(id="s1", description="Refund order 88231", tool="apply_refund",
             args={"order_id": "88231", "amount": 2000})])
    TemplateLibrary(runner.store).save_plan("refund-within", plan, plan.goal)
    at = open_app(TEMPLATES)
    at.text_input(key="template_use_refund-within_amount").input("lots")
    at.button(key="template_open_refund-within").click().run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.title[0].value == "Plan templates"  # still here
    [said] = at.error
    assert said.value == "parameter amount takes a number, not 'lots'"

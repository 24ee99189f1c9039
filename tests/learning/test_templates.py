"""Plan templates: parameters from the request's values, filling them, fitting a request,
and the library in the run store (SQLite and PostgreSQL)."""

from __future__ import annotations

import pytest

from core.errors import ConfigError
from core.learning.templates import (
    FIT_THRESHOLD,
    TemplateLibrary,
    check_name,
    guess_values,
    similarity,
    suggest_name,
)
from core.plan.model import Plan, Step
from core.plan.template import fill, parameterize
from core.store.run_store import RunStore
from tests.support.pg import on_both_backends

REQUEST = "Check whether order 88231 has arrived; if it has, refund it within a budget of 2000."


def refund_plan() -> Plan:
    return Plan(goal=REQUEST, definition_of_done="order 88231 is refunded or known undelivered",
                steps=[
        Step(id="s1", description="Look up order 88231", tool="query_order",
             args={"order_id": "88231"}),
        Step(id="s2", description="Refund order 88231 if it was delivered", tool="apply_refund",
             args={"order_id": "88231", "amount": 2000, "reason": "broken"},
             depends_on=["s1"], condition="s1.status == 'delivered'"),
        Step(id="s3", description="Summarise", depends_on=["s1", "s2"]),
    ])


def test_values_from_the_request_become_parameters_named_after_their_argument():
    template = parameterize(refund_plan(), REQUEST)
    assert [(p.name, p.example, p.kind) for p in template.parameters] == [
        ("order_id", "88231", "text"), ("amount", "2000", "integer")]
    steps = template.plan["steps"]
    assert steps[0]["args"] == {"order_id": "{{order_id}}"}
    assert steps[1]["args"] == {"order_id": "{{order_id}}", "amount": "{{amount}}",
                                "reason": "broken"}  # not in the request: kept as it was
    assert steps[1]["description"] == "Refund order {{order_id}} if it was delivered"
    assert template.plan["definition_of_done"].startswith("order {{order_id}} is refunded")
    assert template.request == ("Check whether order {{order_id}} has arrived; if it has, "
                                "refund it within a budget of {{amount}}.")


def test_a_value_inside_a_longer_number_or_word_is_not_a_parameter():
    plan = Plan(goal="g", steps=[Step(id="s1", description="d", tool="t",
                                      args={"code": "823", "name": "pay"})])
    template = parameterize(plan, "Look at 88231 and the payments service, 订单823到了吗")
    assert [p.name for p in template.parameters] == ["code"]  # found against Chinese text


def test_filling_a_template_gives_a_fresh_plan_with_the_values_and_their_types():
    template = parameterize(refund_plan(), REQUEST)
    plan, request = fill(template, {"order_id": "66001", "amount": "1500"})
    assert request == ("Check whether order 66001 has arrived; if it has, refund it within "
                       "a budget of 1500.")
    assert plan.steps[0].args == {"order_id": "66001"}
    assert plan.steps[1].args == {"order_id": "66001", "amount": 1500, "reason": "broken"}
    assert plan.steps[1].condition == "s1.status == 'delivered'"
    assert plan.goal == request
    assert all(step.status == "pending" and step.result is None for step in plan.steps)


@pytest.mark.parametrize(("values", "says"), [
    ({"order_id": "66001"}, "missing: amount (its parameters are: order_id, amount)"),
    ({"order_id": "1", "amount": "5", "budget": "9"},
     "no parameter budget; its parameters are: order_id, amount"),
    ({"order_id": "1", "amount": "lots"}, "parameter amount takes a number, not 'lots'"),
])
def test_a_missing_unknown_or_mistyped_parameter_is_a_one_line_error(values, says):
    with pytest.raises(ConfigError) as raised:
        fill(parameterize(refund_plan(), REQUEST), values)
    assert says in str(raised.value) and "\n" not in str(raised.value)


def test_a_request_like_the_templates_fits_and_its_values_are_read_from_it():
    template = parameterize(refund_plan(), REQUEST)
    alike = "Check whether order 66001 has arrived; if it has, refund it within a budget of 900."
    assert similarity(alike, template.request) == 1.0
    assert guess_values(template, alike) == {"order_id": "66001", "amount": "900"}
    assert similarity("Write a poem about the sea", template.request) < FIT_THRESHOLD


@pytest.mark.parametrize("name", ["", "two words", "-dash-first", "x" * 65, "a/b"])
def test_an_invalid_name_is_refused(name):
    with pytest.raises(ConfigError, match="is not a template name"):
        check_name(name)


@pytest.mark.parametrize(("name", "suggestion"), [
    ("refund check", "refund-check"), ("  退款 检查 ", "退款-检查"), ("-a / b!", "a-b"),
    ("x" * 70, "x" * 64)])
def test_a_name_with_spaces_or_punctuation_is_refused_with_a_valid_one_to_use(name,
                                                                             suggestion):
    with pytest.raises(ConfigError, match=f"is not a template name: .*; {suggestion} would do$"):
        check_name(name)
    assert suggest_name(name) == suggestion and check_name(suggestion) == suggestion


def test_a_name_with_nothing_usable_is_refused_with_an_example():
    assert suggest_name("!!!") == ""
    with pytest.raises(ConfigError, match=r"\(for example refund-if-delivered\)$"):
        check_name("!!!")


@on_both_backends
def test_the_library_saves_lists_fits_and_deletes_templates(monkeypatch):
    monkeypatch.setenv("USER", "ada")
    monkeypatch.setenv("LOGNAME", "ada")
    store = RunStore()
    library = TemplateLibrary(store)
    saved = library.save_plan("refund-check", refund_plan(), REQUEST, source_run="r1")
    assert saved.saved_by == "ada" and saved.created_at is not None
    with pytest.raises(ConfigError, match="a template named refund-check already exists"):
        library.save_plan("refund-check", refund_plan(), REQUEST)
    [listed] = library.list_templates()
    assert listed.name == "refund-check" and listed.source_run == "r1"
    assert listed.parameters == saved.parameters and listed.plan == saved.plan
    fit = library.best_fit("Check whether order 70412 has arrived; if it has, refund it "
                           "within a budget of 300.")
    assert fit is not None and fit.template.name == "refund-check"
    assert fit.values == {"order_id": "70412", "amount": "300"}
    assert library.best_fit("What is the weather in Paris?") is None
    library.delete("refund-check")
    assert library.list_templates() == []
    with pytest.raises(ConfigError, match="no template 'refund-check'"):
        library.get("refund-check")
    with pytest.raises(ConfigError, match="no template 'refund-check'"):
        library.delete("refund-check")
    store.close()

"""A lookup left without the identifier it needs reads it from the one tool that returns it.

On the local 1.5B model "Where is the parcel for order 70412 right now?" was planned as one
parcel lookup on the description's example tracking number; cleared, the executor took the
order number for a tracking number, and four replans never looked the order up (492 s,
failed). The final repair makes the lookup read the tracking number from a step of the tool
whose declared result holds it, given the order the request names.
"""

from __future__ import annotations

import pytest

from core.plan.model import Plan, Step
from core.planning.checks import check_context, run_checks
from core.tools.registry import ToolRegistry, make_tool

PARCEL_EN = "Where is the parcel for order 70412 right now?"
PARCEL_ZH = "订单 70412 的快递现在到哪里了？"


def _repaired(plan: Plan, registry: ToolRegistry, language: str = "en") -> list[str]:
    context = check_context(plan.goal, registry, "draft", language=language)
    return [problem.code for problem in run_checks(plan, context, "final")]


def _track(args: dict | None = None, depends_on: tuple[str, ...] = ()) -> Step:
    return Step(id="s1", description="Track the parcel", tool="query_logistics",
                args={"tracking_no": "SF0000000000"} if args is None else args,
                depends_on=list(depends_on))


def _answer(*reads: str) -> Step:
    return Step(id="s2", description="Answer", depends_on=list(reads))


@pytest.mark.parametrize(("request_text", "language", "description"), [
    (PARCEL_EN, "en", "Look up order 70412 and its status"),
    (PARCEL_ZH, "zh", "查询订单 70412 的详情，确认商品和状态"),
])
def test_an_invented_tracking_number_becomes_the_named_orders(registry, request_text, language,
                                                              description):
    plan = Plan(goal=request_text, steps=[_track(), _answer("s1")])
    codes = _repaired(plan, registry, language)
    assert codes == ["check.invented_id_removed", "check.id_source_added"]
    lookup, track, _ = plan.steps
    assert (lookup.id, lookup.tool, lookup.args) == ("s3", "query_order", {"order_id": "70412"})
    assert lookup.description == description
    assert track.args == {"tracking_no": "{{s3.tracking_no}}"} and track.depends_on == ["s3"]
    assert plan.validate(registry) == []


def test_a_lookup_the_plan_already_makes_is_waited_for_instead_of_added(registry):
    order = Step(id="s1", description="Look up the order", tool="query_order",
                 args={"order_id": "70412"})
    track = Step(id="s2", description="Track it", tool="query_logistics", args={})
    plan = Plan(goal=PARCEL_EN, steps=[order, track, Step(id="s3", description="Answer",
                                                          depends_on=["s1", "s2"])])
    assert _repaired(plan, registry) == ["check.id_source_linked"]
    assert [step.id for step in plan.steps] == ["s1", "s2", "s3"]
    assert track.args == {"tracking_no": "{{s1.tracking_no}}"} and track.depends_on == ["s1"]


def test_a_failed_lookup_is_not_read_from_but_looked_up_again(registry):
    failed = Step(id="s1", description="Look up the order", tool="query_order",
                  args={"order_id": "70412"}, status="failed")
    track = Step(id="s2", description="Track it", tool="query_logistics", args={})
    plan = Plan(goal=PARCEL_EN, steps=[failed, track])
    assert _repaired(plan, registry) == ["check.id_source_added"]
    assert track.args == {"tracking_no": "{{s3.tracking_no}}"}


def test_a_problem_elsewhere_in_the_plan_does_not_stop_the_repair(registry):
    plan = Plan(goal=PARCEL_EN, steps=[_track(), _answer("s1", "s9")])  # s9: no such step
    before = plan.validate(registry)
    assert "check.id_source_added" in _repaired(plan, registry)
    assert plan.validate(registry) == before


def test_a_request_naming_no_order_gets_no_lookup_of_one(registry):
    plan = Plan(goal="Where is my parcel?", steps=[_track(), _answer("s1")])
    assert _repaired(plan, registry) == ["check.invented_id_removed"]
    assert [step.tool for step in plan.steps] == ["query_logistics", None]
    assert plan.step("s1").args == {}  # missing: to be asked for, never a guess


def test_a_step_that_waits_for_a_lookup_returning_the_field_is_right_as_written(registry):
    """The executor fills it from that result when it runs: a right plan is left alone."""
    order = Step(id="s3", description="Look up the order", tool="query_order",
                 args={"order_id": "70412"})
    plan = Plan(goal=PARCEL_EN, steps=[order, _track({}, depends_on=("s3",)), _answer("s1")])
    assert _repaired(plan, registry) == []
    assert plan.step("s1").args == {} and plan.step("s1").depends_on == ["s3"]


def test_two_dependencies_returning_the_field_are_left_to_the_executor(registry):
    order = Step(id="s3", description="Look up the order", tool="query_order",
                 args={"order_id": "70412"})
    earlier = Step(id="s4", description="Track it once", tool="query_logistics",
                   args={"tracking_no": "{{s3.tracking_no}}"}, depends_on=["s3"])
    track = _track({}, depends_on=("s3", "s4"))
    plan = Plan(goal=PARCEL_EN, steps=[order, earlier, track, _answer("s1")])
    assert _repaired(plan, registry) == []
    assert track.args == {}


# ---- a person's own tools: no pack, no rule draft ---------------------------------------------

def find_customer(customer_no: str) -> dict:
    """Find a customer by number.

    Args:
        customer_no: the customer's number.
    """
    return {"customer_no": customer_no, "account_id": "A-1"}


def get_account(account_id: str) -> dict:
    """An account's balance.

    Args:
        account_id: the account's id.
    """
    return {"account_id": account_id, "balance": 12.5}


def find_invoice(invoice_no: str) -> dict:
    """An invoice, with the account it bills.

    Args:
        invoice_no: the invoice's number.
    """
    return {"invoice_no": invoice_no, "account_id": "A-1"}


def _crm(*extra) -> ToolRegistry:
    registry = ToolRegistry()
    registry.add(make_tool(find_customer, read_only=True, output_schema={
        "type": "object", "properties": {"customer_no": {"type": "string"},
                                         "account_id": {"type": "string"}}}))
    registry.add(make_tool(get_account, read_only=True, output_schema={
        "type": "object", "properties": {"account_id": {"type": "string"},
                                         "balance": {"type": "number"}}}))
    for fn in extra:
        registry.add(make_tool(fn, read_only=True, output_schema={
            "type": "object", "properties": {"account_id": {"type": "string"}}}))
    return registry


def _balance(goal: str) -> Plan:
    return Plan(goal=goal, steps=[
        Step(id="s1", description="Read the balance", tool="get_account", args={}),
        Step(id="s2", description="Answer", depends_on=["s1"])])


def test_a_persons_tools_get_the_lookup_their_declared_results_call_for():
    registry = _crm()
    plan = _balance("What is the balance of customer #C-4711?")
    assert _repaired(plan, registry) == ["check.id_source_added"]
    found, balance, _ = plan.steps
    assert (found.tool, found.args) == ("find_customer", {"customer_no": "C-4711"})
    assert found.description == "Find what s1 needs with find_customer"
    assert balance.args == {"account_id": "{{s3.account_id}}"}


def test_the_new_steps_description_is_in_the_requests_language():
    plan = _balance("customer 4711 的余额是多少？")
    assert _repaired(plan, _crm(), "zh") == ["check.id_source_added"]
    assert plan.steps[0].description == "用 find_customer 查出 s1 需要的信息"


def test_two_tools_returning_the_field_leave_the_choice_to_the_model():
    plan = _balance("What is the balance of customer 4711?")
    assert _repaired(plan, _crm(find_invoice)) == []
    assert [step.tool for step in plan.steps] == ["get_account", None]

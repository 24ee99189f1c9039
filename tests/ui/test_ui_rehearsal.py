"""AppTest of the Plan page's Rehearse button: the problems a run would meet, by step id, with
no tool called and no run recorded."""

from __future__ import annotations

import pytest

from core.plan.model import Plan, Step
from tests.support.app import block_text, keyed_block, open_app
from tests.support.shown import shown
from tests.toolsets import counted

# the parcel tools, set before the app's runner (tests/ui/conftest.py) is made with them
pytestmark = pytest.mark.usefixtures("parcel_tools")


def _report(at) -> str:
    """Everything the rehearsal report shows, as a reader sees it: its alerts, then its
    captions."""
    block = keyed_block(at, "rehearsal_report")
    alerts = [a.value for kind in ("error", "warning", "success") for a in block.get(kind)]
    return shown("\n".join([*alerts, block_text(block)]))


def _parcel_plan(condition: str = "s1.status == 'lost'",
                 message: str = "Tracking: {{s1.tracking_number}}") -> Plan:
    return Plan(goal="Tell the customer about parcel P-1", steps=[
        Step(id="s1", description="Find the shipment", tool="find_shipment",
             args={"shipment_id": "P-1"}),
        Step(id="s2", description="Text its tracking number", tool="notify_customer",
             args={"message": message}, depends_on=["s1"]),
        Step(id="s3", description="File a claim if it is lost", tool="file_claim",
             args={"shipment_id": "{{s1.shipment_id}}"}, depends_on=["s1"],
             condition=condition),
        Step(id="s4", description="Summarise", depends_on=["s1", "s2", "s3"])])


def test_rehearse_shows_the_problems_by_step_and_runs_nothing(runner):
    at = open_app(plan=_parcel_plan())
    assert keyed_block(at, "rehearsal_report") is None
    assert "Calls no tool" in at.button(key="rehearse_plan").help
    at.button(key="rehearse_plan").click().run()
    assert not at.exception, [e.value for e in at.exception]
    report = _report(at)
    assert "2 problem(s) the run would meet" in report
    assert "s2: {{s1.tracking_number}} reads 'tracking_number' of s1" in report
    assert "s3: s1.status == 'lost' in its condition can never be true" in report
    assert "s3: would call file_claim, which has a side effect" in report
    assert counted.calls() == []
    assert runner.store.list_runs() == []


def test_the_rehearsal_is_worded_in_chinese_and_goes_when_the_plan_changes(runner):
    at = open_app(language="zh", plan=_parcel_plan())
    assert at.button(key="rehearse_plan").label == "排练"
    at.button(key="rehearse_plan").click().run()
    report = _report(at)
    assert "运行时会遇到 2 个问题" in report and "永远不会成立" in report
    at.session_state["plan"] = _parcel_plan("s1.status == 'delivered'", "{{s1.carrier}}")
    at.run()
    assert keyed_block(at, "rehearsal_report") is None  # it rehearsed another plan
    at.button(key="rehearse_plan").click().run()
    assert "排练：没有发现问题。" in _report(at)


def test_a_plan_with_validation_problems_cannot_be_rehearsed(runner):
    at = open_app(plan=Plan(goal="g", steps=[Step(id="s1", description="")]))
    assert at.button(key="rehearse_plan").disabled

"""AppTest: after "Reset demo data", the next customer-service demo asks for the refund again.

A first demo refunds order 88231; without a reset the next demo finds the order already
refunding and skips the refund (nothing to show a stakeholder); after the Plan page's reset
the same demo stops at the refund and waits for a person, as the first one did.
"""

from __future__ import annotations

from core.runs.runner import Runner
from tests.support.app import open_app, wait_for
from tests.support.waiting import DEFAULT_TIMEOUT_S


def _customer_service_demo(*, again: bool = False):
    """A new session: the scenario, its offline plan, approved on the Plan page. ``again``:
    the same version ran before, so the page says so and the presenter starts another run."""
    at = open_app(language="en")
    at.button(key="scenario_shop-refund").click().run()
    at.button(key="generate_plan").click().run()
    assert at.session_state["plan"].step("s3").tool == "apply_refund"
    at.button(key="approve_run").click().run()
    assert not at.exception, [e.value for e in at.exception]
    if again:
        assert "run" not in at.query_params  # one approval of a version, one run
        at.button(key="start_another_run").click().run()
        assert not at.exception, [e.value for e in at.exception]
    return at, at.query_params["run"]


def _asks_for_the_refund(runner: Runner, at, run_id: str) -> bool:
    record = runner.wait(run_id, DEFAULT_TIMEOUT_S, until_confirmation=True)
    if record.status != "waiting_confirmation":
        return False
    wait_for(at, lambda a: any(b.key == "confirm_step_s3" for b in a.button))
    return True


def test_reset_demo_data_makes_the_next_demo_ask_for_the_refund_again(runner):
    at, first = _customer_service_demo()
    assert _asks_for_the_refund(runner, at, first)
    at.button(key="confirm_step_s3").click().run()
    assert not at.exception, [e.value for e in at.exception]
    assert "run_error" not in at.session_state, at.session_state["run_error"]
    # the click reached the page's handler, which sent the decision (a rare failure below
    # said the run still waited: this tells a lost click from a lost message)
    assert (first, "s3") in at.session_state["decided"]
    assert runner.wait(first, DEFAULT_TIMEOUT_S).status == "completed"
    assert runner.store.get_run(first).plan.step("s3").result["refund_id"]

    at, second = _customer_service_demo(again=True)
    assert not _asks_for_the_refund(runner, at, second)  # already refunding: skipped
    assert runner.store.get_run(second).plan.step("s3").status == "skipped"

    page = open_app(language="en")
    page.button(key="reset_demo").click().run()
    page.button(key="reset_demo_confirm").click().run()
    assert not page.exception, [e.value for e in page.exception]

    at, third = _customer_service_demo(again=True)
    assert _asks_for_the_refund(runner, at, third)
    assert runner.store.get_run(third).plan.step("s2").result["status"] == "delivered"
    runner.cancel(third, timeout=DEFAULT_TIMEOUT_S)  # end the demo: nothing left waiting

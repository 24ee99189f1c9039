"""AppTest of roles on the pages and of the Audit page.

Without sign-in the dashboard acts as the OS user that serves it, and under a roles file it
is checked as that person: a roles file making the OS user a viewer gives the pages a
viewer. A viewer's Confirm button is disabled (a click forged for it is dropped by
Streamlit); a click on a button drawn while the person still had the role reaches core,
which refuses it and runs nothing.
"""

from __future__ import annotations

from core.access.identity import Actor, os_actor
from core.access.policy import grant_role
from core.access.roles import roles_file
from core.execution.scheduler import RunOptions
from core.llm.engine import Engine
from core.plan.model import Plan, Step
from core.tools.toolsets import default_registry
from tests.support.app import open_app
from tests.support.shop import refunds_for
from tests.support.waiting import DEFAULT_TIMEOUT_S

APPROVER = Actor("ann@example.com", "sign-in")


def _roles(me: str) -> None:
    path = roles_file()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f'[emails]\n"ann@example.com" = "approver"\n'
                    f'[os_users]\n"{os_actor().name}" = "{me}"\n', encoding="utf-8")


def _waiting_refund(runner) -> str:
    plan = Plan(goal="Refund order 88231", steps=[
        Step(id="s1", description="Look up order 88231", tool="query_order",
             args={"order_id": "88231"}),
        Step(id="s2", description="Refund it", tool="apply_refund",
             args={"order_id": "88231", "reason": "broken"}, depends_on=["s1"])])
    run_id = runner.start(plan.goal, plan, engine=Engine(default_registry()),
                          options=RunOptions(confirm_side_effects=True),
                          settings_public={"offline": True}, actor=APPROVER)
    assert runner.wait(run_id, DEFAULT_TIMEOUT_S, until_confirmation=True).status == (
        "waiting_confirmation")
    return run_id


def test_a_confirmation_posted_by_a_viewer_is_refused_and_nothing_runs(runner):
    _roles("viewer")
    run_id = _waiting_refund(runner)
    at = open_app("pages/run.py", query={"run": run_id})
    confirm = at.button(key="confirm_step_s2")
    assert confirm.disabled and at.button(key="run_cancel").disabled
    assert "Started by ann@example.com" in " ".join(c.value for c in at.caption)
    confirm.proto.disabled = False  # sent anyway, as a hand-made message would be
    confirm.click().run()  # Streamlit drops a disabled widget's click: nothing reaches core
    assert runner.store.get_run(run_id).status == "waiting_confirmation"

    _roles("approver")  # drawn for an approver, whose role is then taken away
    at = open_app("pages/run.py", query={"run": run_id})
    assert not at.button(key="confirm_step_s2").disabled
    _roles("viewer")
    at.button(key="confirm_step_s2").click().run()  # core checks the person again
    assert "may not approve side effects: that needs the approver role" in at.error[0].value
    assert runner.store.get_run(run_id).status == "waiting_confirmation"
    assert refunds_for("88231") == []
    runner.confirm(run_id, "s2", actor=APPROVER)
    assert runner.wait(run_id, DEFAULT_TIMEOUT_S).status == "completed"
    at = open_app("pages/run.py", query={"run": run_id})  # the run page says who did what
    [acts] = [e for e in at.expander if e.label == "Who did what"]
    done = " ".join(m.value for m in acts.markdown)
    assert "ann@example.com (signed in) approved version 1" in done
    assert "ann@example.com (signed in) confirmed step s2" in done


def test_a_viewer_does_not_plan_and_an_editor_may_not_approve_a_side_effect(runner):
    _roles("viewer")
    at = open_app()
    assert "planning needs the editor role" in at.info[0].value
    assert not [b for b in at.button if b.key == "generate_plan"]
    _roles("editor")
    at = open_app()
    at.button(key="scenario_shop-refund").click().run()
    at.button(key="generate_plan").click().run()
    assert at.button(key="approve_run").disabled
    assert "Needs the approver role." in " ".join(c.value for c in at.caption)
    assert not [b for b in at.button if b.key == "reset_demo"]  # an admin's


def test_the_audit_page_lists_who_did_what_with_filters(runner):
    _roles("admin")
    run_id = _waiting_refund(runner)
    runner.confirm(run_id, "s2", actor=APPROVER)
    runner.wait(run_id, DEFAULT_TIMEOUT_S)
    grant_role(runner.store, "eve@example.com", "editor", os_actor())
    at = open_app("pages/audit.py")
    shown = at.table[0].value.to_string()
    for expected in ("ann@example.com", "approved", "confirmed", "s2", run_id, "gave a role"):
        assert expected in shown
    at.selectbox(key="audit_action").set_value("confirm").run()
    shown = at.table[0].value.to_string()
    assert "confirmed" in shown and "approved" not in shown
    assert "`eve@example.com` · editor" in " ".join(m.value for m in at.markdown)
    at.button(key="audit_revoke_eve@example.com").click().run()
    assert not [m for m in at.markdown if "eve@example.com" in m.value]


def test_a_key_typed_into_the_sidebar_stays_in_that_session(runner):
    first = open_app()
    first.sidebar.text_input(key="api_key").input("sk-first-person-SECRET-0001").run()
    assert any("the key typed here" in c.value for c in first.sidebar.caption)
    second = open_app()  # another person's session of the same server process
    assert second.session_state["api_key"] == ""
    assert any(c.value.startswith("No API key") for c in second.sidebar.caption)
    assert not any("typed here" in c.value for c in second.sidebar.caption)

"""The run view: the facts the run page draws, computed from the store."""

from __future__ import annotations

import ast
from pathlib import Path

from core.base.usage import Usage
from core.execution.events import RunEvent
from core.lifecycle import RUN_STATUSES, STEP_STATUSES
from core.plan.model import Plan, Step
from core.runs.view import load_run_view
from core.store.run_store import RunStore
from core.store.schema import VERSION_SOURCES
from tests.support import REPO
from ui.i18n import TEXT


def _plan(version: int = 1) -> Plan:
    return Plan(goal="refund", version=version, steps=[
        Step(id="s1", description="look up", tool="query_order", args={"order_id": "1"},
             success_criteria="status is known"),
        Step(id="s2", description="refund", tool="apply_refund", depends_on=["s1"]),
        Step(id="s3", description="other refund", tool="apply_refund", depends_on=["s1"]),
        Step(id="s4", description="answer", depends_on=["s2", "s3"]),
    ])


def _log(store: RunStore, run_id: str, *events: RunEvent) -> None:
    for event in events:
        store.append_event(run_id, event)


def test_waiting_steps_checks_and_controls_of_a_run_waiting_for_a_person(store):
    plan = _plan()
    plan.steps[0].advance("running")
    plan.steps[0].advance("completed")
    run_id = store.create_run("refund", {}, plan, status="waiting_confirmation")
    _log(store, run_id,
         RunEvent(kind="step_started", step_id="s1"),
         RunEvent(kind="step_completed", step_id="s1",
                  data={"success": {"met": False, "reason": "no status"}}),
         RunEvent(kind="waiting_confirmation", step_id="s3"),
         RunEvent(kind="waiting_confirmation", step_id="s2"),
         RunEvent(kind="waiting_confirmation", step_id="s4"),
         RunEvent(kind="confirmed", step_id="s4"),
         RunEvent(kind="step_failed", step_id="s4", data={"failure_class": "fatal"}))
    view = load_run_view(store, run_id)
    assert view.waiting == ["s3", "s2"]
    assert view.checks["s1"].success.met is False
    assert view.checks["s1"].success.reason == "no status"
    assert view.checks["s4"].failure_class == "fatal"
    assert view.controls == {"pause", "cancel", "confirm"}
    assert (view.done_steps, view.total_steps) == (1, 4)
    assert not view.finished and not view.settled
    assert [e.seq for e in view.events] == list(range(1, 8))


def test_a_pause_clears_the_waiting_and_a_restart_drops_an_old_check(store):
    run_id = store.create_run("refund", {}, _plan(), status="paused")
    _log(store, run_id,
         RunEvent(kind="step_completed", step_id="s1", data={"success": {"reason": "ok"}}),
         RunEvent(kind="waiting_confirmation", step_id="s2"),
         RunEvent(kind="paused"),
         RunEvent(kind="step_started", step_id="s1"))
    view = load_run_view(store, run_id)
    assert view.waiting == [] and view.checks == {}
    assert view.controls == {"resume", "cancel", "confirm"}


def test_a_settled_run_offers_no_confirmation_even_if_the_log_asked(store):
    run_id = store.create_run("refund", {}, _plan(), status="interrupted")
    _log(store, run_id, RunEvent(kind="waiting_confirmation", step_id="s2"))
    view = load_run_view(store, run_id)
    assert view.waiting == [] and view.settled and not view.finished
    assert view.controls == {"resume", "cancel"}


def test_versions_carry_their_stored_source_and_the_replans_words(store):
    run_id = store.create_run("refund", {}, _plan())
    store.save_plan_version(run_id, _plan(2), reason="manual edit")
    _log(store, run_id, RunEvent(kind="replanned", plan_version=2, data={
        "to_version": 2, "source": "manual", "reason": "edited by a person before approval"}))
    store.record_step(run_id, RunEvent(kind="replanned", plan_version=3, data={
        "to_version": 3, "source": "retry", "reason": "look the order up again"}),
        _plan(3), reason="look the order up again")
    store.set_status(run_id, "failed")
    view = load_run_view(store, run_id)
    assert [(v.version, v.source, v.reason) for v in view.versions] == [
        (1, "draft", "initial plan"),
        (2, "manual", "edited by a person before approval"),
        (3, "retry", "look the order up again")]
    assert view.controls == {"follow_up", "rerun"} and view.finished and view.settled


def test_reflections_and_usage(store):
    plan = _plan()
    plan.steps[0].add_usage(2, 30, 5)
    run_id = store.create_run("refund", {}, plan, status="running")
    _log(store, run_id, RunEvent(kind="reflected", data={
        "root_cause": "wrong order", "lesson": "check the id", "should_retry": True,
        "retry_hint": "use 88231", "attempt": None, "tools": ["query_order"]}))
    view = load_run_view(store, run_id)
    assert [(r.attempt, r.root_cause, r.lesson, r.should_retry, r.retry_hint)
            for r in view.reflections] == [(1, "wrong order", "check the id", True, "use 88231")]
    assert view.usage == Usage(llm_calls=2, prompt_tokens=30, completion_tokens=5)
    store.finish_run(run_id, "completed", answer="done",
                     usage=Usage(llm_calls=7, prompt_tokens=1, completion_tokens=1), plans=[])
    assert load_run_view(store, run_id).usage.llm_calls == 7  # the run's total once finished


def test_every_status_and_source_has_a_label_in_both_languages():
    keys = ([f"run_status_{s}" for s in RUN_STATUSES] + [f"status_{s}" for s in STEP_STATUSES]
            + [f"source_{s}" for s in VERSION_SOURCES])
    assert [k for k in keys if k not in TEXT or not all(TEXT[k].values())] == []


def _imports(path: Path) -> set[str]:
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
    return found


def test_pages_and_widgets_read_runs_through_the_view():
    faces = [*REPO.glob("ui/*.py"), *REPO.glob("pages/*.py")]
    store_imports = {p.relative_to(REPO).as_posix(): sorted(
        m for m in _imports(p) if m.startswith("core.store")) for p in faces}
    assert {p: m for p, m in store_imports.items() if m} == {}
    source = (REPO / "ui" / "run_view.py").read_text(encoding="utf-8")
    assert ".kind ==" not in source and "data.get(" not in source

"""One approval of a plan version starts one run (core.runs.dispatch.record_new_run with
``once``): a second approval of the same request and plan, from another tab or process at
the same moment, is told which run the version has, and records nothing."""

from __future__ import annotations

import threading

import pytest

from core.base.messages import render
from core.errors import RunExistsError
from core.plan.model import Plan
from core.runs import dispatch
from core.store.run_store import RunStore
from tests.support.durable_runs import refund_plan

REQUEST = "Refund order 88231, it arrived broken"


def _approve(store: RunStore, plan: Plan, request: str = REQUEST, *, once: bool = True) -> str:
    return dispatch.record_new_run(store, request, plan, options=None,
                                   settings_public={"offline": True}, once=once).run_id


def test_two_processes_approving_one_version_at_once_record_one_run(isolated_environment):
    """Two stores on one database (as two processes hold), both approving at once: the
    database's key lets one record the run; the other is told its id."""
    stores = [RunStore(), RunStore()]
    start = threading.Barrier(len(stores))
    outcomes: list[str | RunExistsError] = []

    def approve(store: RunStore) -> None:
        start.wait()
        try:
            outcomes.append(_approve(store, refund_plan()))
        except RunExistsError as exc:
            outcomes.append(exc)

    threads = [threading.Thread(target=approve, args=(store,)) for store in stores]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    try:
        [run_id] = [o for o in outcomes if isinstance(o, str)]
        [refused] = [o for o in outcomes if isinstance(o, RunExistsError)]
        assert refused.run_id == run_id
        assert [r.run_id for r in stores[0].list_runs()] == [run_id]
        assert render(refused.message, "en").startswith(f"run {run_id} exists already")
        assert f"运行 {run_id} 已经存在" in render(refused.message, "zh")
    finally:
        for store in stores:
            store.close()


def test_a_second_approval_later_is_told_and_records_nothing(store):
    run_id = _approve(store, refund_plan())
    with pytest.raises(RunExistsError) as raised:
        _approve(store, refund_plan())  # the same version, drafted again
    assert raised.value.run_id == run_id
    assert [r.run_id for r in store.list_runs()] == [run_id]
    assert [v.version for v in store.plan_versions(run_id)] == [1]


def test_another_version_or_request_is_another_run_and_so_is_a_deliberate_second(store):
    edited = refund_plan()
    edited.steps[-1].description += " politely"
    first = _approve(store, refund_plan())
    runs = {first, _approve(store, edited), _approve(store, refund_plan(), "Refund 88231"),
            _approve(store, refund_plan(), once=False)}
    assert len(runs) == 4 and len(store.list_runs()) == 4
    assert dispatch.version_run_id(REQUEST, refund_plan()) == first

"""AppTest of the History page: the runs list, the status filter, opening a run, exports."""

from __future__ import annotations

import shutil

from core.execution.scheduler import RunOptions
from core.llm.engine import Engine
from core.plan.model import Plan, Step
from core.tools.toolsets import default_registry
from tests.support.app import open_app
from tests.support.shown import shown
from tests.support.waiting import DEFAULT_TIMEOUT_S


def _finished_run(runner, expression: str = "6 * 7") -> str:
    plan = Plan(goal=f"What is {expression}?", steps=[
        Step(id="s1", description="Calculate", tool="calculate", args={"expression": expression}),
    ])
    run_id = runner.start(plan.goal, plan, engine=Engine(default_registry()),
                          options=RunOptions(), settings_public={"offline": True})
    assert runner.wait(run_id, DEFAULT_TIMEOUT_S).status == "completed"
    return run_id


def test_no_runs_says_so(runner):
    at = open_app("pages/history.py")
    assert at.info[0].value == "No runs yet."


def test_runs_are_listed_filtered_and_opened(runner):
    first = _finished_run(runner, "6 * 7")
    second = _finished_run(runner, "1 + 1")
    at = open_app("pages/history.py")
    table = at.dataframe[0].value
    assert set(table["Run"]) == {first, second}
    assert set(table["Status"]) == {"Completed"}
    at.selectbox(key="history_status").set_value("failed").run()
    assert at.info[0].value == "No run has this status."
    at.selectbox(key="history_status").set_value("completed").run()
    at.selectbox(key="history_run").set_value(first).run()
    at.button(key="history_open").click().run()
    assert not at.exception
    assert at.query_params["run"] == first
    assert at.title[0].value == "Run"
    assert "What is 6 * 7?" in shown(" ".join(m.value for m in at.markdown))


def test_exports_are_offered_for_the_selected_run(runner):
    run_id = _finished_run(runner)
    at = open_app("pages/history.py")
    keys = {button.key for button in at.get("download_button")}
    expected = {"export_json", "export_md", "export_dot"}
    if shutil.which("dot"):
        expected.add("export_svg")
    else:
        assert "SVG needs the Graphviz 'dot' program" in at.warning[0].value
    assert expected <= keys
    assert run_id in at.selectbox(key="history_run").value


def test_svg_export_without_graphviz_shows_a_clear_message(runner, monkeypatch):
    _finished_run(runner)
    monkeypatch.setattr(shutil, "which", lambda name: None)
    at = open_app("pages/history.py")
    assert at.warning[0].value == "SVG needs the Graphviz 'dot' program, which is not installed."
    keys = {button.key for button in at.get("download_button")}
    assert "export_svg" not in keys and "export_json" in keys


def test_the_dot_export_marks_side_effect_steps(runner):
    from core.runs.export import export_run

    plan = Plan(goal="Refund order 88231", steps=[
        Step(id="s1", description="Look up order 88231", tool="query_order",
             args={"order_id": "88231"}),
        Step(id="s2", description="Refund it", tool="apply_refund", depends_on=["s1"],
             args={"order_id": "88231", "reason": "broken"}),
    ])
    run_id = runner.start(plan.goal, plan, engine=Engine(default_registry()),
                          options=RunOptions(confirm_side_effects=False),
                          settings_public={"offline": True})
    assert runner.wait(run_id, DEFAULT_TIMEOUT_S).status == "completed"
    dot = export_run(runner.store, run_id, "dot")
    assert "s2 · apply_refund" in dot and "s1 · query_order" in dot
    assert "⚠ ✓ s2 · apply_refund" in dot and "⚠ ✓ s1" not in dot

"""The run at a glance (core.runs.timeline): bars on lanes, waits, model and tool time,
markers and the cost meter; as text for ``show`` and as a Mermaid gantt in the export."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from core.cli.main import main
from core.execution.events import RunEvent
from core.plan.model import Plan, Step
from core.runs.export import export_run
from core.runs.timeline import run_timeline, timeline_mermaid, timeline_text

T0 = datetime(2026, 12, 1, 12, 0, 0, tzinfo=UTC)
HOSTILE = "bad\nclick t1 href \"https://example.com/x.png\" : # ; <img src=x>"


def _at(seconds: float) -> datetime:
    return T0 + timedelta(seconds=seconds)


def _plan() -> Plan:
    plan = Plan(goal="refund", steps=[
        Step(id="s1", description="look up", tool="query_order", args={"order_id": "1"}),
        Step(id="s2", description="count", tool="calculate", args={"expression": "1+1"},
             depends_on=["s1"]),
        Step(id="s3", description="refund", tool="apply_refund", depends_on=["s1"]),
    ])
    for step in plan.steps:
        step.advance("running")
        step.advance("completed")
    plan.steps[0].add_usage(2, 300, 50)
    return plan


def _recorded_run(store) -> str:
    """s1 (ready at 0, started 0.1, ended 0.6: 0.3 s of model and 0.1 s of tools after
    0.2 s of waiting), then s2 (its tools from 1.45 s to 1.75 s) and s3 (waiting for a
    person from 0.7 s to 1.7 s, its tools to 1.8 s) side by side; a replan at 2.0 s."""
    run_id = store.create_run("refund", {}, _plan(), status="completed",
                              options={"estimate": {"llm_calls": 4}})
    done = {"work_s": 0.4, "tool_s": 0.1}
    for seconds, kind, step, data in [
        (0.0, "run_started", None, {}),
        (0.1, "step_started", "s1", {}),
        (0.6, "step_completed", "s1", done),
        (0.6, "step_started", "s2", {}),
        (0.7, "waiting_confirmation", "s3", {}),
        (1.7, "confirmed", "s3", {}),
        (1.7, "step_started", "s3", {}),
        (1.75, "step_completed", "s2", {"work_s": 0.3, "tool_s": 0.3}),
        (1.8, "step_completed", "s3", {"work_s": 0.1, "tool_s": 0.1}),
        (2.0, "replanned", None, {"to_version": 2, "reason": HOSTILE}),
    ]:
        store.append_event(run_id, RunEvent(kind=kind, step_id=step, data=data,
                                            at=_at(seconds)))
    return run_id


def _timeline(store, run_id):
    return run_timeline(store.get_run(run_id), store.events(run_id))


def test_bars_lanes_waits_model_and_tool_time_markers_and_the_meter(store):
    timeline = _timeline(store, _recorded_run(store))
    bars = {bar.step_id: bar for bar in timeline.bars}
    s1 = [(s.kind, s.start_s, s.end_s) for s in bars["s1"].segments]
    assert s1 == [("queued", 0.0, 0.2), ("model", 0.2, 0.5), ("tool", 0.5, 0.6)]
    assert (bars["s1"].llm_calls, bars["s1"].tokens) == (2, 350)
    assert [(s.kind, s.start_s, s.end_s) for s in bars["s2"].segments] == [
        ("queued", 0.6, 1.45), ("tool", 1.45, 1.75)]
    assert [(s.kind, s.start_s, s.end_s) for s in bars["s3"].segments][:2] == [
        ("queued", 0.6, 0.7), ("person", 0.7, 1.7)]
    assert bars["s3"].segments[-1].kind == "tool"
    # s2 and s3 worked at the same time: two lanes (waiting takes none)
    assert (bars["s1"].lane, bars["s2"].lane, bars["s3"].lane) == (0, 0, 1)
    assert timeline.lanes == 2 and timeline.span_s == 2.0
    assert [(m.kind, m.at_s, m.step_id) for m in timeline.markers] == [
        ("approved", 1.7, "s3"), ("replan", 2.0, None)]
    assert timeline.meter.estimated_calls == 4 and timeline.meter.calls == 2
    assert timeline.meter.fraction == 0.5


def test_an_edit_before_approval_is_at_the_start_and_nothing_is_before_it(store):
    """The edit a person made before approving is recorded before the run starts; drawn at
    -0.05 s, it made the chart's axis begin at -20 s."""
    run_id = store.create_run("refund", {}, _plan(), status="completed")
    for seconds, kind, step, data in [
        (-0.05, "replanned", None, {"to_version": 2,
                                    "reason": "edited by a person before approval"}),
        (0.0, "run_started", None, {}),
        (0.1, "step_started", "s1", {}),
        (0.6, "step_completed", "s1", {"work_s": 0.4, "tool_s": 0.1}),
    ]:
        store.append_event(run_id, RunEvent(kind=kind, step_id=step, data=data,
                                            at=_at(seconds)))
    timeline = _timeline(store, run_id)
    assert [(m.kind, m.at_s) for m in timeline.markers] == [("replan", 0.0)]
    assert min(s.start_s for bar in timeline.bars for s in bar.segments) == 0.0
    assert "◆ 0.00 s replanned to v2" in "\n".join(timeline_text(timeline, "en"))
    assert ":milestone, m1, 0, 1" in "\n".join(timeline_mermaid(timeline, "en"))


def test_show_prints_a_compact_text_timeline(store, capsys):
    run_id = _recorded_run(store)
    assert main(["show", run_id]) == 0
    out = capsys.readouterr().out
    assert "Timeline: 2.00 s on 2 lane(s)" in out
    assert "L1, L2 … are lanes: steps that ran at the same time sit on separate lanes" in out
    rows = [line for line in out.splitlines() if line.startswith(("s1 ", "s2 ", "s3 "))]
    assert len(rows) == 3 and all(row.count("|") == 2 for row in rows)
    assert "▓" in rows[0] and "█" in rows[0] and "▒" in rows[2]  # model, tools, a person
    assert "LLM calls: 2 of about 4 expected · 350 tokens" in out
    assert "s3 approved" in out and "replanned to v2" in out


def test_the_text_timeline_speaks_chinese():
    lines = timeline_text(run_timeline_of_nothing(), "zh")
    assert lines == ["时间线：还没有步骤开始执行。"]


def run_timeline_of_nothing():
    from core.store.schema import RunRecord

    record = RunRecord(run_id="r", request="x", status="planned", created_at=T0,
                       updated_at=T0, plan=_plan().model_copy(update={"steps": []}))
    return run_timeline(record, [])


def test_the_markdown_export_carries_a_mermaid_gantt_nothing_can_break_out_of(store):
    run_id = _recorded_run(store)
    report = export_run(store, run_id, "md")
    block = report.split("```mermaid\n", 1)[1].split("\n```", 1)[0].splitlines()
    assert block[:4] == ["---", "displayMode: compact", "---", "gantt"]
    assert "    dateFormat x" in block
    assert "    section s1 query_order" in block
    tasks = [line for line in block if line.startswith("    s1 ")]
    assert any(":active, " in line and line.endswith(", 200, 500") for line in tasks)  # model
    assert any(line.endswith(":t3, 500, 600") for line in tasks)  # tools, the default colour
    assert any(":done, " in line and line.endswith(", 0, 200") for line in tasks)  # waiting
    milestones = [line for line in block if ":milestone," in line]
    assert [m.rsplit(", ", 2)[1:] for m in milestones] == [["1700", "1701"], ["2000", "2001"]]
    for line in block:  # the hostile reason stays inside its task name
        assert not line.strip().startswith("click")
        assert "<" not in line and "#" not in line and '"' not in line
        if ":" in line and not line.startswith(("displayMode", "    dateFormat")):
            assert line.count(":") == 1  # one colon: between a task's name and its data
    assert "LLM calls: 2 of about 4 expected" in report


def test_the_mermaid_gantt_is_worded_in_the_reports_language(store):
    run_id = _recorded_run(store)
    block = "\n".join(timeline_mermaid(_timeline(store, run_id), "zh"))
    assert "title 时间线" in block and "s1 大模型" in block and "s1 工具" in block
    assert "s3 等人确认" in block and "重新规划为 v2" in block

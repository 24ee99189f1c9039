"""The run commands: runs, show, pause, resume, cancel, export (through the real CLI main).

A crashed run is crashed for real: a child process runs it and is SIGKILLed
(tests/support/child_runs.py); the command's runner records it as interrupted.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from core.cli.main import main
from core.execution.events import RunEvent
from core.llm.engine import Engine
from core.plan.model import CheckNote, Plan, Step
from core.runs import export as export_module
from core.store.run_store import RunStore
from core.tools.registry import make_tool
from core.tools.toolsets import default_registry
from tests.support.child_runs import crash_when, step_started
from tests.support.runs import Gate, await_mail_taken, slow_plan
from tests.support.waiting import DEFAULT_TIMEOUT_S

pytestmark = pytest.mark.usefixtures("dbos_of_the_module")

FAKE_KEY = "sk-test-SECRET123"


def calc_plan() -> Plan:
    return Plan(goal="sums", steps=[
        Step(id="s1", description="multiply", tool="calculate", args={"expression": "6*7"}),
        Step(id="s2", description="add", tool="calculate", args={"expression": "1+1"},
             depends_on=["s1"]),
    ])


def interrupted_run(store: RunStore, folder: Path) -> str:
    """A run whose process was SIGKILLed after s1 completed, while s2 (slow) was running."""
    plan = calc_plan()
    plan.steps[1] = Step(id="s2", description="slow", tool="slow", args={"label": "x"},
                         depends_on=["s1"])
    return crash_when(folder, plan, step_started(store, "s2"))


def fast_slow_engines(monkeypatch) -> None:
    """The engine a resumed run builds from its settings (offline) has a ``slow`` that
    returns at once (the child's own is gone with it)."""
    def engine_with_fast_slow(record):
        registry = default_registry()
        registry.add(make_tool(_fast_slow, name="slow", read_only=True))
        return Engine(registry=registry)

    monkeypatch.setattr("core.runs.recovery.engine_for_record", engine_with_fast_slow)


def run_json(capsys, *argv: str) -> tuple[int, object]:
    code = main(list(argv))
    out = capsys.readouterr().out
    return code, json.loads(out) if out.strip() else None


def test_runs_lists_newest_first_and_recovers_crashed_runs(store, capsys, tmp_path):
    assert run_json(capsys, "runs", "--json") == (0, [])
    first = store.create_run("first", {}, calc_plan(), status="completed")
    crashed = interrupted_run(store, tmp_path)
    assert store.get_run(crashed).status == "running"  # as the killed process left it
    code, listed = run_json(capsys, "runs", "--json")
    assert code == 0
    assert [r["run_id"] for r in listed] == [crashed, first]
    assert listed[0]["status"] == "interrupted"  # found at start-up: its process is gone
    assert set(listed[0]) == {"run_id", "status", "request", "created_at"}
    assert main(["runs"]) == 0
    assert crashed in capsys.readouterr().out


def test_show_json_is_the_run_object_plus_events(store, capsys):
    plan = calc_plan()
    plan.check_notes.append(CheckNote(check="implied_dependencies", stage="draft",
                                      action="changed", detail="s2 depends_on: — → s1"))
    run_id = store.create_run("sums", {}, plan, status="completed")
    store.append_event(run_id, RunEvent(kind="run_started"))
    code, shown = run_json(capsys, "show", run_id, "--json")
    assert code == 0
    assert {"run_id", "status", "answer", "plan", "versions", "usage", "wall_s",
            "events"} <= set(shown)
    assert shown["usage"] == {"llm_calls": 0, "prompt_tokens": 0, "completion_tokens": 0}
    assert shown["plan"]["steps"][0]["id"] == "s1" and shown["versions"] == 1
    assert [(n["check"], n["action"], n["detail"]) for n in shown["plan"]["check_notes"]] == [
        ("implied_dependencies", "changed", "s2 depends_on: — → s1")]
    assert [e["kind"] for e in shown["events"]] == ["run_started"]
    assert main(["show", run_id]) == 0
    out = capsys.readouterr().out
    assert "Plan v1: sums" in out
    assert ("check implied_dependencies changed the plan (v1, draft): s2 depends_on: — → s1"
            in out)


def test_unknown_run_is_exit_code_1(capsys):
    assert main(["show", "nope"]) == 1
    assert "no run 'nope'" in capsys.readouterr().err


def test_resume_yes_json_completes_an_interrupted_run(store, capsys, tmp_path, monkeypatch):
    run_id = interrupted_run(store, tmp_path)
    before = store.get_run(run_id).plan.step("s1")
    fast_slow_engines(monkeypatch)
    code, result = run_json(capsys, "resume", run_id, "--yes", "--json")
    assert code == 0
    assert result["run_id"] == run_id and result["status"] == "completed"
    steps = result["plan"]["steps"]
    assert steps[0]["result"] == before.result and before.result["value"] == 42
    assert steps[1]["result"] == {"label": "x"}
    kinds = [e.kind for e in store.events(run_id)]
    assert kinds.count("step_completed") == 2  # s1 was not run again
    assert kinds[kinds.index("step_reset"):][:3] == ["step_reset", "interrupted", "resumed"]
    assert main(["resume", run_id, "--yes"]) == 1  # nothing left to resume
    assert "already completed" in capsys.readouterr().err


def test_resume_without_yes_asks(store, capsys, monkeypatch, tmp_path):
    run_id = interrupted_run(store, tmp_path)
    monkeypatch.setattr("builtins.input", lambda prompt: "n")
    assert main(["resume", run_id]) == 1
    assert "Not resumed." in capsys.readouterr().out


def test_pause_and_cancel_from_the_command_line(store, capsys, tmp_path):
    run_id = interrupted_run(store, tmp_path)
    assert main(["pause", run_id]) == 1  # nobody runs it
    assert "resume it first" in capsys.readouterr().err
    assert main(["cancel", run_id]) == 0
    assert "cancelled" in capsys.readouterr().out
    record = store.get_run(run_id)
    assert record.status == "cancelled" and record.finished_at is not None
    assert [e.kind for e in store.events(run_id)][-1] == "cancelled"
    assert [s.status for s in record.plan.steps] == ["completed", "skipped"]


def test_pause_and_cancel_a_running_run_from_the_command_line(runner, store, capsys):
    gate = Gate()
    run_id = runner.start("slow", slow_plan(), engine=gate.engine())  # runs in this process
    assert gate.entered.wait(DEFAULT_TIMEOUT_S)
    assert main(["pause", run_id]) == 0  # the command's own runner: through the mailbox
    assert "Pause requested" in capsys.readouterr().out
    await_mail_taken(run_id, "pause")
    gate.open.set()
    assert runner.wait(run_id, timeout=DEFAULT_TIMEOUT_S).status == "paused"
    assert main(["cancel", run_id]) == 0
    assert f"run {run_id}: cancelled" in capsys.readouterr().out
    record = store.get_run(run_id)
    assert [s.status for s in record.plan.steps] == ["completed", "skipped", "skipped"]
    assert [e.kind for e in store.events(run_id)].count("step_started") == 1


def test_export_formats_and_missing_graphviz(store, capsys, tmp_path, monkeypatch):
    run_id = store.create_run("sums", {}, calc_plan(), status="completed")
    out = tmp_path / "report.md"
    assert main(["export", run_id, "--format", "md", "--out", str(out)]) == 0
    assert "## Plan versions" in out.read_text(encoding="utf-8")
    capsys.readouterr()
    assert main(["export", run_id, "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["run_id"] == run_id
    assert main(["export", run_id, "--format", "dot"]) == 0
    assert capsys.readouterr().out.startswith("digraph")
    monkeypatch.setattr(export_module.shutil, "which", lambda name: None)
    assert main(["export", run_id, "--format", "svg", "--out", str(tmp_path / "x.svg")]) == 1
    assert "Graphviz 'dot' program" in capsys.readouterr().err
    assert not (tmp_path / "x.svg").exists()


def test_cli_run_records_it_and_no_key_reaches_db_or_exports(tmp_path, capsys, monkeypatch,
                                                             isolated_environment):
    monkeypatch.setenv("OPENAI_API_KEY", FAKE_KEY)
    plan_file = tmp_path / "plan.json"
    plan_file.write_text(calc_plan().to_json())
    code, result = run_json(capsys, "run", "sums", "--plan", str(plan_file), "--yes",
                            "--json", "--offline")
    assert code == 0 and result["status"] == "completed"
    run_id = result["run_id"]
    texts = [json.dumps(run_json(capsys, "show", run_id, "--json")[1])]
    for fmt in ("json", "md", "dot"):
        assert main(["export", run_id, "--format", fmt]) == 0
        texts.append(capsys.readouterr().out)
    assert all(FAKE_KEY not in text for text in texts)
    for path in isolated_environment.glob("planboard.db*"):
        assert FAKE_KEY.encode() not in path.read_bytes()


# ---- the crash journey: SIGKILL mid-run, `resume --yes --json`, still one refund ------------

def test_sigkill_then_cli_resume_completes_with_one_refund(tmp_path, store, capsys,
                                                          monkeypatch):
    from demo.shop import shop_db_path

    plan = Plan(goal="refund 88231", steps=[
        Step(id="s1", description="refund", tool="apply_refund", args={"order_id": "88231"}),
        Step(id="s2", description="slow", tool="slow", args={"label": "x"}, depends_on=["s1"]),
        Step(id="s3", description="add", tool="calculate", args={"expression": "2+2"},
             depends_on=["s2"]),
    ])
    run_id = crash_when(tmp_path, plan, step_started(store, "s2"))
    before = store.get_run(run_id).plan.step("s1")

    code, listed = run_json(capsys, "runs", "--json")
    assert {r["run_id"]: r["status"] for r in listed}[run_id] == "interrupted"

    fast_slow_engines(monkeypatch)
    code, result = run_json(capsys, "resume", run_id, "--yes", "--json")
    assert code == 0 and result["status"] == "completed"
    s1 = result["plan"]["steps"][0]
    assert s1["result"] == before.result
    assert s1["started_at"] == before.started_at.isoformat().replace("+00:00", "Z")
    assert s1["finished_at"] == before.finished_at.isoformat().replace("+00:00", "Z")
    with sqlite3.connect(shop_db_path()) as conn:
        refunds = conn.execute("SELECT COUNT(*) FROM refunds WHERE order_id = '88231'")
        assert refunds.fetchone()[0] == 1


def _fast_slow(label: str) -> dict:
    """Return at once.

    Args:
        label: any text.
    """
    return {"label": label}

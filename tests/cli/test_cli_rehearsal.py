"""``run --dry-run`` and ``plan --rehearse`` from the command line: problems named by step id,
no tool called, no run recorded."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from core.cli.main import main
from core.store.run_store import RunStore
from tests.toolsets import counted

PARCEL_PLAN = {
    "goal": "Tell the customer about parcel P-1",
    "steps": [
        {"id": "s1", "description": "Find the shipment", "tool": "find_shipment",
         "args": {"shipment_id": "P-1"}},
        {"id": "s2", "description": "Text its tracking number", "tool": "notify_customer",
         "args": {"message": "Tracking: {{s1.tracking_number}}"}, "depends_on": ["s1"]},
        {"id": "s3", "description": "File a claim if it is lost", "tool": "file_claim",
         "args": {"shipment_id": "{{s1.shipment_id}}"}, "depends_on": ["s1"],
         "condition": "s1.status == 'lost'"},
        {"id": "s4", "description": "Summarise", "tool": None, "depends_on": ["s1", "s2", "s3"]},
    ],
}

pytestmark = pytest.mark.usefixtures("parcel_tools")


def _plan_file(tmp_path: Path, plan: dict) -> str:
    path = tmp_path / "plan.json"
    path.write_text(json.dumps(plan), encoding="utf-8")
    return str(path)


def _cli(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def _executed_runs() -> list:
    store = RunStore()
    try:
        return store.list_runs()
    finally:
        store.close()


def test_a_dry_run_names_both_problems_calls_nothing_and_records_no_run(tmp_path, capsys):
    code, out, err = _cli(capsys, "run", "--plan", _plan_file(tmp_path, PARCEL_PLAN),
                          "--dry-run", "--offline")
    assert code == 1, err  # a problem found: a script stops here
    lines = out.splitlines()
    assert any(line.startswith("  ✗ s2: {{s1.tracking_number}} reads 'tracking_number' of s1")
               for line in lines), out
    assert "  ✗ s3: s1.status == 'lost' in its condition can never be true (s1.status is one " \
           "of 'label_created', 'in_transit', 'delivered')" in lines
    assert "  ⚠ s3: would call file_claim, which has a side effect (not called in a " \
           "rehearsal)" in lines
    assert "Rehearsal (nothing was run): 2 problem(s), 2 side effect(s) not called" in out
    assert counted.calls() == []
    assert _executed_runs() == []


def test_a_dry_run_prints_its_report_as_json_in_the_readers_language(tmp_path, capsys,
                                                                     monkeypatch):
    monkeypatch.setenv("PLANBOARD_LANG", "zh")
    code, out, _ = _cli(capsys, "run", "--plan", _plan_file(tmp_path, PARCEL_PLAN),
                        "--dry-run", "--offline", "--json")
    report = json.loads(out)
    assert code == 1 and report["rehearsal"]["executed"] is False
    assert [(p["step"], p["kind"]) for p in report["rehearsal"]["problems"]] == [
        ("s2", "reference"), ("s3", "condition")]
    assert "永远不会成立" in report["rehearsal"]["problems"][1]["text"]
    assert [s["step"] for s in report["rehearsal"]["side_effects"]] == ["s2", "s3"]
    assert report["plan"]["steps"][1]["args"] == {"message": "Tracking: {{s1.tracking_number}}"}
    assert counted.calls() == [] and _executed_runs() == []


def test_a_plan_without_problems_rehearses_with_exit_0(tmp_path, capsys):
    sound = json.loads(json.dumps(PARCEL_PLAN))
    sound["steps"][1]["args"] = {"message": "Carrier: {{s1.carrier}}"}
    sound["steps"][2]["condition"] = "s1.status == 'label_created'"
    code, out, _ = _cli(capsys, "run", "--plan", _plan_file(tmp_path, sound), "--dry-run",
                        "--offline")
    assert code == 0 and "0 problem(s)" in out
    assert counted.calls() == [] and _executed_runs() == []


def test_plan_rehearse_drafts_then_rehearses(capsys, monkeypatch):
    monkeypatch.setenv("PLANBOARD_TOOLSETS", "builtin,demo")
    code, out, _ = _cli(capsys, "plan", "Check whether order 10001 has arrived, and if it "
                        "has, refund it", "--offline", "--rehearse")
    assert code == 0, out
    assert "0 problem(s), 1 side effect(s) not called" in out
    assert "would call apply_refund" in out
    assert _executed_runs() == []


def test_a_rehearsal_of_an_answer_without_a_plan_says_what_to_do(capsys):
    code, _, err = _cli(capsys, "run", "What time is it?", "--dry-run", "--offline",
                        "--mode", "direct")
    assert code == 1
    assert err.strip() == ("error: --mode direct answers without a plan, so there is nothing "
                           "to rehearse; drop --mode or use --mode plan.")


def test_a_refinement_is_not_rehearsed_in_the_same_command(tmp_path, capsys):
    code, _, err = _cli(capsys, "plan", "also text the carrier", "--refine",
                        _plan_file(tmp_path, PARCEL_PLAN), "--rehearse", "--offline")
    assert code == 1 and "run --plan FILE --dry-run" in err


def test_an_invalid_plan_is_refused_before_rehearsing(tmp_path, capsys):
    broken = {"goal": "g", "steps": [{"id": "s1", "description": "x", "tool": "no_such_tool"}]}
    code, _, err = _cli(capsys, "run", "--plan", _plan_file(tmp_path, broken), "--dry-run",
                        "--offline")
    assert code == 1 and "no_such_tool" in err and "Traceback" not in err

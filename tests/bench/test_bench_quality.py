"""The plan-quality benchmark: scorers on hand-made outcomes, offline and fake-endpoint runs."""

from __future__ import annotations

import datetime
import json
import os
import re
import sqlite3
import threading
from typing import Any

import pytest

from bench import quality
from bench.quality_tasks import TASKS, Outcome, active_refunds, get_tasks, mentions_number
from core.base.usage import Usage
from core.runs.session import build_engine
from demo.analytics import run_sql
from demo.ops import check_health
from demo.shop import apply_refund, ensure_shop_db
from tests.support.fake_openai import DEFAULT_KEY, text
from tests.support.waiting import DEFAULT_TIMEOUT_S


def _score(task_id: str, status: str, answer: str) -> list[str]:
    return get_tasks([task_id])[0].score(Outcome(status=status, answer=answer))


def test_the_suite_covers_both_languages_and_every_kind():
    assert len(TASKS) >= 12
    assert len({task.id for task in TASKS}) == len(TASKS)
    assert {task.lang for task in TASKS} == {"en", "zh"}
    assert {"lookup", "conditional", "multi-clause", "ops", "analytics"} <= {
        task.kind for task in TASKS}


def test_unknown_task_ids_are_named():
    with pytest.raises(KeyError, match="nope"):
        get_tasks(["order-eta-en", "nope"])


@pytest.mark.parametrize(("answer", "value", "found"), [
    ("1,234 users churned", 1234, True),
    ("共 260 人", 260, True),
    ("12345 rows", 1234, False),
    ("replicas 4 → 6", 6, True),
    ("version 6.5", 6, False),
    ("about 7.0 days", 7, True),
])
def test_numbers_are_read_as_whole_numbers(answer, value, found):
    assert mentions_number(answer, value) is found


def test_a_conditional_refund_passes_only_with_one_refund_named_in_the_answer():
    assert _score("refund-delivered-en", "completed", "Order 88231 was delivered.") == [
        "order 88231 has 0 active refunds, expected 1"]
    refund_id = apply_refund.function("88231", "broken")["refund_id"]
    assert _score("refund-delivered-en", "completed", f"Refund {refund_id} submitted.") == []
    problems = _score("refund-delivered-en", "failed", "Your refund is on its way.")
    assert problems[0] == "run ended failed"
    assert "refund id" in problems[1]


def test_seed_000_also_needs_the_recommendation():
    refund_id = apply_refund.function("88231", "broken")["refund_id"]
    answer = f"退款单号 {refund_id}"
    assert any("S10 Lite" in p for p in _score("seed-000-zh", "completed", answer))
    assert _score("seed-000-zh", "completed", f"推荐 比特 S10 Lite；{answer}") == []


def test_no_refund_when_the_order_is_in_transit():
    assert _score("refund-in-transit-zh", "completed", "还没签收，没有退款") == []
    with sqlite3.connect(ensure_shop_db()) as conn:  # a refund the tool would have refused
        conn.execute("INSERT INTO refunds VALUES ('RFX', '70412', 1299, 'x', 'processing', "
                     "NULL, '2026-06-24')")
    assert _score("refund-in-transit-zh", "completed", "已退款") == [
        "order 70412 has 1 active refunds, expected 0"]


def test_the_existing_refund_is_not_doubled():
    assert _score("refund-existing-en", "completed", "It already has RF20260620001.") == []
    apply_refund.function("66001")  # idempotent: returns the existing refund
    assert active_refunds("66001") == ["RF20260620001"]


def test_an_order_lookup_needs_the_status_from_the_database():
    assert _score("order-eta-en", "completed", "Order 70412 is in transit.") == []
    assert _score("order-eta-en", "completed", "It will arrive on June 25, 2026.") == []
    assert _score("order-eta-en", "completed", "It will arrive on June 15, 2023.") != []
    assert _score("order-eta-en", "completed", "Order 70412 was delivered.") != []
    assert _score("order-status-zh", "completed", "88231 已签收") == []


def test_ops_answers_must_name_every_unhealthy_service():
    unhealthy = check_health.function("all")["unhealthy"]
    assert len(unhealthy) >= 2
    assert _score("ops-unhealthy-en", "completed", ", ".join(unhealthy)) == []
    problems = _score("ops-unhealthy-en", "completed", ", ".join(unhealthy[1:]))
    assert problems == [f"answer misses unhealthy services: {unhealthy[0]}"]
    spelled_out = ", ".join(name.replace("-", " ").title() for name in unhealthy)
    assert _score("ops-unhealthy-en", "completed", spelled_out) == []
    assert _score("ops-unhealthy-en", "completed", spelled_out.replace(" ", "")) != []


def test_analytics_counts_are_read_from_the_data():
    rows = run_sql.function(
        "SELECT COUNT(*) FROM churn_events WHERE churned_at BETWEEN '2026-01-01' AND "
        "'2026-03-31'")["rows"]
    count = rows[0][0]
    assert _score("churn-count-en", "completed", f"{count:,} subscriptions") == []
    assert _score("churn-count-en", "completed", f"{count + 1} subscriptions") != []
    assert _score("churn-count-en", "failed", f"{count}") == ["run ended failed"]


def test_the_bench_runs_offline_end_to_end(capsys, isolated_environment):
    chosen = "refund-delivered-en,refund-in-transit-zh,ops-report-zh"
    code = quality.main(["--offline", "--policies", "rigid,adaptive", "--tasks", chosen])
    out = capsys.readouterr().out
    assert code == 0
    assert "## Plan quality: offline rules" in out
    rows = {line.split("|")[0].strip(): line for line in out.splitlines() if "|" in line}
    for policy in ("rigid", "adaptive"):
        cells = [cell.strip() for cell in rows[policy].split("|")]
        assert cells[1:4] == ["3/3", "0", "0+0"]
    assert rows["refund-in-transit-zh"].count("pass, ") == 2
    assert rows["refund-in-transit-zh"].count(" s, 0 calls") == 2  # offline: no LLM call
    # every task ran in its own home: the refunds made there are not in this test's home
    assert os.environ["PLANBOARD_HOME"] == str(isolated_environment)
    assert active_refunds("88231") == []


def test_an_interrupted_run_prints_the_tasks_that_finished(capsys, monkeypatch,
                                                          isolated_environment):
    real_run_task = quality.run_task
    finished: list[str] = []

    def run_task(task, *args, **kwargs):
        if finished:  # Ctrl-C during the second task run
            raise KeyboardInterrupt
        finished.append(task.id)
        return real_run_task(task, *args, **kwargs)

    monkeypatch.setattr(quality, "run_task", run_task)
    code = quality.main(["--offline", "--policies", "rigid,adaptive",
                         "--tasks", "refund-delivered-en,ops-report-zh"])
    out = capsys.readouterr().out
    assert code == 130
    assert "(interrupted: 1 task runs)" in out
    rows = {line.split("|")[0].strip(): line for line in out.splitlines() if "|" in line}
    assert [cell.strip() for cell in rows["rigid"].split("|")][1] == "1/1"
    assert "adaptive" not in rows and "ops-report-zh" not in rows


_REFUND_PLAN = {"goal": "refund 88231", "steps": [
    {"id": "s1", "description": "Look up order 88231", "tool": "query_order",
     "args": {"order_id": "88231"}},
    {"id": "s2", "description": "Refund it if delivered", "tool": "apply_refund",
     "args": {"order_id": "88231", "reason": "broken"}, "depends_on": ["s1"],
     "condition": "s1.status == 'delivered'"},
    {"id": "s3", "description": "Summarise", "depends_on": ["s1", "s2"]},
]}


def _echo(body: dict[str, Any]) -> Any:
    """An answer that repeats what the model was shown (the step results included)."""
    return text("Done. " + " ".join(str(m.get("content") or "") for m in body["messages"]))


def test_a_model_run_is_scored_and_its_usage_counted(fake_openai, monkeypatch):
    monkeypatch.setenv("OPENAI_BASE_URL", fake_openai.base_url)
    monkeypatch.setenv("OPENAI_API_KEY", DEFAULT_KEY)
    fake_openai.responder = _echo
    fake_openai.script(text(json.dumps(_REFUND_PLAN)))
    task = get_tasks(["refund-delivered-en"])[0]
    result = quality.run_task(task, build_engine(offline=False), "rigid", mode="plan")
    assert result.outcome.status == "completed"
    assert result.passed, result.problems
    assert result.usage.llm_calls == len(fake_openai.chat_bodies) >= 2  # plan + answer
    assert result.usage.prompt_tokens > 0 and result.usage.completion_tokens > 0
    # the fake endpoint reports no cache: estimated, each call shares little with the last
    assert 0 < result.reread_tokens <= result.usage.prompt_tokens
    assert active_refunds("88231") == []  # the refund was made in the task's own home


def test_a_task_plan_spends_at_most_its_model_calls(fake_openai, monkeypatch):
    monkeypatch.setenv("OPENAI_BASE_URL", fake_openai.base_url)
    monkeypatch.setenv("OPENAI_API_KEY", DEFAULT_KEY)
    fake_openai.responder = _echo
    fake_openai.script(text(json.dumps(_REFUND_PLAN)))
    task = get_tasks(["refund-delivered-en"])[0]
    result = quality.run_task(task, build_engine(offline=False), "rigid", mode="plan",
                              max_model_calls=1)  # the planning call: nothing left to answer
    assert result.outcome.status == "failed"
    assert "model calls" in result.outcome.answer


def test_a_failed_task_run_keeps_its_home_to_inspect(fake_openai, monkeypatch, tmp_path):
    from core.runs.runner import open_runner

    monkeypatch.setenv("OPENAI_BASE_URL", fake_openai.base_url)
    monkeypatch.setenv("OPENAI_API_KEY", DEFAULT_KEY)
    fake_openai.responder = _echo
    # the refund waits for a status the delivered order does not have, so none is made
    wrong_condition = {**_REFUND_PLAN, "steps": [
        _REFUND_PLAN["steps"][0], {**_REFUND_PLAN["steps"][1], "condition": "s1.status == 'lost'"},
        _REFUND_PLAN["steps"][2]]}
    fake_openai.script(text(json.dumps(wrong_condition)))
    task = get_tasks(["refund-delivered-en"])[0]
    result = quality.run_task(task, build_engine(offline=False), "rigid", mode="plan",
                              keep_failed=tmp_path / "kept")
    assert "order 88231 has 0 active refunds, expected 1" in result.problems
    monkeypatch.setenv("PLANBOARD_HOME", str(tmp_path / "kept" / "refund-delivered-en-rigid"))
    runner = open_runner()
    try:
        (listed,) = runner.store.list_runs()
        record = runner.store.get_run(listed.run_id)
    finally:
        runner.close()
    assert record.status == "completed" and [s.tool for s in record.plan.steps] == [
        "query_order", "apply_refund", None]
    assert record.plan.step("s2").status == "skipped"


def test_ctrl_c_during_a_model_call_cancels_the_run_without_waiting_for_it(
        fake_openai, monkeypatch, tmp_path):
    from contextlib import contextmanager

    from core.runs.runner import Runner

    started, in_call, release = threading.Event(), threading.Event(), threading.Event()
    calls: list[tuple[str, Any]] = []
    runners: list[Runner] = []
    real_start, real_cancel, real_close = Runner.start, Runner.cancel, Runner.close
    real_wait = Runner.wait

    def start(self, *args, **kwargs):
        runners.append(self)
        started.set()
        return real_start(self, *args, **kwargs)

    def wait(self, run_id, timeout=None, **kwargs):  # Ctrl-C while the answer is awaited
        assert in_call.wait(DEFAULT_TIMEOUT_S)
        raise KeyboardInterrupt

    def answer_slowly(body: dict[str, Any]) -> Any:
        if started.is_set():  # the run's answer step: as slow as a small local model
            in_call.set()
            release.wait(10)
        return _echo(body)

    @contextmanager
    def kept_home():  # the run outlives run_task here: its home must stay until it ends
        monkeypatch.setenv("PLANBOARD_HOME", str(tmp_path / "home"))
        yield str(tmp_path / "home")

    monkeypatch.setattr(Runner, "start", start)
    monkeypatch.setattr(Runner, "wait", wait)
    monkeypatch.setattr(Runner, "cancel", lambda self, run_id, timeout=30.0: (
        calls.append(("cancel", timeout)), real_cancel(self, run_id, timeout))[1])
    monkeypatch.setattr(Runner, "close", lambda self, timeout=30.0: (
        calls.append(("close", timeout)), real_close(self, timeout))[1])
    monkeypatch.setattr(quality, "fresh_home", kept_home)
    monkeypatch.setattr(quality, "CANCEL_WAIT_S", 0.05)
    monkeypatch.setenv("OPENAI_BASE_URL", fake_openai.base_url)
    monkeypatch.setenv("OPENAI_API_KEY", DEFAULT_KEY)
    fake_openai.responder = answer_slowly
    fake_openai.script(text(json.dumps(_REFUND_PLAN)))
    task = get_tasks(["refund-delivered-en"])[0]
    try:
        with pytest.raises(KeyboardInterrupt):
            quality.run_task(task, build_engine(offline=False), "rigid", mode="plan")
        assert not release.is_set()  # the model call was still in flight
        assert calls == [("cancel", 0.05)]  # asked to stop, and the runner not closed
    finally:
        release.set()
        monkeypatch.setattr(Runner, "wait", real_wait)  # closing waits for its runs too
        for runner in runners:
            real_close(runner)


def test_a_failed_task_is_listed_with_its_problems():
    result = quality.TaskResult("x", "rigid", Outcome("failed", ""), ["run ended failed"])
    result.wall_s, result.usage = 95.4, Usage(llm_calls=4)
    table = quality.format_table([result], "t")
    assert "0/1" in table
    assert "x                      | FAIL, 95 s, 4 calls, 0 re-read" in table
    assert "- x [rigid] failed: run ended failed" in table


def test_the_tables_in_markdown_say_what_on_what_and_when():
    passed = quality.TaskResult("order-eta-en", "adaptive", Outcome("completed", "ok"),
                                usage=Usage(llm_calls=4, prompt_tokens=12345,
                                            completion_tokens=678), wall_s=51.2)
    failed = quality.TaskResult("order-eta-en", "rigid", Outcome("failed", ""),
                                ["run ended failed"], Usage(llm_calls=3), 48.0)
    passed.reread_tokens = 2345

    printed = quality.format_markdown([passed, failed], "qwen @ http://127.0.0.1:8080/v1",
                                      "python -m bench.quality --policies adaptive,rigid",
                                      datetime.date(2026, 12, 1))

    lines = printed.splitlines()
    assert re.fullmatch(r"### Plan quality: qwen @ http://127\.0\.0\.1:8080/v1 — .+, \d+ cores, "
                        r"Python \d+\.\d+\.\d+, 2026-12-01", lines[0])
    assert lines[2] == "`python -m bench.quality --policies adaptive,rigid`."
    assert "| adaptive | 1/1 | 4 | 12,345 + 678 | 2,345 (19%) | 51 |" in lines
    assert "| rigid | 0/1 | 3 | 0 + 0 | 0 | 48 |" in lines
    assert "| task | adaptive | rigid |" in lines
    assert ("| order-eta-en | pass, 51 s, 4 calls, 2,345 re-read | FAIL, 48 s, 3 calls, 0 re-read |"
            in lines)
    assert "- order-eta-en [rigid] failed: run ended failed" in lines


def test_the_offline_bench_prints_markdown(capsys, isolated_environment):
    code = quality.main(["--offline", "--policies", "rigid", "--tasks", "order-status-zh",
                         "--markdown"])

    out = capsys.readouterr().out
    assert code == 0
    assert out.startswith("### Plan quality: offline rules — ")
    assert ("`python -m bench.quality --offline --policies rigid --tasks order-status-zh`."
            in out)
    assert "| rigid | 1/1 | 0 | 0 + 0 |" in out


def test_bad_options_are_refused(capsys):
    with pytest.raises(SystemExit):
        quality.main(["--offline", "--policies", "sometimes"])
    assert "unknown policy sometimes" in capsys.readouterr().err
    assert quality.main(["--offline", "--tasks", "nope"]) == 1


def test_the_multi_stage_tasks_compare_flat_and_hierarchical_with_the_scripted_planner(
        capsys, isolated_environment):
    code = quality.main(["--compare-modes", "--scripted", "--policies", "on_failure",
                         "--tasks", "ops-stages-en"])
    out = capsys.readouterr().out
    assert code == 0, out
    rows = {line.split("|")[0].strip(): [cell.strip() for cell in line.split("|")[1:]]
            for line in out.splitlines() if line.startswith(("flat ", "hierarchical "))}
    assert rows["flat"][0] == "1/1" and rows["hierarchical"][0] == "1/1"
    flat_calls, phased_calls = int(rows["flat"][1]), int(rows["hierarchical"][1])
    # in phases: the phase plan and one expansion per phase instead of one plan
    assert phased_calls > flat_calls >= 2
    assert "flat against hierarchical, on_failure" in out
    assert "OPENAI_BASE_URL" not in os.environ  # the scripted endpoint's settings are gone


def test_the_suite_has_multi_stage_tasks_the_router_sends_to_phases():
    from bench.quality_tasks import MULTI_STAGE
    from core.planning.router import route_offline
    from core.tools.toolsets import default_registry

    assert len(MULTI_STAGE) >= 3
    for task in get_tasks(MULTI_STAGE):
        assert route_offline(task.request, default_registry({})).mode == "hierarchical", task.id

"""A request's period resolves against today and the data's span, and the answer names it."""

from __future__ import annotations

from datetime import date

import pytest

from core.errors import ConfigError
from core.execution.executor import execute_step
from core.llm.client import OpenAIChatModel
from core.llm.engine import Engine
from core.plan.model import Plan, Step
from core.planning.packs import data_until
from core.planning.periods import resolve_period, today
from demo.offline import offline_plan
from demo.scenarios import get_scenario
from tests.support.fake_openai import text
from tests.support.offline import execute_by_hand
from tests.support.planning import planning

DEC_1 = date(2026, 12, 1)
DATA_END = date(2026, 6, 24)


@pytest.mark.parametrize(("request_text", "on", "bounds", "english", "chinese"), [
    ("Churn in Q1 2026", DEC_1, ("2026-01-01", "2026-04-01"),
     "2026 Q1 (1 Jan – 31 Mar 2026)", "2026年第一季度（1月1日–3月31日）"),
    ("2026年第一季度用户流失的最主要原因是什么？", DEC_1, ("2026-01-01", "2026-04-01"),
     "2026 Q1 (1 Jan – 31 Mar 2026)", "2026年第一季度（1月1日–3月31日）"),
    ("Revenue in 2026 Q4", DEC_1, ("2026-10-01", "2027-01-01"),
     "2026 Q4 (1 Oct – 31 Dec 2026)", "2026年第四季度（10月1日–12月31日）"),
    ("How many users churned in 2025?", DEC_1, ("2025-01-01", "2026-01-01"),
     "2025 (1 Jan – 31 Dec 2025)", "2025年（1月1日–12月31日）"),
    ("Signups in March 2026", DEC_1, ("2026-03-01", "2026-04-01"),
     "March 2026 (1 – 31 Mar 2026)", "2026年3月（3月1日–3月31日）"),
    ("2026年3月的新用户", DEC_1, ("2026-03-01", "2026-04-01"),
     "March 2026 (1 – 31 Mar 2026)", "2026年3月（3月1日–3月31日）"),
    ("Churn last quarter", DEC_1, ("2026-07-01", "2026-10-01"),
     "2026 Q3 (1 Jul – 30 Sep 2026)", "2026年第三季度（7月1日–9月30日）"),
    ("上个季度的流失原因", date(2026, 4, 15), ("2026-01-01", "2026-04-01"),
     "2026 Q1 (1 Jan – 31 Mar 2026)", "2026年第一季度（1月1日–3月31日）"),
    ("Orders this quarter", date(2026, 5, 3), ("2026-04-01", "2026-07-01"),
     "2026 Q2 (1 Apr – 30 Jun 2026)", "2026年第二季度（4月1日–6月30日）"),
    ("本季度的订单", date(2026, 5, 3), ("2026-04-01", "2026-07-01"),
     "2026 Q2 (1 Apr – 30 Jun 2026)", "2026年第二季度（4月1日–6月30日）"),
    ("Refunds last month", date(2026, 1, 10), ("2025-12-01", "2026-01-01"),
     "December 2025 (1 – 31 Dec 2025)", "2025年12月（12月1日–12月31日）"),
    ("上个月的退款", date(2026, 3, 3), ("2026-02-01", "2026-03-01"),
     "February 2026 (1 – 28 Feb 2026)", "2026年2月（2月1日–2月28日）"),
    ("Revenue this year", DEC_1, ("2026-01-01", "2027-01-01"),
     "2026 (1 Jan – 31 Dec 2026)", "2026年（1月1日–12月31日）"),
    ("今年的营收", DEC_1, ("2026-01-01", "2027-01-01"),
     "2026 (1 Jan – 31 Dec 2026)", "2026年（1月1日–12月31日）"),
    ("Revenue last year", DEC_1, ("2025-01-01", "2026-01-01"),
     "2025 (1 Jan – 31 Dec 2025)", "2025年（1月1日–12月31日）"),
    ("去年的营收", DEC_1, ("2025-01-01", "2026-01-01"),
     "2025 (1 Jan – 31 Dec 2025)", "2025年（1月1日–12月31日）"),
    ("Signups in the past 30 days", DEC_1, ("2026-11-02", "2026-12-02"),
     "the past 30 days (2 Nov – 1 Dec 2026)", "过去30天（2026年11月2日–12月1日）"),
    ("过去30天的新用户", DEC_1, ("2026-11-02", "2026-12-02"),
     "the past 30 days (2 Nov – 1 Dec 2026)", "过去30天（2026年11月2日–12月1日）"),
    ("Errors in the last 2 weeks", DEC_1, ("2026-11-18", "2026-12-02"),
     "the past 2 weeks (18 Nov – 1 Dec 2026)", "过去2周（2026年11月18日–12月1日）"),
    ("Churn over the past three months", DEC_1, ("2026-09-02", "2026-12-02"),
     "the past 3 months (2 Sep – 1 Dec 2026)", "过去3个月（2026年9月2日–12月1日）"),
    ("过去三个月的流失", date(2026, 1, 15), ("2025-10-16", "2026-01-16"),
     "the past 3 months (16 Oct 2025 – 15 Jan 2026)",
     "过去3个月（2025年10月16日–2026年1月15日）"),
    # a quarter without its year: the latest of that name begun by today
    ("Count the churned users of Q1", DEC_1, ("2026-01-01", "2026-04-01"),
     "2026 Q1 (1 Jan – 31 Mar 2026)", "2026年第一季度（1月1日–3月31日）"),
    ("统计一季度的流失用户", DEC_1, ("2026-01-01", "2026-04-01"),
     "2026 Q1 (1 Jan – 31 Mar 2026)", "2026年第一季度（1月1日–3月31日）"),
    ("Revenue in the fourth quarter", date(2026, 2, 1), ("2025-10-01", "2026-01-01"),
     "2025 Q4 (1 Oct – 31 Dec 2025)", "2025年第四季度（10月1日–12月31日）"),
])
def test_a_period_resolves_to_its_bounds_and_label_in_both_languages(
        request_text, on, bounds, english, chinese):
    period = resolve_period(request_text, on)
    assert (period.start.isoformat(), period.end.isoformat()) == bounds
    assert (period.describe("en"), period.describe("zh")) == (english, chinese)
    assert not period.moved


@pytest.mark.parametrize("request_text", [
    "A robot vacuum under 2000, please",  # a budget, not a year
    "Compare churn in 2025 and in 2026",  # two periods: no one set of bounds serves
    "Churn last quarter compared with last year",
    "Churn in Q1 against last quarter",
    "Q1 and Q2 signups",
    "Our quarterly review",
    "List every service",
])
def test_no_period_or_several_resolve_to_none(request_text):
    assert resolve_period(request_text, DEC_1, DATA_END) is None


def test_last_quarter_without_data_moves_to_the_latest_quarter_the_data_holds():
    period = resolve_period("Analyse churn over the last quarter", DEC_1, DATA_END)
    assert (period.start, period.end) == (date(2026, 4, 1), date(2026, 6, 25))
    assert period.relative and period.moved
    assert period.describe("en") == (
        "2026 Q2 (1 Apr – 24 Jun 2026), the latest quarter the data holds: last quarter, "
        "2026 Q3 (1 Jul – 30 Sep 2026) has no data")
    assert period.describe("zh") == (
        "2026年第二季度（4月1日–6月24日），数据中最近的季度：上个季度即2026年第三季度"
        "（7月1日–9月30日）没有数据")


def test_a_rolling_window_without_data_moves_to_the_datas_last_days():
    period = resolve_period("过去30天的流失", DEC_1, DATA_END)
    assert (period.start, period.end) == (date(2026, 5, 26), date(2026, 6, 25))
    assert period.describe("en").startswith("the last 30 days of the data (26 May – 24 Jun 2026)")
    assert period.describe("zh").startswith("数据中的最后30天（2026年5月26日–6月24日）")


def test_a_relative_period_the_data_reaches_and_an_explicit_one_never_move():
    assert not resolve_period("last quarter", date(2026, 4, 15), DATA_END).moved
    named = resolve_period("Churn in Q3", DEC_1, DATA_END)  # beyond the data: still Q3
    assert (named.start, named.end, named.moved) == (date(2026, 7, 1), date(2026, 10, 1), False)
    explicit = resolve_period("Churn in Q3 2026", DEC_1, DATA_END)
    assert (explicit.start, explicit.end, explicit.moved) == (
        date(2026, 7, 1), date(2026, 10, 1), False)


def test_today_is_the_setting_when_set_and_a_bad_one_says_how_to_write_it():
    assert today({"PLANBOARD_TODAY": "2026-12-01"}) == DEC_1
    with pytest.raises(ConfigError, match="PLANBOARD_TODAY=12/01/2026 is not a date"):
        today({"PLANBOARD_TODAY": "12/01/2026"})


def test_the_demo_pack_declares_where_its_data_ends(registry):
    assert data_until(registry) == DATA_END


@pytest.mark.parametrize(("lang", "named", "bounds"), [
    ("en", "Period: 2026 Q2 (1 Apr – 24 Jun 2026), the latest quarter the data holds: last "
           "quarter, 2026 Q3 (1 Jul – 30 Sep 2026) has no data",
     "churned_at >= '2026-04-01' AND churned_at < '2026-06-25'"),
    ("zh", "时间段：2026年第二季度（4月1日–6月24日），数据中最近的季度：上个季度即2026年第三季度"
           "（7月1日–9月30日）没有数据",
     "churned_at >= '2026-04-01' AND churned_at < '2026-06-25'"),
])
def test_in_december_the_churn_scenario_analyses_the_latest_quarter_with_data(
        registry, monkeypatch, lang, named, bounds):
    monkeypatch.setenv("PLANBOARD_TODAY", "2026-12-01")
    plan = offline_plan(get_scenario("churn-analysis").request(lang), registry)
    reasons = next(s for s in plan.steps if s.tool == "run_sql" and "reason" in s.args["query"])
    assert bounds in reasons.args["query"] and "2026-01-01' AND" not in reasons.args["query"]
    assert named in plan.constraints
    answer = execute_by_hand(plan, registry)
    assert answer.splitlines()[2] == f"🗓️ {named}"
    assert "2026 Q1" not in answer and "第一季度" not in answer


@pytest.mark.parametrize(("lang", "named"), [
    ("en", "Period: 2026 Q1 (1 Jan – 31 Mar 2026)"),
    ("zh", "时间段：2026年第一季度（1月1日–3月31日）"),
])
def test_in_april_the_churn_scenario_analyses_the_first_quarter(registry, monkeypatch, lang,
                                                                 named):
    monkeypatch.setenv("PLANBOARD_TODAY", "2026-04-15")
    plan = offline_plan(get_scenario("churn-analysis").request(lang), registry)
    reasons = next(s for s in plan.steps if s.tool == "run_sql" and "reason" in s.args["query"])
    assert "churned_at >= '2026-01-01' AND churned_at < '2026-04-01'" in reasons.args["query"]
    assert plan.constraints == [named]
    assert f"🗓️ {named}" in execute_by_hand(plan, registry)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_in_december_the_quarterly_review_counts_the_first_quarter_it_names(registry,
                                                                             monkeypatch, lang):
    monkeypatch.setenv("PLANBOARD_TODAY", "2026-12-01")
    plan = offline_plan(get_scenario("ops-quarterly-review").request(lang), registry)
    queries = [s.args["query"] for s in plan.steps if s.tool == "run_sql"]
    assert queries and all("'2026-04-01'" in query for query in queries)
    assert not any("'2026-06-25'" in query for query in queries)  # not the latest quarter


def test_the_planner_is_told_today_and_the_period_with_its_bounds(fake_openai, registry,
                                                                  monkeypatch):
    monkeypatch.setenv("PLANBOARD_TODAY", "2026-12-01")
    reply = ('{"goal": "churn", "steps": [{"id": "s1", "description": "Count churn in 2026 Q2",'
             ' "tool": "run_sql", "args": {"query": "SELECT COUNT(*) FROM churn_events WHERE '
             'churned_at >= \'2026-04-01\' AND churned_at < \'2026-06-25\'"}}, {"id": "s2", '
             '"description": "Tell the user", "tool": null, "depends_on": ["s1"]}]}')
    planning(fake_openai, registry, "How many users churned last quarter?", reply)
    user = fake_openai.chat_bodies[0]["messages"][-1]["content"]
    assert "Today is 2026-12-01." in user
    assert ("The request is about 2026 Q2 (1 Apr – 24 Jun 2026), the latest quarter the data "
            "holds: last quarter, 2026 Q3 (1 Jul – 30 Sep 2026) has no data: dates from "
            "2026-04-01 up to, not including, 2026-06-25.") in user


def test_the_model_writing_the_answer_is_told_the_period_to_name(fake_openai, registry,
                                                                 monkeypatch):
    monkeypatch.setenv("PLANBOARD_TODAY", "2026-12-01")
    fake_openai.script(text("在2026年第二季度（4月1日–6月24日）共有 212 位用户流失。"))
    counted = Step(id="s1", description="统计流失", tool="run_sql", status="completed",
                   result={"columns": ["churned"], "rows": [[212]]})
    answer = Step(id="s2", description="综合回复", depends_on=["s1"])
    plan = Plan(goal="上个季度有多少用户流失？", steps=[counted, answer])
    with OpenAIChatModel(fake_openai.settings()) as model:
        outcome = execute_step(plan, answer, Engine(registry=registry, model=model))
    assert outcome.status == "completed"
    system = fake_openai.chat_bodies[0]["messages"][0]["content"]
    assert ("The request is about 2026年第二季度（4月1日–6月24日），数据中最近的季度：上个季度即"
            "2026年第三季度（7月1日–9月30日）没有数据 (dates from 2026-04-01 up to, not "
            "including, 2026-06-25)") in system


def test_a_worker_with_a_bad_date_refuses_to_start_before_taking_any_run(capsys, monkeypatch):
    from core.cli.main import main

    monkeypatch.setenv("PLANBOARD_TODAY", "2026-13-45")
    assert main(["worker", "--name", "dated"]) == 1
    assert "PLANBOARD_TODAY=2026-13-45 is not a date" in capsys.readouterr().err

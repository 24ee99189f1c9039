"""Offline answers keep their shape: tables as Markdown tables, one language throughout, and a
follow-up's answer that does not say the earlier one again."""

from __future__ import annotations

import json
import re

import pytest

from core.cli.main import main
from core.execution.options import RunOptions
from core.execution.scheduler import run_plan
from core.llm.engine import Engine
from core.planning.followup import extend_plan_request
from core.tools.toolsets import default_registry
from demo.offline import offline_plan
from demo.scenarios import get_scenario
from tests.support.answer_text import sentences, tables

_CJK = re.compile(r"[\u4e00-\u9fff]")
_APPROVED = RunOptions(confirm_side_effects=False)  # the test approved the whole plan




def offline_answer(request: str) -> str:
    engine = Engine(default_registry({}))
    run = run_plan(offline_plan(request, engine.registry), engine, options=_APPROVED)
    assert run.status == "completed"
    return run.answer or ""


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_churn_answer_holds_tables_that_parse(lang: str) -> None:
    answer = offline_answer(get_scenario("churn-analysis").request(lang))
    found = tables(answer)
    assert len(found) >= 3
    months = next(t for t in found if t[0] == ["month", "churned"])
    assert ["2025-10", "26"] in months and len(months) >= 4
    reasons = next(t for t in found if t[0][0] == "reason")
    assert reasons[1][0] == "price"
    assert "month | churned 2025-10" not in answer.replace("\n", " ")


def test_churn_scenario_through_the_cli_answers_with_a_table(capsys) -> None:
    request = get_scenario("churn-analysis").request("en")
    assert main(["run", "--offline", "--yes", "--json", request]) == 0
    answer = json.loads(capsys.readouterr().out)["answer"]
    assert any(t[0] == ["plan", "churned", "churn_rate_pct"] for t in tables(answer))


def test_knowledge_tables_stay_tables() -> None:
    answer = offline_answer(get_scenario("research-ai-coding").request("en"))
    (table,) = tables(answer)
    assert table[0] == ["Tool", "Where it runs", "Strengths"]
    assert ["Cursor", "AI-first editor based on VS Code",
            "whole-repo context, agent mode for multi-file edits"] in table
    assert "- | Cursor" not in answer and "- Cursor" not in answer


def test_english_shop_answer_has_no_chinese_names() -> None:
    answer = offline_answer(get_scenario("shop-refund").request("en"))
    assert "Bit S10 Lite" in answer and "Bit S10 Pro robot vacuum" in answer
    assert not _CJK.search(answer)


def test_chinese_ops_answer_has_no_english_sentences() -> None:
    answer = offline_answer(get_scenario("ops-health").request("zh"))
    assert "降级" in answer and "宕机" in answer and "阈值" in answer
    # two English words in a row would be an English phrase; names, units and ids are single
    assert not re.search(r"\b[A-Za-z]{2,} [A-Za-z]{2,}\b", answer), answer
    assert "`" not in answer  # every log line of the demo fleet is worded, none quoted


def test_english_ops_answer_is_unchanged_in_substance() -> None:
    answer = offline_answer(get_scenario("ops-health").request("en"))
    assert "search-service (down): 0 of 3 replicas are ready" in answer
    assert not _CJK.search(answer)




@pytest.mark.parametrize(("request_text", "follow_up"), [
    ("查一下订单 88231", "另外帮我看看有没有新款耳机"),
    ("check order 88231", "also track its parcel SF1234567890"),
])
def test_follow_up_answer_covers_the_new_steps_only(request_text: str, follow_up: str) -> None:
    engine = Engine(default_registry({}))
    first = run_plan(offline_plan(request_text, engine.registry), engine, options=_APPROVED)
    earlier = first.answer or ""
    extended = extend_plan_request(first.plan, follow_up, engine)[0]
    second = run_plan(extended, engine, options=_APPROVED)
    assert second.status == "completed"
    answer = second.answer or ""
    repeated = [s for s in sentences(earlier) if s in answer]
    assert not repeated, repeated
    counts = [answer.count(s) for s in sentences(answer)]
    assert max(counts) == 1
    new_tools = {s.tool for s in extended.steps if s.id not in first.plan.ids() and s.tool}
    assert new_tools and ("耳机" in answer or "SF1234567890" in answer)
    if not _CJK.search(follow_up):  # the carrier and the scan events in English too
        assert "SF Express" in answer and not _CJK.search(answer)

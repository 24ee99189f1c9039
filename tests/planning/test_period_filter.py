"""SQL that ignores the period the request names is sent back with the period's bounds."""

from __future__ import annotations

import json

from tests.support.planning import planning

REQUEST = ("How many subscriptions were cancelled in the first quarter of 2026 (January to "
           "March)? Count the churn events.")


def sql_plan(query: str) -> str:
    return json.dumps({"goal": REQUEST, "steps": [
        {"id": "s1", "description": "Count the churn events in the first quarter",
         "tool": "run_sql", "args": {"query": query}, "depends_on": []},
        {"id": "s2", "description": "Tell the user the count", "tool": None,
         "depends_on": ["s1"]},
    ]})


ALL_TIME = sql_plan("SELECT COUNT(*) AS churned FROM churn_events")
FIRST_QUARTER = sql_plan("SELECT COUNT(*) AS churned FROM churn_events WHERE churned_at >= "
                         "'2026-01-01' AND churned_at < '2026-04-01'")


def test_a_count_of_all_time_is_sent_back_with_the_quarters_bounds(fake_openai, registry):
    result = planning(fake_openai, registry, REQUEST, ALL_TIME, FIRST_QUARTER)
    assert result.attempts == 2 and not result.plan.warnings
    assert "2026-04-01" in result.plan.steps[0].args["query"]
    corrective = fake_openai.chat_bodies[1]["messages"][-1]["content"]
    assert ("s1's query has no date condition: add one, e.g. WHERE <date column> >= "
            "'2026-01-01' AND <date column> < '2026-04-01'") in corrective


def test_a_query_still_without_the_period_is_a_warning(fake_openai, registry):
    result = planning(fake_openai, registry, REQUEST, ALL_TIME, ALL_TIME)
    assert not result.fallback
    assert [w[:40] for w in result.plan.warnings] == ["The request is about 2026-01-01 up to 20"]


def test_last_quarter_is_sent_back_with_the_bounds_of_the_latest_quarter_with_data(
        fake_openai, registry, monkeypatch):
    monkeypatch.setenv("PLANBOARD_TODAY", "2026-12-01")
    request = "How many subscriptions were cancelled last quarter? Count the churn events."
    result = planning(fake_openai, registry, request, ALL_TIME, FIRST_QUARTER)
    corrective = fake_openai.chat_bodies[1]["messages"][-1]["content"]
    assert "WHERE <date column> >= '2026-04-01' AND <date column> < '2026-06-25'" in corrective
    assert result.attempts == 2

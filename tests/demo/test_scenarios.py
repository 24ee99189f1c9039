"""The scenario gallery: every seed scenario plans offline, validates and answers usefully."""

from __future__ import annotations

import pytest

from core.tools.research import SEARXNG_ENV
from core.tools.toolsets import default_registry
from demo.offline import offline_plan
from demo.scenarios import SCENARIOS, get_scenario
from tests.support.offline import execute_by_hand

UNHEALTHY = ("order-service", "payment-service", "recommendation-service", "report-service",
             "search-service")


def test_the_seed_scenarios_and_the_review_in_stages_are_bilingual():
    assert [s.id for s in SCENARIOS] == [
        "shop-refund", "research-ai-coding", "churn-analysis", "ops-health",
        "ops-quarterly-review"]
    for scenario in SCENARIOS:
        assert all([scenario.title_en, scenario.title_zh, scenario.request_en,
                    scenario.request_zh])
        assert scenario.request("zh") == scenario.request_zh
    assert "88231" in get_scenario("shop-refund").request_zh
    with pytest.raises(KeyError, match="ops-health"):
        get_scenario("nope")


@pytest.mark.parametrize("lang", ["zh", "en"])
@pytest.mark.parametrize("scenario", SCENARIOS, ids=lambda s: s.id)
def test_every_scenario_plans_and_validates(registry, scenario, lang):
    plan = offline_plan(scenario.request(lang), registry)
    assert plan.validate(registry) == []
    assert 2 <= len(plan.steps) <= 10
    assert plan.steps[-1].tool is None
    assert all(s.tool is not None for s in plan.steps[:-1])


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_ops_scenario_names_every_unhealthy_service(registry, lang):
    plan = offline_plan(get_scenario("ops-health").request(lang), registry)
    assert [s.tool for s in plan.steps] == [
        "list_services", "check_health", "diagnose", "suggest_scale", None]
    assert plan.steps[2].args == {"service": "{{s2.unhealthy}}"}
    answer = execute_by_hand(plan, registry)
    for service in UNHEALTHY:
        assert answer.count(service) >= 3  # health, diagnosis and scaling lines
    assert "auth-service" not in answer


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_churn_scenario_answers_with_numbers(registry, lang):
    plan = offline_plan(get_scenario("churn-analysis").request(lang), registry)
    assert {s.tool for s in plan.steps[:-1]} == {"describe_tables", "run_sql"}
    answer = execute_by_hand(plan, registry)
    reasons = next(s for s in plan.steps if s.tool == "run_sql" and "reason" in s.args["query"])
    top_reason, top_count = reasons.result["rows"][0]
    assert f"{top_reason} | {top_count}" in answer
    assert ("建议" if lang == "zh" else "suggestion") in answer


def test_research_scenario_runs_on_local_sources(registry):
    plan = offline_plan(get_scenario("research-ai-coding").request_en, registry)
    assert [s.tool for s in plan.steps] == ["search_knowledge", None]
    assert any("local knowledge base" in w for w in plan.warnings)
    answer = execute_by_hand(plan, registry)
    assert "local sources" in answer and "Cursor" in answer


def test_research_scenario_uses_web_search_when_configured():
    registry = default_registry({SEARXNG_ENV: "http://127.0.0.1:9"})
    plan = offline_plan(get_scenario("research-ai-coding").request_zh, registry)
    assert [s.tool for s in plan.steps] == ["web_search"] * 3 + [None]
    assert plan.validate(registry) == []


def test_scenarios_dump_to_json_ready_dicts():
    dumped = SCENARIOS[0].model_dump()
    assert set(dumped) == {"id", "title_en", "title_zh", "request_en", "request_zh"}

"""The operations toolset: a deterministic fleet of 15 services."""

from __future__ import annotations

import pytest

from core.errors import ToolExecutionError


def test_fifteen_services(registry):
    listing = registry.call("list_services", {})
    assert listing["count"] == 15
    assert len(listing["names"]) == 15
    assert {"name", "team", "replicas"} <= set(listing["services"][0])


def test_fleet_health_is_deterministic(registry):
    names = registry.call("list_services", {})["names"]
    health = registry.call("check_health", {"service": names})
    assert health["checked"] == 15
    assert health["down"] == ["search-service"]
    assert set(health["unhealthy"]) == {
        "order-service", "payment-service", "recommendation-service", "report-service",
        "search-service",
    }
    assert len(health["healthy"]) == 10
    assert registry.call("check_health", {"service": "all"})["unhealthy"] == health["unhealthy"]


def test_single_service_result_has_service_and_status(registry):
    result = registry.call("check_health", {"service": "order"})
    assert result["service"] == "order-service"
    assert result["status"] == "degraded"
    assert result["unhealthy"] == ["order-service"]
    assert registry.call("check_health", {"service": "auth-service"})["status"] == "healthy"


def test_json_and_comma_lists_are_accepted(registry):
    as_json = registry.call("check_health", {"service": '["order-service", "search-service"]'})
    as_commas = registry.call("check_health", {"service": "order-service, search-service"})
    assert as_json["unhealthy"] == as_commas["unhealthy"] == ["order-service", "search-service"]


def test_unknown_service_names_the_known_ones(registry):
    with pytest.raises(ToolExecutionError, match="payment-service"):
        registry.call("diagnose", {"service": "billing-service"})


def test_diagnose_and_scale_every_unhealthy_service(registry):
    unhealthy = registry.call("check_health", {"service": "all"})["unhealthy"]
    diagnoses = registry.call("diagnose", {"service": unhealthy})["diagnoses"]
    assert [d["service"] for d in diagnoses] == unhealthy
    assert all(d["findings"] and d["likely_cause"] for d in diagnoses)
    search = next(d for d in diagnoses if d["service"] == "search-service")
    assert "OOMKilled" in search["likely_cause"]
    suggestions = registry.call("suggest_scale", {"service": unhealthy})["suggestions"]
    order = next(s for s in suggestions if s["service"] == "order-service")
    assert (order["current_replicas"], order["suggested_replicas"]) == (4, 6)
    assert registry.call("diagnose", {"service": []})["diagnoses"] == []


def test_healthy_service_diagnosis_says_no_problem(registry):
    result = registry.call("diagnose", {"service": "config-service"})
    assert result["findings"] == []
    assert result["likely_cause"] == "no problem found"

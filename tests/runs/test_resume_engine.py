"""The engine of a resumed run: the recorded endpoint and models, the key from the environment."""

from __future__ import annotations

import pytest

from core.errors import ConfigError
from core.runs.recovery import engine_for_record
from core.store.run_store import RunStore
from tests.support.stored_runs import stopped_run, three_calcs


def online_record(store: RunStore):
    run_id = store.create_run("sums", {
        "offline": False, "base_url": "http://127.0.0.1:9/v1", "planner_model": "plan-m",
        "executor_model": "exec-m", "provider": "auto", "has_key": True}, three_calcs())
    return store.get_run(run_id)


def test_engine_for_record_uses_the_recorded_endpoint_and_models(store, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-ENVKEY123")
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:8/other")
    monkeypatch.setenv("OPENAI_MODEL", "other-model")
    engine = engine_for_record(online_record(store))
    settings = engine.model.settings
    assert (settings.base_url, settings.planner_model, settings.executor_model) == (
        "http://127.0.0.1:9/v1", "plan-m", "exec-m")
    assert settings.api_key.get_secret_value() == "sk-test-ENVKEY123"
    offline = store.get_run(stopped_run(store, "paused"))
    assert engine_for_record(offline).model is None


def test_engine_for_record_without_a_key_says_what_to_set(store):
    with pytest.raises(ConfigError, match="OPENAI_API_KEY"):
        engine_for_record(online_record(store))

"""LLMSettings: environment variables, fallbacks, bad numbers, the key never showing, and a
person's choices over the environment (the dashboard's sidebar)."""

from __future__ import annotations

import pytest

from core.errors import ConfigError
from core.llm.engine import engine_for
from core.llm.settings import (
    DEFAULT_MODEL,
    LLMSettings,
    SettingsChoice,
    choose_settings,
    env_settings,
    run_settings,
)
from core.tools.registry import ToolRegistry


def test_defaults_with_an_empty_environment():
    settings = LLMSettings.from_env({})
    assert settings.api_key is None
    assert settings.base_url == "https://api.openai.com/v1"
    assert settings.planner_model == settings.executor_model == DEFAULT_MODEL
    assert settings.timeout_s == 60.0
    assert settings.max_retries == 2
    assert settings.provider == "auto"
    assert settings.profile.name == "openai"
    assert not settings.configured


def test_reads_os_environ_when_no_mapping_is_given(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-from-env")
    monkeypatch.setenv("PLANBOARD_EXECUTOR_MODEL", "exec-model")
    settings = LLMSettings.from_env()
    assert settings.api_key is not None
    assert settings.api_key.get_secret_value() == "sk-from-env"
    assert settings.executor_model == "exec-model"
    assert settings.configured


def test_every_variable_is_read():
    settings = LLMSettings.from_env({
        "OPENAI_API_KEY": " sk-abc ",
        "OPENAI_BASE_URL": "https://dashscope.aliyuncs.com/compatible-mode/v1/",
        "PLANBOARD_PLANNER_MODEL": "qwen-max",
        "PLANBOARD_EXECUTOR_MODEL": "qwen-plus",
        "PLANBOARD_PROVIDER": "DashScope",
        "PLANBOARD_TIMEOUT": "12.5",
        "PLANBOARD_MAX_RETRIES": "0",
    })
    assert settings.api_key is not None and settings.api_key.get_secret_value() == "sk-abc"
    assert settings.base_url == "https://dashscope.aliyuncs.com/compatible-mode/v1"
    assert settings.model_for("planner") == "qwen-max"
    assert settings.model_for("executor") == "qwen-plus"
    assert settings.provider == "dashscope"
    assert settings.timeout_s == 12.5
    assert settings.max_retries == 0


def test_role_models_fall_back_to_openai_model_then_the_default():
    settings = LLMSettings.from_env({"OPENAI_MODEL": "deepseek-chat",
                                     "PLANBOARD_PLANNER_MODEL": "deepseek-reasoner"})
    assert settings.planner_model == "deepseek-reasoner"
    assert settings.executor_model == "deepseek-chat"
    blank = LLMSettings.from_env({"OPENAI_MODEL": "  ", "PLANBOARD_EXECUTOR_MODEL": ""})
    assert blank.executor_model == DEFAULT_MODEL


@pytest.mark.parametrize(
    ("variable", "value"),
    [("PLANBOARD_TIMEOUT", "abc"), ("PLANBOARD_TIMEOUT", "0"), ("PLANBOARD_TIMEOUT", "-3"),
     ("PLANBOARD_TIMEOUT", "nan"), ("PLANBOARD_MAX_RETRIES", "two"),
     ("PLANBOARD_MAX_RETRIES", "-1"), ("PLANBOARD_MAX_RETRIES", "1.5")],
)
def test_bad_numbers_name_the_variable_in_one_line(variable, value):
    with pytest.raises(ConfigError) as caught:
        LLMSettings.from_env({variable: value})
    message = str(caught.value)
    assert variable in message
    assert repr(value) in message
    assert "\n" not in message


def test_unknown_provider_lists_the_accepted_names():
    with pytest.raises(ConfigError, match=r"PLANBOARD_PROVIDER.*ollama.*llamacpp"):
        LLMSettings.from_env({"PLANBOARD_PROVIDER": "bedrock"})


def test_local_endpoint_is_configured_without_a_key():
    assert LLMSettings(base_url="http://localhost:11434/v1").configured
    assert not LLMSettings(base_url="https://api.deepseek.com").configured
    assert LLMSettings(base_url="https://api.deepseek.com", api_key="sk-x").configured


def test_key_never_appears_in_repr_or_public_dict():
    settings = LLMSettings(api_key="sk-very-secret-123", base_url="http://127.0.0.1:1234/v1")
    public = settings.public_dict()
    assert "sk-very-secret-123" not in repr(settings)
    assert "sk-very-secret-123" not in str(public)
    assert "api_key" not in public
    assert public == {
        "base_url": "http://127.0.0.1:1234/v1", "planner_model": DEFAULT_MODEL,
        "executor_model": DEFAULT_MODEL, "timeout_s": 60.0, "max_retries": 2,
        "provider": "auto", "profile": "lmstudio", "has_key": True,
    }


def test_blank_key_counts_as_no_key():
    assert LLMSettings(api_key="   ").api_key is None


def test_updated_validates_and_keeps_the_key_secret():
    settings = LLMSettings.from_env({"OPENAI_API_KEY": "sk-old"})
    changed = settings.updated(api_key="sk-new-from-sidebar", base_url="http://localhost:1234/v1")
    assert changed.api_key is not None
    assert changed.api_key.get_secret_value() == "sk-new-from-sidebar"
    assert "sk-new-from-sidebar" not in repr(changed)
    assert changed.profile.name == "lmstudio"
    assert settings.updated(planner_model="x").api_key == settings.api_key
    with pytest.raises(ConfigError):
        settings.updated(provider="nope")


# ---- a person's choices over the environment ---------------------------------------------

ENV_WITH_KEY = LLMSettings(api_key="sk-env-key-123456789", planner_model="env-model")


def test_blank_choices_keep_the_environment_and_typed_ones_win():
    chosen = choose_settings(SettingsChoice(), ENV_WITH_KEY)
    assert chosen.settings == ENV_WITH_KEY
    assert (chosen.offline, chosen.reason) == (False, "llm")
    typed = choose_settings(SettingsChoice(api_key=" sk-typed-key-987654321 ",
                                           executor_model="typed-model"), ENV_WITH_KEY)
    assert typed.settings.api_key.get_secret_value() == "sk-typed-key-987654321"
    assert typed.settings.executor_model == "typed-model"
    assert typed.settings.planner_model == "env-model"


@pytest.mark.parametrize(("env", "offline", "reason"), [
    (ENV_WITH_KEY, True, "offline_on"),
    (LLMSettings(), True, "no_key"),
    (ENV_WITH_KEY, False, "llm"),
    (LLMSettings(), False, "no_key_forced"),
])
def test_the_mode_and_its_reason(env, offline, reason):
    chosen = choose_settings(SettingsChoice(offline=offline), env)
    assert chosen.reason == reason
    assert chosen.offline is (reason != "llm")
    assert (chosen.model_settings is None) is chosen.offline


def test_spaces_mean_the_environments_value():
    chosen = choose_settings(SettingsChoice(base_url="   ", planner_model=" x "), ENV_WITH_KEY)
    assert chosen.settings.base_url == ENV_WITH_KEY.base_url
    assert chosen.settings.planner_model == "x"


def test_a_bad_environment_is_logged_and_the_defaults_used(caplog):
    assert env_settings({"PLANBOARD_TIMEOUT": "soon"}) == LLMSettings()
    assert "PLANBOARD_TIMEOUT" in caplog.text


def test_what_a_run_records_never_holds_the_key_nor_says_whether_there_is_one():
    assert run_settings(None) == {"offline": True}
    recorded = choose_settings(SettingsChoice(), ENV_WITH_KEY).for_run()
    assert recorded["offline"] is False and recorded["planner_model"] == "env-model"
    assert "has_key" not in recorded
    assert "sk-env-key" not in repr(recorded)


def test_the_engine_has_a_model_only_with_settings():
    registry = ToolRegistry()
    assert engine_for(registry, None).offline
    online = engine_for(registry, ENV_WITH_KEY)
    assert not online.offline and online.registry is registry

"""LLM settings: endpoint, key, models, timeouts — read from the environment or given directly.

Entry points load ``.env`` (python-dotenv) before calling ``LLMSettings.from_env()``;
this module never reads files. The API key is a ``SecretStr`` so it never prints, and
``public_dict()`` (what a run records) leaves it out.
"""

from __future__ import annotations

import logging
import os
import re
from collections.abc import Mapping
from typing import Any, Literal
from urllib.parse import urlsplit, urlunsplit

from pydantic import BaseModel, ConfigDict, Field, SecretStr, field_validator

from core.base.messages import msg
from core.errors import ConfigError
from core.llm.providers import ProviderProfile, detect_profile

__all__ = [
    "DEFAULT_BASE_URL",
    "DEFAULT_MODEL",
    "ChosenSettings",
    "LLMSettings",
    "ModeReason",
    "SettingsChoice",
    "choose_settings",
    "env_settings",
    "redact_secrets",
    "run_settings",
    "safe_url",
]

logger = logging.getLogger(__name__)

DEFAULT_MODEL = "gpt-4o-mini"
DEFAULT_BASE_URL = "https://api.openai.com/v1"
DEFAULT_TIMEOUT_S = 60.0
DEFAULT_MAX_RETRIES = 2


class LLMSettings(BaseModel):
    """Where and how to reach the model; planner and executor may use different models."""

    model_config = ConfigDict(frozen=True)

    api_key: SecretStr | None = None
    base_url: str = DEFAULT_BASE_URL
    planner_model: str = DEFAULT_MODEL
    executor_model: str = DEFAULT_MODEL
    timeout_s: float = Field(default=DEFAULT_TIMEOUT_S, gt=0)
    max_retries: int = Field(default=DEFAULT_MAX_RETRIES, ge=0)
    provider: str = "auto"
    weak_model_checks: bool | None = None  # None: the provider profile decides
    constrained_output: bool | None = None  # None: the provider profile decides

    @field_validator("api_key", mode="before")
    @classmethod
    def _blank_key_is_none(cls, value: Any) -> Any:
        if isinstance(value, SecretStr):
            value = value.get_secret_value()
        if isinstance(value, str):
            value = value.strip()
            return SecretStr(value) if value else None
        return value

    @field_validator("base_url", mode="before")
    @classmethod
    def _blank_url_is_default(cls, value: Any) -> Any:
        if value is None or (isinstance(value, str) and not value.strip()):
            return DEFAULT_BASE_URL
        return value.strip().rstrip("/") if isinstance(value, str) else value

    @field_validator("provider", mode="before")
    @classmethod
    def _known_provider(cls, value: Any) -> Any:
        if value is None or isinstance(value, str):
            value = (value or "auto").strip().lower() or "auto"
        name = value
        detect_profile(None, name)  # raises ConfigError naming the accepted values
        return name

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> LLMSettings:
        """Settings from environment variables; a bad number raises a one-line ConfigError."""
        env = os.environ if environ is None else environ

        def get(name: str) -> str | None:
            value = env.get(name)
            return value.strip() if value and value.strip() else None

        fallback_model = get("OPENAI_MODEL") or DEFAULT_MODEL
        return cls(
            api_key=get("OPENAI_API_KEY"),
            base_url=get("OPENAI_BASE_URL") or DEFAULT_BASE_URL,
            planner_model=get("PLANBOARD_PLANNER_MODEL") or fallback_model,
            executor_model=get("PLANBOARD_EXECUTOR_MODEL") or fallback_model,
            timeout_s=_positive_float(get("PLANBOARD_TIMEOUT"), "PLANBOARD_TIMEOUT"),
            max_retries=_count(get("PLANBOARD_MAX_RETRIES"), "PLANBOARD_MAX_RETRIES"),
            provider=get("PLANBOARD_PROVIDER") or "auto",
            weak_model_checks=_switch(get("PLANBOARD_WEAK_MODEL_CHECKS"),
                                      "PLANBOARD_WEAK_MODEL_CHECKS"),
            constrained_output=_switch(get("PLANBOARD_CONSTRAINED_OUTPUT"),
                                       "PLANBOARD_CONSTRAINED_OUTPUT"),
        )

    @property
    def profile(self) -> ProviderProfile:
        """The provider profile: named by ``provider``, or detected from ``base_url``, with
        the weak-model checks and constrained output switched as ``weak_model_checks`` and
        ``constrained_output`` say when they are set."""
        profile = detect_profile(self.base_url, self.provider)
        changes: dict[str, Any] = {}
        if self.weak_model_checks is not None:
            changes["weak_model_checks"] = self.weak_model_checks
        if self.constrained_output is not None:
            changes["structured_output"] = profile.constrained(self.constrained_output)
        return profile.model_copy(update=changes) if changes else profile

    @property
    def has_key(self) -> bool:
        """True when an API key is set (its value is never exposed here)."""
        return self.api_key is not None

    @property
    def configured(self) -> bool:
        """True when a model can be called: a key is set, or the endpoint needs none."""
        return self.has_key or not self.profile.needs_key

    def updated(self, **changes: Any) -> LLMSettings:
        """A validated copy with ``changes`` applied (a plain-string api_key becomes secret).

        Prefer this to ``model_copy(update=...)``, which skips validation.
        """
        return type(self)(**{**dict(self), **changes})

    def model_for(self, role: str) -> str:
        """The model name used for ``role`` ("planner" or "executor")."""
        return self.planner_model if role == "planner" else self.executor_model

    def public_dict(self) -> dict[str, Any]:
        """Everything except the key — safe to store with a run or show in the UI."""
        return {
            "base_url": safe_url(self.base_url),
            "planner_model": self.planner_model,
            "executor_model": self.executor_model,
            "timeout_s": self.timeout_s,
            "max_retries": self.max_retries,
            "provider": self.provider,
            "profile": self.profile.name,
            "has_key": self.has_key,
        }


def env_settings(environ: Mapping[str, str] | None = None) -> LLMSettings:
    """Settings from the environment; invalid values are logged and the defaults used.

    For a long-lived process (the dashboard) that must start anyway; the CLI calls
    ``LLMSettings.from_env`` and lets the ConfigError reach the person.
    """
    try:
        return LLMSettings.from_env(environ)
    except ConfigError as exc:
        logger.warning("ignoring environment settings: %s", exc)
        return LLMSettings()


class SettingsChoice(BaseModel):
    """What a person chose over the environment's settings; a blank text means "the
    environment's value" (the dashboard's sidebar fills this in)."""

    model_config = ConfigDict(frozen=True)

    api_key: str = ""
    base_url: str = ""
    planner_model: str = ""
    executor_model: str = ""
    offline: bool = False


ModeReason = Literal["offline_on", "no_key", "no_key_forced", "llm"]


class ChosenSettings(BaseModel):
    """The settings in force, whether the model is used, and why (``reason``)."""

    model_config = ConfigDict(frozen=True)

    settings: LLMSettings
    offline: bool
    reason: ModeReason

    @property
    def model_settings(self) -> LLMSettings | None:
        """The settings to build a chat model with; None offline."""
        return None if self.offline else self.settings

    def for_run(self) -> dict[str, Any]:
        """What a run records about these settings (see :func:`run_settings`)."""
        return run_settings(self.model_settings)


def choose_settings(choice: SettingsChoice, env: LLMSettings) -> ChosenSettings:
    """``env`` with the non-blank values of ``choice`` applied, and offline or not.

    Offline when the person chose it, or when no key is set for an endpoint that needs one.
    """
    changes = {name: value.strip() for name, value in choice.model_dump().items()
               if isinstance(value, str) and value.strip()}
    settings = env.updated(**changes)
    reason: ModeReason
    if choice.offline:
        reason = "offline_on" if settings.configured else "no_key"
    else:
        reason = "llm" if settings.configured else "no_key_forced"
    return ChosenSettings(settings=settings, offline=reason != "llm", reason=reason)


def run_settings(settings: LLMSettings | None) -> dict[str, Any]:
    """What a run records about its model: ``{"offline": True}``, or the endpoint and models.

    Never the key, nor whether there is one (the store drops names that look like secrets).
    """
    if settings is None:
        return {"offline": True}
    public = settings.public_dict()
    public.pop("has_key", None)
    return {"offline": False, **public}


def _positive_float(raw: str | None, variable: str) -> float:
    if raw is None:
        return DEFAULT_TIMEOUT_S
    try:
        value = float(raw)
    except ValueError:
        value = -1.0
    if not value > 0 or value == float("inf"):
        raise ConfigError(msg("config.not_seconds", variable=variable, raw=repr(raw)))
    return value


_ON, _OFF = {"1", "on", "true", "yes"}, {"0", "off", "false", "no"}


def _switch(raw: str | None, variable: str) -> bool | None:
    """``on``/``off`` (1/0, true/false, yes/no) as a bool; None when unset or ``auto``."""
    if raw is None or raw.lower() == "auto":
        return None
    if raw.lower() in _ON | _OFF:
        return raw.lower() in _ON
    raise ConfigError(msg("config.not_switch", variable=variable, raw=repr(raw)))


def _count(raw: str | None, variable: str) -> int:
    if raw is None:
        return DEFAULT_MAX_RETRIES
    try:
        value = int(raw)
    except ValueError:
        value = -1
    if value < 0:
        raise ConfigError(msg("config.not_count", variable=variable, raw=repr(raw)))
    return value


_KEY_LIKE = re.compile(r"\b(?:sk|ak|ghp|xox[abp])[-_][A-Za-z0-9_*\-]{8,}")


def safe_url(url: str) -> str:
    """``url`` without user info, query or fragment: what may be stored, logged or shown."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    if parts.port:
        host = f"{host}:{parts.port}"
    return urlunsplit((parts.scheme, host, parts.path, "", ""))


def redact_secrets(text: str) -> str:
    """``text`` with anything shaped like an API key replaced by ***."""
    return _KEY_LIKE.sub("***", text)

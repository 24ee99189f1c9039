"""Provider profiles: the known quirks of OpenAI-compatible endpoints, detected from the base URL.

A profile says how to force one tool call on that endpoint (the ``tool_choice`` ladder
to walk, and any extra request body a forced call needs), whether ``response_format``
JSON mode is supported, and whether the endpoint needs an API key at all.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from core.errors import ConfigError

__all__ = [
    "GENERIC",
    "PROFILES",
    "ProviderProfile",
    "ToolChoiceMode",
    "detect_profile",
    "profile_names",
]

ToolChoiceMode = Literal["named", "required", "auto"]


class ProviderProfile(BaseModel):
    """How one kind of endpoint behaves; ``tool_choice_ladder`` is tried top-down."""

    model_config = ConfigDict(frozen=True)

    name: str
    title: str
    tool_choice_ladder: tuple[ToolChoiceMode, ...] = ("named", "required", "auto")
    forced_extra_body: dict[str, Any] = Field(default_factory=dict)
    supports_json_mode: bool = True
    needs_key: bool = True
    url_markers: tuple[str, ...] = ()
    notes: str = ""


GENERIC = ProviderProfile(
    name="generic",
    title="Generic OpenAI-compatible endpoint",
    notes="Assumes the full chat completions API; forced calls are still checked.",
)

PROFILES: dict[str, ProviderProfile] = {
    profile.name: profile
    for profile in (
        GENERIC,
        ProviderProfile(
            name="openai",
            title="OpenAI",
            url_markers=("api.openai.com",),
        ),
        ProviderProfile(
            name="dashscope",
            title="Alibaba DashScope (Qwen)",
            forced_extra_body={"enable_thinking": False},
            url_markers=("dashscope",),
            notes="Qwen3 refuses a forced tool_choice while thinking; forced calls turn it off.",
        ),
        ProviderProfile(
            name="deepseek",
            title="DeepSeek",
            forced_extra_body={"thinking": {"type": "disabled"}},
            url_markers=("deepseek",),
            notes="Thinking mode does not honour tool_choice; forced calls disable it.",
        ),
        ProviderProfile(
            name="ollama",
            title="Ollama",
            tool_choice_ladder=("auto",),
            needs_key=False,
            url_markers=(":11434", "ollama"),
            notes="Ignores tool_choice: PlanBoard asks with 'auto' and checks the reply.",
        ),
        ProviderProfile(
            name="lmstudio",
            title="LM Studio",
            tool_choice_ladder=("required", "auto"),
            supports_json_mode=False,
            needs_key=False,
            url_markers=(":1234", "lmstudio", "lm-studio"),
            notes="Rejects an object tool_choice and response_format json_object.",
        ),
        ProviderProfile(
            name="vllm",
            title="vLLM",
            needs_key=False,
            url_markers=("vllm", ":8000"),
            notes="Supports named and 'required' tool_choice in recent versions.",
        ),
        ProviderProfile(
            name="llamacpp",
            title="llama.cpp server",
            tool_choice_ladder=("auto",),
            needs_key=False,
            url_markers=(":8080", "llama"),
            notes="Ignores tool_choice: PlanBoard asks with 'auto' and checks the reply.",
        ),
    )
}

# Specific markers first: "llama" would also match an Ollama URL.
_DETECTION_ORDER = ("openai", "dashscope", "deepseek", "ollama", "lmstudio", "vllm", "llamacpp")


def profile_names() -> list[str]:
    """Every name PLANBOARD_PROVIDER accepts, "auto" first."""
    return ["auto", *PROFILES]


def detect_profile(base_url: str | None, override: str | None = None) -> ProviderProfile:
    """The profile named by ``override``, or the one whose markers appear in ``base_url``.

    ``override`` of None, "" or "auto" means detect; an unknown name raises ConfigError.
    A URL matching nothing gets the generic profile.
    """
    name = (override or "auto").strip().lower()
    if name != "auto":
        if name not in PROFILES:
            raise ConfigError(
                f"Unknown provider {override!r}. Set PLANBOARD_PROVIDER to one of: "
                + ", ".join(profile_names())
                + "."
            )
        return PROFILES[name]
    url = (base_url or "").strip().lower()
    if not url:
        return PROFILES["openai"]
    for candidate in _DETECTION_ORDER:
        profile = PROFILES[candidate]
        if any(marker in url for marker in profile.url_markers):
            return profile
    return GENERIC

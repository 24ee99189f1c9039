"""Provider profiles: the known quirks of OpenAI-compatible endpoints, detected from the base URL.

A profile says how to force one tool call on that endpoint (the ``tool_choice`` ladder
to walk, and any extra request body a forced call needs), whether ``response_format``
JSON mode is supported, how the endpoint takes a JSON schema for structured output (if
at all), which planner prompt suits the models it usually serves, whether the
endpoint needs an API key at all, the sampling temperature to ask for, and whether tool
calls and results must be sent as plain turns (core.llm.tool_messages), whether the
server's chat template HTML-escapes the turns, and whether the plan checks meant for weak
models run for its models (core.planning.checks).

llama-cpp-python's ``chatml-function-calling`` template renders every turn with Jinja's
autoescape on, so the model reads ``&#34;`` for each quote of a prompt (every JSON example
and step result) and small models write such entities back (an answer quoting its results
as ``{&#34;id&#34;: …}``). Replies from that profile have the five entities
Jinja writes turned back into their characters (core.llm.reply.unescape_template_html).

Local servers sample at their own default (0.7-0.8) unless told otherwise, which makes a
small model's plans and tool arguments vary from one try to the next; their profiles ask
for temperature 0. Hosted profiles send none: some hosted models (OpenAI's reasoning
models) refuse any temperature but their default. Local profiles also cap a reply's
length: llama-cpp-python's server generates until its context is full when no
``max_tokens`` is sent, and a small model that starts repeating itself then held a run
for over ten minutes at 10 tokens/s. (Hosted OpenAI reasoning models refuse
``max_tokens``, so hosted profiles send none.)

Structured output, as each server documents it: OpenAI, vLLM, LM Studio and Ollama
(0.5+, through its OpenAI-compatible endpoint) read ``{"type": "json_schema",
"json_schema": {...}}``; DashScope reads it for some Qwen models only (others answer
400, and the client retries without it); llama.cpp's server and llama-cpp-python read
``{"type": "json_object", "schema": {...}}`` (llama-cpp-python refuses "json_schema");
DeepSeek offers only ``json_object``. A schema is a request, never a guarantee: replies
are parsed and validated as if it had been ignored. ``PLANBOARD_CONSTRAINED_OUTPUT``
(on/off) overrides the profile (core.llm.settings): off sends no schema (JSON mode at most),
on sends one in the profile's form, or in OpenAI's where the profile names none (a server
that refuses it is asked again without it).

The plan checks for weak models (a tool named only in words, a clause dropped, code where
arithmetic is due, conditions and actions read from the request by a pack's rules) and
every other workaround for them (an answer rewritten into the request's language, asked
again for what it left out, arguments asked for as JSON when no rung of the ladder calls
the tool, the compact prompt's example step chosen for the request) run for local servers,
which usually serve small models, and for an endpoint PlanBoard does not know; hosted
OpenAI, DeepSeek and DashScope models get those right without them, and a heuristic that
misfires there would only cost a corrective round. ``PLANBOARD_WEAK_MODEL_CHECKS`` (on/off)
overrides the profile (core.llm.settings); :func:`weak_model_checks` is the one reader.

Every known server streams a reply (server-sent events) when asked; ``streams`` says
whether to ask, and ``stream_usage`` whether to ask for the token counts at the end of the
stream (``stream_options.include_usage``: OpenAI, DeepSeek, DashScope, vLLM, Ollama, LM
Studio and llama.cpp's server read it; llama-cpp-python's server does not, so its profile
does not send it). A server that refuses a stream, or a stream that breaks, gets the same
request again without streaming (core.llm.client).
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from core.base.messages import msg
from core.errors import ConfigError

__all__ = [
    "GENERIC",
    "LOCAL_MAX_TOKENS",
    "PROFILES",
    "PromptStyle",
    "ProviderProfile",
    "StructuredOutput",
    "ToolChoiceMode",
    "detect_profile",
    "profile_names",
    "weak_model_checks",
]

# A reply longer than this from a local model is a loop, not a plan (the largest plans of
# the quality suite take about 1,000 tokens).
LOCAL_MAX_TOKENS = 2048
ToolChoiceMode = Literal["named", "required", "auto"]
StructuredOutput = Literal["json_schema", "json_object_schema", "none"]
PromptStyle = Literal["full", "compact"]


class ProviderProfile(BaseModel):
    """How one kind of endpoint behaves; ``tool_choice_ladder`` is tried top-down."""

    model_config = ConfigDict(frozen=True)

    name: str
    title: str
    tool_choice_ladder: tuple[ToolChoiceMode, ...] = ("named", "required", "auto")
    forced_extra_body: dict[str, Any] = Field(default_factory=dict)
    supports_json_mode: bool = True
    structured_output: StructuredOutput = "none"
    prompt_style: PromptStyle = "full"
    needs_key: bool = True
    temperature: float | None = None
    max_tokens: int | None = None
    inline_tool_messages: bool = False
    escapes_html: bool = False
    weak_model_checks: bool = True
    streams: bool = True
    stream_usage: bool = True
    url_markers: tuple[str, ...] = ()
    notes: str = ""

    def constrained(self, on: bool) -> StructuredOutput:
        """How to ask for constrained output once a person switched it ``on`` or off."""
        if not on:
            return "none"
        return self.structured_output if self.structured_output != "none" else "json_schema"

    def response_format(
        self, *, json_mode: bool = False, json_schema: dict[str, Any] | None = None
    ) -> dict[str, Any] | None:
        """The ``response_format`` to send: the schema in this endpoint's form, else JSON
        mode when asked for and supported, else None.

        ``json_schema`` is OpenAI's object: ``{"name": ..., "schema": {...}}``.
        """
        if json_schema is not None and self.structured_output == "json_schema":
            # strict mode would forbid free-form objects (a step's "args")
            return {"type": "json_schema", "json_schema": {"strict": False, **json_schema}}
        if json_schema is not None and self.structured_output == "json_object_schema":
            return {"type": "json_object", "schema": json_schema["schema"]}
        if (json_mode or json_schema is not None) and self.supports_json_mode:
            return {"type": "json_object"}
        return None


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
            weak_model_checks=False,
            title="OpenAI",
            structured_output="json_schema",
            url_markers=("api.openai.com",),
        ),
        ProviderProfile(
            name="dashscope",
            weak_model_checks=False,
            title="Alibaba DashScope (Qwen)",
            forced_extra_body={"enable_thinking": False},
            structured_output="json_schema",
            url_markers=("dashscope",),
            notes="Qwen3 refuses a forced tool_choice while thinking; forced calls turn it off. "
            "Only some Qwen models take a JSON schema; a refusal falls back to JSON mode.",
        ),
        ProviderProfile(
            name="deepseek",
            weak_model_checks=False,
            title="DeepSeek",
            forced_extra_body={"thinking": {"type": "disabled"}},
            url_markers=("deepseek",),
            notes="Thinking mode does not honour tool_choice; forced calls disable it. JSON "
            "mode only (no schema).",
        ),
        ProviderProfile(
            name="ollama",
            title="Ollama",
            tool_choice_ladder=("auto",),
            structured_output="json_schema",
            prompt_style="compact",
            needs_key=False,
            temperature=0.0,
            max_tokens=LOCAL_MAX_TOKENS,
            url_markers=(":11434", "ollama"),
            notes="Ignores tool_choice: PlanBoard asks with 'auto' and checks the reply.",
        ),
        ProviderProfile(
            name="lmstudio",
            title="LM Studio",
            tool_choice_ladder=("required", "auto"),
            supports_json_mode=False,
            structured_output="json_schema",
            prompt_style="compact",
            needs_key=False,
            temperature=0.0,
            max_tokens=LOCAL_MAX_TOKENS,
            url_markers=(":1234", "lmstudio", "lm-studio"),
            notes="Rejects an object tool_choice and response_format json_object; takes a "
            "JSON schema.",
        ),
        ProviderProfile(
            name="vllm",
            title="vLLM",
            structured_output="json_schema",
            needs_key=False,
            temperature=0.0,
            max_tokens=LOCAL_MAX_TOKENS,
            url_markers=("vllm", ":8000"),
            notes="Supports named and 'required' tool_choice in recent versions.",
        ),
        ProviderProfile(
            name="llamacpp",
            title="llama.cpp server",
            tool_choice_ladder=("auto",),
            structured_output="json_object_schema",
            prompt_style="compact",
            needs_key=False,
            temperature=0.0,
            max_tokens=LOCAL_MAX_TOKENS,
            inline_tool_messages=True,
            escapes_html=True,
            stream_usage=False,
            url_markers=(":8080", "llama"),
            notes="Ignores tool_choice: PlanBoard asks with 'auto' and checks the reply. "
            "llama-cpp-python's function-calling template drops tool results, so calls and "
            "results are sent as plain turns; it HTML-escapes every turn, so the entities "
            "a reply copies back are decoded.",
        ),
    )
}

# Specific markers first: "llama" would also match an Ollama URL.
_DETECTION_ORDER = ("openai", "dashscope", "deepseek", "ollama", "lmstudio", "vllm", "llamacpp")


def weak_model_checks(model: Any) -> bool:
    """Whether the workarounds for weak models run for ``model``: its provider profile says
    so; a model without a profile (or no model at all) gets them."""
    profile = getattr(model, "profile", None)
    return True if profile is None else bool(profile.weak_model_checks)


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
            raise ConfigError(msg("config.unknown_provider", name=repr(override),
                                  names=", ".join(profile_names())))
        return PROFILES[name]
    url = (base_url or "").strip().lower()
    if not url:
        return PROFILES["openai"]
    for candidate in _DETECTION_ORDER:
        profile = PROFILES[candidate]
        if any(marker in url for marker in profile.url_markers):
            return profile
    return GENERIC

"""The language-model interface the engine uses, and its OpenAI-compatible implementation."""

from __future__ import annotations

import logging
import re
import threading
import time
from typing import TYPE_CHECKING, Any, Literal, Protocol
from urllib.parse import urlsplit

from core.base import tracing
from core.base.messages import msg
from core.errors import (
    ConfigError,
    LLMAuthError,
    LLMBadRequestError,
    LLMConnectionError,
    LLMError,
    LLMModelNotFoundError,
    LLMResponseError,
)
from core.llm.reply import (
    ChatReply,
    ToolCall,
    decode_template_entities,
    one_line,
    parse_reply,
    unescape_template_html,
)
from core.llm.settings import redact_secrets, safe_url
from core.llm.streamed import StreamBroken, TextListener, read_events
from core.llm.tool_messages import inline_tool_messages

if TYPE_CHECKING:
    import httpx2
    from openai import OpenAI

    from core.llm.providers import ProviderProfile
    from core.llm.settings import LLMSettings

__all__ = [
    "ChatModel",
    "ChatReply",
    "ModelRole",
    "OpenAIChatModel",
    "ToolCall",
    "map_openai_error",
    "parse_reply",
]

logger = logging.getLogger(__name__)

ModelRole = Literal["planner", "executor"]


class ChatModel(Protocol):
    """What the planner and executor need from a model (tests pass a scripted fake)."""

    def chat(
        self,
        messages: list[dict[str, Any]],
        *,
        role: ModelRole = "executor",
        tools: list[dict[str, Any]] | None = None,
        tool_choice: str | dict[str, Any] | None = None,
        json_mode: bool = False,
        json_schema: dict[str, Any] | None = None,
        on_text: TextListener | None = None,
    ) -> ChatReply:
        """Send one chat completion request and return the reply.

        ``json_schema`` asks for a reply matching it where the endpoint can be told so; a
        model that cannot simply ignores it (the reply is parsed and checked either way).
        ``on_text`` hears the reply's text so far as it arrives (a model that does not
        stream tells it the whole text once); the reply returned is the same either way.
        """
        ...


class OpenAIChatModel:
    """ChatModel on the official ``openai`` SDK, for any OpenAI-compatible endpoint.

    The SDK client is created on the first call (never at import or construction), with
    the key, base URL, timeout and retries of ``settings``. Errors come out as the LLM
    classes of core.errors with one-line messages that never contain the key.

    A call with ``on_text`` streams where the profile says the endpoint does: the listener
    hears the text as it arrives and the reply is the one a whole answer gives. A server
    that refuses the stream (400, while the same request without it passes) is not asked
    to stream again by this client; a broken stream, or a whole answer to a stream request,
    is read as today's single reply would be.
    """

    def __init__(
        self, settings: LLMSettings, http_client: httpx2.Client | None = None
    ) -> None:
        self.settings = settings
        self.profile: ProviderProfile = settings.profile
        self._http_client = http_client
        self._client: OpenAI | None = None
        self._lock = threading.Lock()
        self.schema_refused = False  # the endpoint answered 400 to a JSON schema once
        self.stream_refused = False  # the endpoint answered 400 to a stream request once

    def __repr__(self) -> str:
        return (
            f"OpenAIChatModel(base_url={safe_url(self.settings.base_url)!r}, "
            f"profile={self.profile.name!r})"
        )

    @property
    def client(self) -> OpenAI:
        """The SDK client, created on first use."""
        with self._lock:
            if self._client is None:
                self._client = self._make_client()
            return self._client

    def _make_client(self) -> OpenAI:
        from openai import OpenAI

        settings = self.settings
        if settings.api_key is not None:
            key = settings.api_key.get_secret_value()
        elif not self.profile.needs_key:
            key = "not-needed"  # local servers ignore it; the SDK insists on one
        else:
            raise ConfigError(msg("config.no_key"))
        return OpenAI(
            api_key=key,
            base_url=settings.base_url,
            timeout=settings.timeout_s,
            max_retries=settings.max_retries,
            http_client=self._http_client,
        )

    def close(self) -> None:
        """Close the HTTP connections of the SDK client, if one was created."""
        with self._lock:
            client, self._client = self._client, None
        if client is not None:
            client.close()

    def __enter__(self) -> OpenAIChatModel:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def chat(
        self,
        messages: list[dict[str, Any]],
        *,
        role: ModelRole = "executor",
        tools: list[dict[str, Any]] | None = None,
        tool_choice: str | dict[str, Any] | None = None,
        json_mode: bool = False,
        extra_body: dict[str, Any] | None = None,
        json_schema: dict[str, Any] | None = None,
        on_text: TextListener | None = None,
    ) -> ChatReply:
        """Send one chat completion request; raise an LLMError subclass on failure.

        ``json_schema`` (OpenAI's ``{"name", "schema"}``) asks for structured output in
        the profile's form; an endpoint that rejects it (400) is asked once more without
        it, and is not sent a schema again by this client.
        """
        model = self.settings.model_for(role)
        if self.profile.inline_tool_messages:
            messages = inline_tool_messages(messages)
        request: dict[str, Any] = {"model": model, "messages": messages}
        if self.profile.temperature is not None:
            request["temperature"] = self.profile.temperature
        if self.profile.max_tokens is not None:
            request["max_tokens"] = self.profile.max_tokens
        if tools:
            request["tools"] = tools
            if tool_choice is not None:
                request["tool_choice"] = tool_choice
        schema = None if self.schema_refused else json_schema
        response_format = self.profile.response_format(json_mode=json_mode, json_schema=schema)
        if response_format is not None:
            request["response_format"] = response_format
        if extra_body:
            request["extra_body"] = extra_body
        started = time.monotonic()
        plain = self.profile.response_format(json_mode=json_mode or schema is not None)
        attributes = self._span_attributes(request, role) if tracing.enabled() else None
        with tracing.span(f"chat {model}", attributes, kind="client") as span:
            reply = (self._send(request, model, role, on_text) if response_format == plain
                     else self._send_structured(request, plain, model, role, on_text))
            span.set(_reply_attributes(reply))
        logger.debug(
            "%s call to %s took %.2fs: %d prompt + %d completion tokens",
            role, model, time.monotonic() - started,
            reply.usage.prompt_tokens, reply.usage.completion_tokens,
        )
        return reply

    def _span_attributes(self, request: dict[str, Any], role: str) -> dict[str, Any]:
        """What a chat span says about the request (GenAI semantic conventions): the
        endpoint's host and the model, never the key, the messages or the tools' schemas."""
        parts = urlsplit(self.settings.base_url)
        return {
            "gen_ai.operation.name": "chat",
            "gen_ai.provider.name": "openai",  # the API spoken; the profile says whose
            "gen_ai.system": "openai",  # the name of earlier versions of the conventions
            "gen_ai.request.model": request["model"],
            "gen_ai.request.temperature": request.get("temperature"),
            "gen_ai.request.max_tokens": request.get("max_tokens"),
            "gen_ai.output.type": "json" if "response_format" in request else "text",
            "server.address": parts.hostname,
            "server.port": parts.port or (443 if parts.scheme == "https" else 80),
            "planboard.llm.role": role,
            "planboard.llm.profile": self.profile.name,
            "planboard.llm.tools": len(request.get("tools") or []),
        }

    def _send_structured(
        self, request: dict[str, Any], plain: dict[str, Any] | None, model: str, role: str,
        on_text: TextListener | None = None,
    ) -> ChatReply:
        """Send with a schema; on a 400 retry once with ``plain`` JSON mode (or none)."""
        try:
            return self._send(request, model, role, on_text)
        except LLMBadRequestError as exc:
            logger.warning("%s rejected the JSON schema (%s); asking again without it",
                           safe_url(self.settings.base_url), exc)
            retry = {key: value for key, value in {**request, "response_format": plain}.items()
                     if value is not None}
            reply = self._send(retry, model, role, on_text)
        # only now is the schema known to be the cause: the same request passed without it
        self.schema_refused = True
        return reply

    def _send(self, request: dict[str, Any], model: str, role: str,
              on_text: TextListener | None = None) -> ChatReply:
        """Post ``request`` (streamed when ``on_text`` listens and the endpoint streams)."""
        refused: LLMBadRequestError | None = None
        if on_text is not None and self.profile.streams and not self.stream_refused:
            try:
                streamed = self._stream(request, model, role, on_text)
            except LLMBadRequestError as exc:
                streamed, refused = None, exc
            if streamed is not None:
                return _decoded(streamed, self.profile)
        reply = self._send_whole(request, model, role)
        if refused is not None:
            # only now is streaming known to be the cause: the same request passed without it
            logger.info("%s refused to stream (%s); asking it whole from now on",
                        safe_url(self.settings.base_url), refused)
            self.stream_refused = True
        if on_text is not None and reply.content:
            on_text(reply.content)
        return reply

    def _stream(self, request: dict[str, Any], model: str, role: str,
                on_text: TextListener) -> ChatReply | None:
        """The streamed reply to ``request``, not yet decoded; None when the stream broke.
        An error answer raises its LLMError, as a whole request's would."""
        import httpx2
        from openai import OpenAIError

        streamed = {**request, "stream": True}
        if self.profile.stream_usage:
            streamed["stream_options"] = {"include_usage": True}
        base_url = safe_url(self.settings.base_url)
        decode = decode_template_entities if self.profile.escapes_html else None
        try:
            with self.client.chat.completions.with_streaming_response.create(
                    **streamed) as response:
                if "text/event-stream" not in response.headers.get("content-type", ""):
                    return parse_reply(response.text(), base_url)  # it answered whole
                return read_events(response.iter_lines(), base_url, on_text, decode=decode)
        except OpenAIError as exc:
            error = map_openai_error(exc, self.settings, model, role)
            if not isinstance(error, LLMBadRequestError):
                logger.warning("%s call to %s failed: %s", role, model, error)
            raise error from None
        except (StreamBroken, LLMResponseError, httpx2.TransportError) as exc:
            logger.warning("%s call to %s: the stream broke (%s); asking again without it",
                           role, model, _redact(str(exc), self.settings))
            return None

    def _send_whole(self, request: dict[str, Any], model: str, role: str) -> ChatReply:
        """Post ``request``; a malformed 200 (a proxy's page, a cut-off body) is tried again."""
        from openai import OpenAIError

        client = self.client
        attempts = 1 + min(1, self.settings.max_retries)
        for attempt in range(1, attempts + 1):
            try:
                raw = client.chat.completions.with_raw_response.create(**request)
            except OpenAIError as exc:
                error = map_openai_error(exc, self.settings, model, role)
                logger.warning("%s call to %s failed: %s", role, model, error)
                raise error from None
            try:
                reply = parse_reply(raw.text, safe_url(self.settings.base_url))
            except LLMResponseError as exc:
                error = type(exc)(_redact(str(exc), self.settings))
                logger.warning("%s call to %s, attempt %d of %d: %s",
                               role, model, attempt, attempts, error)
                continue
            return _decoded(reply, self.profile)
        raise error


def _decoded(reply: ChatReply, profile: ProviderProfile) -> ChatReply:
    """``reply`` with the entities of an escaping chat template decoded, where it escapes."""
    return unescape_template_html(reply) if profile.escapes_html else reply


def _reply_attributes(reply: ChatReply) -> dict[str, Any]:
    """What a chat span says about the reply: the model, finish reason and tokens."""
    return {
        "gen_ai.response.model": reply.model,
        "gen_ai.response.id": reply.response_id,
        "gen_ai.response.finish_reasons": [reply.finish_reason] if reply.finish_reason else None,
        "gen_ai.usage.input_tokens": reply.usage.prompt_tokens,
        "gen_ai.usage.output_tokens": reply.usage.completion_tokens,
        "planboard.llm.tool_calls": len(reply.tool_calls),
    }


def _server_message(exc: Any) -> str:
    body = getattr(exc, "body", None)
    if isinstance(body, dict) and body.get("message"):
        return one_line(body["message"])
    return one_line(getattr(exc, "message", None) or exc)


def _model_variable(role: str) -> str:
    return "PLANBOARD_PLANNER_MODEL" if role == "planner" else "PLANBOARD_EXECUTOR_MODEL"


_MISSING_MODEL = re.compile(
    r"model\b[^.]{0,80}?\b(not found|does not exist|not exist|no such|is not available)"
    r"|\b(unknown|invalid|no such) model\b",
    re.IGNORECASE,
)


def _mentions_missing_model(exc: Any, detail: str, status: int) -> bool:
    code = str(getattr(exc, "code", "") or "").lower()
    if code in {"model_not_found", "invalid_model"}:
        return True
    if status == 404:  # a 404 on chat/completions that talks about a model
        return "model" in detail.lower()
    return bool(_MISSING_MODEL.search(detail))


def map_openai_error(
    exc: Exception, settings: LLMSettings, model: str, role: str = "executor"
) -> LLMError:
    """Turn an ``openai`` exception into a PlanBoard LLMError with a one-line message."""
    import openai

    error = _map(openai, exc, safe_url(settings.base_url), model, role, settings.timeout_s)
    worded = error.message
    if worded is None:
        message = _redact(str(error), settings)
        return error if message == str(error) else type(error)(message)
    params = {k: _redact(v, settings) if isinstance(v, str) else v
              for k, v in worded.params.items()}
    return type(error)(worded.model_copy(update={"params": params}))


def _redact(message: str, settings: LLMSettings) -> str:
    """``message`` without the key, even a partial one a server echoed back."""
    message = redact_secrets(message)
    if settings.api_key is not None:
        secret = settings.api_key.get_secret_value()
        if secret:
            message = message.replace(secret, "***")
    return message


def _map(
    openai: Any, exc: Exception, base_url: str, model: str, role: str, timeout_s: float
) -> LLMError:
    if isinstance(exc, openai.APITimeoutError):
        return LLMConnectionError(msg("llm.timeout", url=base_url, seconds=f"{timeout_s:g}"))
    if isinstance(exc, openai.APIConnectionError):
        return LLMConnectionError(msg("llm.unreachable", url=base_url))
    if not isinstance(exc, openai.APIStatusError):
        return LLMResponseError(msg("llm.unusable_reply", url=base_url, detail=one_line(exc)))
    status = exc.status_code
    detail = _server_message(exc)
    variable = _model_variable(role)
    if status == 401:
        return LLMAuthError(msg("llm.key_rejected"))
    if status == 403:
        return LLMAuthError(msg("llm.forbidden", detail=detail, model=repr(model)))
    if status in (400, 404, 422) and _mentions_missing_model(exc, detail, status):
        return LLMModelNotFoundError(msg("llm.model_not_found", url=base_url, model=repr(model),
                                         status=status, variable=variable))
    if status == 404:
        return LLMResponseError(msg("llm.no_chat_api", url=base_url, detail=detail))
    if status in (400, 422):
        return LLMBadRequestError(msg("llm.bad_request", status=status, detail=detail))
    if status == 429:
        return LLMResponseError(msg("llm.rate_limited", detail=detail))
    return LLMResponseError(msg("llm.error_status", status=status, detail=detail))

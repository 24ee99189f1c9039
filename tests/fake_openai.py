"""A fake OpenAI-compatible endpoint: a real threaded HTTP server on 127.0.0.1 for tests.

It speaks ``POST /v1/chat/completions`` and ``GET /v1/models`` like a real server (JSON
bodies, status codes, OpenAI-shaped errors), checks ``Authorization: Bearer <key>``,
answers from a scripted queue or a ``responder`` function of the request body, adds
``usage`` to every success, can wait a fixed ``latency_s`` per call, and records every
request thread-safely (the key's value is never recorded).

It needs nothing beyond the standard library (and core's LLMSettings for ``settings()``),
so bench/ uses it too. In tests use the ``fake_openai`` fixture of tests/conftest.py::

    def test_x(fake_openai):
        fake_openai.script("hello", tool_call("calculate", {"expression": "1+1"}))
        model = OpenAIChatModel(fake_openai.settings())

Standalone, to try the dashboard against it by hand: ``python -m tests.fake_openai_server``.
"""

from __future__ import annotations

import itertools
import json
import logging
import sys
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

__all__ = [
    "DEFAULT_KEY",
    "FakeError",
    "FakeOpenAI",
    "FakeRaw",
    "FakeReply",
    "RecordedRequest",
    "error",
    "text",
    "tool_call",
    "tool_calls",
]

logger = logging.getLogger(__name__)

DEFAULT_KEY = "sk-fake-test-key-0123456789"
DEFAULT_MODELS = ("gpt-4o-mini", "fake-planner", "fake-executor")


@dataclass
class FakeReply:
    """A successful chat completion: text and/or tool calls (name, arguments dict or str)."""

    content: str | None = None
    calls: list[tuple[str, dict[str, Any] | str]] = field(default_factory=list)
    usage: tuple[int, int] | None = None  # (prompt, completion); None = estimated
    include_usage: bool = True
    delay_s: float = 0.0
    finish_reason: str | None = None


@dataclass
class FakeError:
    """An OpenAI-shaped error answer with the given HTTP status."""

    status: int
    message: str
    type: str = "invalid_request_error"
    code: str | None = None
    delay_s: float = 0.0


@dataclass
class FakeRaw:
    """Any body at all (for replies a client must survive: garbage, wrong shapes)."""

    status: int = 200
    body: str | bytes = ""
    content_type: str = "application/json"
    delay_s: float = 0.0


Reply = FakeReply | FakeError | FakeRaw | str
Responder = Callable[[dict[str, Any]], Reply | None]


def text(content: str, *, usage: tuple[int, int] | None = None, delay_s: float = 0.0) -> FakeReply:
    """A plain text reply."""
    return FakeReply(content=content, usage=usage, delay_s=delay_s)


def tool_call(name: str, arguments: dict[str, Any] | str, **kwargs: Any) -> FakeReply:
    """A reply holding one tool call."""
    return FakeReply(calls=[(name, arguments)], **kwargs)


def tool_calls(*calls: tuple[str, dict[str, Any] | str], **kwargs: Any) -> FakeReply:
    """A reply holding several tool calls, each a (name, arguments) pair."""
    return FakeReply(calls=list(calls), **kwargs)


def error(status: int, message: str = "", *, code: str | None = None, **kwargs: Any) -> FakeError:
    """An error answer, e.g. ``error(400, "tool_choice must be a string")`` (LM Studio)."""
    return FakeError(status=status, message=message or f"Fake error {status}", code=code, **kwargs)


@dataclass
class RecordedRequest:
    """One request as the server saw it; header names lower-case, authorization value ``***``."""

    method: str
    path: str
    headers: dict[str, str]
    body: Any
    auth_ok: bool
    started: float
    finished: float = 0.0
    status: int = 0


def _estimate_tokens(value: Any) -> int:
    return max(1, len(json.dumps(value, ensure_ascii=False)) // 4)


class FakeOpenAI:
    """The server: ``start()``/``stop()`` (or ``with``), ``script(...)``, ``requests``."""

    def __init__(
        self,
        *,
        api_key: str | None = DEFAULT_KEY,
        models: Iterable[str] | None = DEFAULT_MODELS,
        latency_s: float = 0.0,
        responder: Responder | None = None,
        reject_object_tool_choice: bool = False,
        host: str = "127.0.0.1",
        port: int = 0,
    ) -> None:
        self.api_key = api_key
        self.models: set[str] | None = set(models) if models is not None else None
        self.latency_s = latency_s
        self.responder = responder
        self.reject_object_tool_choice = reject_object_tool_choice
        self._queue: list[Reply] = []
        self._requests: list[RecordedRequest] = []
        self._lock = threading.Lock()
        self._ids = itertools.count(1)
        self._server = _QuietServer((host, port), _make_handler(self))
        self._thread: threading.Thread | None = None

    # -- lifecycle ---------------------------------------------------------------------
    @property
    def port(self) -> int:
        return self._server.server_address[1]

    @property
    def base_url(self) -> str:
        """The URL to use as OPENAI_BASE_URL (ends in /v1)."""
        return f"http://127.0.0.1:{self.port}/v1"

    def start(self) -> FakeOpenAI:
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.01},
            name="fake-openai", daemon=True,
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def __enter__(self) -> FakeOpenAI:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    # -- scripting and inspection ------------------------------------------------------
    def script(self, *replies: Reply) -> FakeOpenAI:
        """Queue replies for the next chat completion calls, in order."""
        with self._lock:
            self._queue.extend(replies)
        return self

    @property
    def pending(self) -> int:
        """Scripted replies not used yet."""
        with self._lock:
            return len(self._queue)

    @property
    def requests(self) -> list[RecordedRequest]:
        """A copy of every request so far, in arrival order."""
        with self._lock:
            return list(self._requests)

    @property
    def chat_bodies(self) -> list[dict[str, Any]]:
        """The JSON bodies of the chat completion requests, in arrival order."""
        return [r.body for r in self.requests if r.path.endswith("/chat/completions")]

    def settings(self, **overrides: Any) -> Any:
        """LLMSettings pointing at this server (no retries, short timeout) for tests."""
        from core.llm.settings import LLMSettings

        values: dict[str, Any] = {
            "api_key": self.api_key, "base_url": self.base_url, "provider": "generic",
            "max_retries": 0, "timeout_s": 10.0,
        }
        values.update(overrides)
        return LLMSettings(**values)

    # -- request handling (called from handler threads) --------------------------------
    def _record(self, record: RecordedRequest) -> None:
        with self._lock:
            self._requests.append(record)

    def _next_reply(self, body: dict[str, Any]) -> Reply:
        with self._lock:
            if self._queue:
                return self._queue.pop(0)
        if self.responder is not None:
            reply = self.responder(body)
            if reply is not None:
                return reply
        return error(500, "FakeOpenAI has no scripted reply left for this request.",
                     type="server_error")

    def handle_chat(self, body: Any) -> tuple[int, bytes, str]:
        """Status, body bytes and content type for one chat completion request."""
        problem = self._check_chat(body)
        if problem is not None:
            return _error_response(problem)
        reply = self._next_reply(body)
        if isinstance(reply, str):
            reply = text(reply)
        delay = self.latency_s + reply.delay_s
        if delay:
            time.sleep(delay)
        if isinstance(reply, FakeError):
            return _error_response(reply)
        if isinstance(reply, FakeRaw):
            raw = reply.body.encode() if isinstance(reply.body, str) else reply.body
            return reply.status, raw, reply.content_type
        return 200, json.dumps(self._completion(body, reply)).encode(), "application/json"

    def _check_chat(self, body: Any) -> FakeError | None:
        if not isinstance(body, dict):
            return error(400, "We could not parse the JSON body of your request.")
        model = body.get("model")
        if not model or not isinstance(body.get("messages"), list) or not body["messages"]:
            return error(400, "'model' and a non-empty 'messages' array are required.")
        if self.models is not None and model not in self.models:
            return error(404, f"The model `{model}` does not exist or you do not have "
                         "access to it.", code="model_not_found")
        if body.get("stream"):
            return error(400, "FakeOpenAI does not stream; send stream=false.")
        choice = body.get("tool_choice")
        if choice is not None and not body.get("tools"):
            return error(400, "'tool_choice' is only allowed when 'tools' are specified.")
        if isinstance(choice, dict):
            if self.reject_object_tool_choice:
                return error(400, "Invalid tool_choice type: 'object'. Supported string "
                             "values: none, auto, required")
            names = {t.get("function", {}).get("name") for t in body.get("tools") or []}
            if choice.get("function", {}).get("name") not in names:
                return error(400, "Invalid value for 'tool_choice': the function is not in "
                             "'tools'.")
        return None

    def _completion(self, body: dict[str, Any], reply: FakeReply) -> dict[str, Any]:
        number = next(self._ids)
        message: dict[str, Any] = {"role": "assistant", "content": reply.content}
        if reply.calls:
            message["tool_calls"] = [
                {"id": f"call_{number}_{i}", "type": "function",
                 "function": {"name": name, "arguments": args if isinstance(args, str)
                              else json.dumps(args, ensure_ascii=False)}}
                for i, (name, args) in enumerate(reply.calls)
            ]
        finish = reply.finish_reason or ("tool_calls" if reply.calls else "stop")
        result: dict[str, Any] = {
            "id": f"chatcmpl-fake-{number}", "object": "chat.completion",
            "created": int(time.time()), "model": body["model"],
            "choices": [{"index": 0, "message": message, "finish_reason": finish,
                         "logprobs": None}],
        }
        if reply.include_usage:
            prompt, completion = reply.usage or (
                _estimate_tokens(body["messages"]) + (_estimate_tokens(body["tools"])
                                                      if body.get("tools") else 0),
                _estimate_tokens(message.get("tool_calls") or reply.content or ""),
            )
            result["usage"] = {"prompt_tokens": prompt, "completion_tokens": completion,
                               "total_tokens": prompt + completion}
        return result

    def handle_models(self) -> tuple[int, bytes, str]:
        data = [{"id": m, "object": "model", "created": 0, "owned_by": "fake"}
                for m in sorted(self.models or DEFAULT_MODELS)]
        return 200, json.dumps({"object": "list", "data": data}).encode(), "application/json"


class _QuietServer(ThreadingHTTPServer):
    """Handler threads are daemons; a client that hung up (e.g. after a timeout) is normal."""

    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        if isinstance(sys.exc_info()[1], ConnectionError):
            return
        logger.exception("FakeOpenAI failed to answer %s", client_address)


def _error_response(problem: FakeError) -> tuple[int, bytes, str]:
    payload = {"error": {"message": problem.message, "type": problem.type,
                         "param": None, "code": problem.code}}
    return problem.status, json.dumps(payload).encode(), "application/json"


def _make_handler(server: FakeOpenAI) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        server_version = "FakeOpenAI/1.0"

        def log_message(self, format: str, *args: Any) -> None:
            """Stay quiet: tests read ``requests`` instead of a log."""

        def do_GET(self) -> None:
            self._serve(None)

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b""
            try:
                body = json.loads(raw) if raw else None
            except ValueError:
                body = raw.decode("utf-8", "replace")
            self._serve(body)

        def _serve(self, body: Any) -> None:
            headers = {k.lower(): ("***" if k.lower() == "authorization" else v)
                       for k, v in self.headers.items()}
            expected = f"Bearer {server.api_key}"
            auth_ok = server.api_key is None or self.headers.get("Authorization") == expected
            record = RecordedRequest(method=self.command, path=self.path, headers=headers,
                                     body=body, auth_ok=auth_ok, started=time.monotonic())
            server._record(record)
            status, payload, content_type = self._route(body, auth_ok)
            with server._lock:
                record.status = status
                record.finished = time.monotonic()
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(payload)))
            self.send_header("x-request-id", f"req_fake_{id(record)}")
            self.end_headers()
            self.wfile.write(payload)

        def _route(self, body: Any, auth_ok: bool) -> tuple[int, bytes, str]:
            path = self.path.split("?", 1)[0].rstrip("/")
            known = {("POST", "/v1/chat/completions"), ("GET", "/v1/models")}
            if (self.command, path) not in known:
                return _error_response(error(404, f"Unknown request URL: {self.command} "
                                             f"{self.path}.", code="unknown_url"))
            if not auth_ok:
                return _error_response(error(
                    401, "Incorrect API key provided. You can find your API key in your "
                    "account settings.", code="invalid_api_key"))
            if self.command == "GET":
                return server.handle_models()
            return server.handle_chat(body)

    return Handler


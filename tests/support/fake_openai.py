"""A fake OpenAI-compatible endpoint: a real threaded HTTP server on 127.0.0.1 for tests.

It speaks ``POST /v1/chat/completions`` and ``GET /v1/models`` like a real server (JSON
bodies, status codes, OpenAI-shaped errors), checks ``Authorization: Bearer <key>``,
answers from a scripted queue or a ``responder`` function of the request body, adds
``usage`` to every success, can wait a fixed ``latency_s`` per call, and records every
request thread-safely (the key's value is never recorded).

Asked to ``stream``, it answers as OpenAI does: server-sent events, one ``data: {chunk}``
line per piece of the reply (``chunk_chars`` characters each, ``chunk_delay_s`` apart),
the finish reason, a usage chunk when ``stream_options.include_usage`` asks for one, then
``data: [DONE]``. A reply's :class:`Hold` keeps the rest of its stream back until the test
releases it, and ``cut_after`` ends a stream early, as a dropped connection does.
``FakeOpenAI(streams=False)`` refuses streaming with a 400, as some servers do.

It needs nothing beyond the standard library (and core's LLMSettings for ``settings()``),
so bench/ uses it too. In tests use the ``fake_openai`` fixture of tests/conftest.py::

    def test_x(fake_openai):
        fake_openai.script("hello", tool_call("calculate", {"expression": "1+1"}))
        model = OpenAIChatModel(fake_openai.settings())

Standalone, to try the dashboard against it by hand: ``python -m tests.support.fake_openai_server``.
"""

from __future__ import annotations

import itertools
import json
import logging
import sys
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

__all__ = [
    "DEFAULT_KEY",
    "FakeError",
    "FakeOpenAI",
    "FakeRaw",
    "FakeReply",
    "Hold",
    "RecordedRequest",
    "error",
    "streamed",
    "text",
    "tool_call",
    "tool_calls",
]

logger = logging.getLogger(__name__)

DEFAULT_KEY = "sk-fake-test-key-0123456789"
DEFAULT_MODELS = ("gpt-4o-mini", "fake-planner", "fake-executor")


@dataclass
class Hold:
    """Where a streamed reply stops until the test says: the stream sends everything up to
    the end of ``after`` (its first occurrence), sets ``reached`` and waits for ``release``."""

    after: str
    reached: threading.Event = field(default_factory=threading.Event)
    release: threading.Event = field(default_factory=threading.Event)


@dataclass
class FakeReply:
    """A successful chat completion: text and/or tool calls (name, arguments dict or str).

    The ``chunk_*``, ``hold`` and ``cut_after`` fields shape the reply when it is streamed.
    """

    content: str | None = None
    calls: list[tuple[str, dict[str, Any] | str]] = field(default_factory=list)
    usage: tuple[int, int] | None = None  # (prompt, completion); None = estimated
    include_usage: bool = True
    delay_s: float = 0.0
    finish_reason: str | None = None
    chunk_chars: int = 24
    chunk_delay_s: float = 0.0
    hold: Hold | None = None
    cut_after: str | None = None  # the stream ends after this text: no finish, no [DONE]


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


def streamed(content: str, *, chunk_chars: int = 24, chunk_delay_s: float = 0.0,
             hold: Hold | None = None, cut_after: str | None = None) -> FakeReply:
    """A text reply shaped for streaming (sent whole to a request that does not stream)."""
    return FakeReply(content=content, chunk_chars=chunk_chars, chunk_delay_s=chunk_delay_s,
                     hold=hold, cut_after=cut_after)


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
        streams: bool = True,
        host: str = "127.0.0.1",
        port: int = 0,
    ) -> None:
        self.api_key = api_key
        self.models: set[str] | None = set(models) if models is not None else None
        self.latency_s = latency_s
        self.responder = responder
        self.reject_object_tool_choice = reject_object_tool_choice
        self.streams = streams
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

    def handle_chat(self, body: Any) -> tuple[int, bytes | Iterator[bytes], str]:
        """Status, body (bytes, or the events of a stream) and content type for one chat
        completion request."""
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
        completion = self._completion(body, reply)
        if body.get("stream"):
            return 200, _events(completion, reply, body), "text/event-stream"
        return 200, json.dumps(completion).encode(), "application/json"

    def _check_chat(self, body: Any) -> FakeError | None:
        if not isinstance(body, dict):
            return error(400, "We could not parse the JSON body of your request.")
        model = body.get("model")
        if not model or not isinstance(body.get("messages"), list) or not body["messages"]:
            return error(400, "'model' and a non-empty 'messages' array are required.")
        if self.models is not None and model not in self.models:
            return error(404, f"The model `{model}` does not exist or you do not have "
                         "access to it.", code="model_not_found")
        if body.get("stream") and not self.streams:
            return error(400, "This server does not stream; send stream=false.")
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


def _events(completion: dict[str, Any], reply: FakeReply, body: dict[str, Any]
            ) -> Iterator[bytes]:
    """The server-sent events of ``completion`` streamed as ``reply`` says."""
    choice = completion["choices"][0]
    head = {key: completion[key] for key in ("id", "created", "model")}

    def event(delta: dict[str, Any], finish: str | None = None) -> bytes:
        chunk = {**head, "object": "chat.completion.chunk",
                 "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}
        return b"data: " + json.dumps(chunk).encode() + b"\n\n"

    yield event({"role": "assistant", "content": ""})
    content = choice["message"]["content"] or ""
    for start, end in _pieces(content, reply):
        if reply.cut_after is not None and start >= _end_of(content, reply.cut_after):
            return
        if start and reply.chunk_delay_s:
            time.sleep(reply.chunk_delay_s)
        if reply.hold is not None and start == _end_of(content, reply.hold.after):
            reply.hold.reached.set()
            reply.hold.release.wait(timeout=30)
        yield event({"content": content[start:end]})
    if choice["message"].get("tool_calls"):
        calls = [{**call, "index": index}
                 for index, call in enumerate(choice["message"]["tool_calls"])]
        yield event({"tool_calls": calls})
    yield event({}, choice["finish_reason"])
    if (body.get("stream_options") or {}).get("include_usage") and "usage" in completion:
        usage = {**head, "object": "chat.completion.chunk", "choices": [],
                 "usage": completion["usage"]}
        yield b"data: " + json.dumps(usage).encode() + b"\n\n"
    yield b"data: [DONE]\n\n"


def _end_of(content: str, marker: str) -> int:
    found = content.find(marker)
    return len(content) + 1 if found < 0 else found + len(marker)


def _pieces(content: str, reply: FakeReply) -> list[tuple[int, int]]:
    """(start, end) of each piece: ``chunk_chars`` long, split also where a hold or a cut
    falls, so that the stream stops exactly there."""
    cuts = set(range(0, len(content), max(1, reply.chunk_chars)))
    for marker in (reply.hold.after if reply.hold else None, reply.cut_after):
        if marker is not None and _end_of(content, marker) < len(content):
            cuts.add(_end_of(content, marker))
    starts = sorted(cuts)
    return list(zip(starts, [*starts[1:], len(content)], strict=True))


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
            if isinstance(payload, bytes):
                self.send_header("Content-Length", str(len(payload)))
            self.send_header("x-request-id", f"req_fake_{id(record)}")
            self.end_headers()
            if isinstance(payload, bytes):
                self.wfile.write(payload)
                return
            for event in payload:  # HTTP/1.0: the stream ends when the connection closes
                self.wfile.write(event)
                self.wfile.flush()

        def _route(self, body: Any, auth_ok: bool) -> tuple[int, bytes | Iterator[bytes], str]:
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


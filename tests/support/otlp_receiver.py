"""An OTLP/HTTP trace receiver for tests: a real threaded HTTP server on 127.0.0.1.

It accepts ``POST /v1/traces`` with a protobuf ``ExportTraceServiceRequest`` (gzip or not),
decodes it with the opentelemetry-proto package the exporter depends on, and keeps every
span as a :class:`ReceivedSpan` and every raw body (so that a test can look for a secret in
all of it, attribute names, resource and trace state included). Point a process at it with
``OTEL_EXPORTER_OTLP_ENDPOINT=receiver.endpoint``.
"""

from __future__ import annotations

import gzip
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)

from tests.support.waiting import DEFAULT_TIMEOUT_S, wait_until

__all__ = ["OTLPReceiver", "ReceivedSpan"]

_KINDS = {0: "unspecified", 1: "internal", 2: "server", 3: "client", 4: "producer",
          5: "consumer"}
_STATUSES = {0: "unset", 1: "ok", 2: "error"}


@dataclass
class ReceivedSpan:
    """One exported span, its ids in lower-case hex (``parent_id`` empty for a root)."""

    name: str
    trace_id: str
    span_id: str
    parent_id: str
    kind: str
    status: str
    attributes: dict[str, Any]
    resource: dict[str, Any]
    start_ns: int
    end_ns: int

    def __repr__(self) -> str:
        return f"<{self.name} {self.span_id} < {self.parent_id or '-'} {self.attributes}>"


def _value(any_value: Any) -> Any:
    kind = any_value.WhichOneof("value")
    if kind == "array_value":
        return [_value(item) for item in any_value.array_value.values]
    if kind == "kvlist_value":
        return {item.key: _value(item.value) for item in any_value.kvlist_value.values}
    return getattr(any_value, kind) if kind else None


def _attributes(pairs: Any) -> dict[str, Any]:
    return {pair.key: _value(pair.value) for pair in pairs}


def decode(body: bytes) -> list[ReceivedSpan]:
    """The spans of one export request."""
    request = ExportTraceServiceRequest()
    request.ParseFromString(body)
    spans = []
    for resource_spans in request.resource_spans:
        resource = _attributes(resource_spans.resource.attributes)
        for scope_spans in resource_spans.scope_spans:
            for raw in scope_spans.spans:
                spans.append(ReceivedSpan(
                    name=raw.name, trace_id=raw.trace_id.hex(), span_id=raw.span_id.hex(),
                    parent_id=raw.parent_span_id.hex(), kind=_KINDS.get(raw.kind, "?"),
                    status=_STATUSES.get(raw.status.code, "?"),
                    attributes=_attributes(raw.attributes), resource=resource,
                    start_ns=raw.start_time_unix_nano, end_ns=raw.end_time_unix_nano))
    return spans


@dataclass
class OTLPReceiver:
    """Start with ``with OTLPReceiver() as receiver:`` (or :meth:`start` / :meth:`stop`)."""

    bodies: list[bytes] = field(default_factory=list)
    spans: list[ReceivedSpan] = field(default_factory=list)
    paths: list[str] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _server: ThreadingHTTPServer | None = None

    @property
    def endpoint(self) -> str:
        """The base URL for ``OTEL_EXPORTER_OTLP_ENDPOINT`` (the exporter adds /v1/traces)."""
        assert self._server is not None, "start the receiver first"
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def start(self) -> OTLPReceiver:
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                if self.headers.get("Content-Encoding") == "gzip":
                    body = gzip.decompress(body)
                status = 404
                if self.path == "/v1/traces":
                    received = decode(body)
                    with receiver._lock:
                        receiver.bodies.append(body)
                        receiver.spans.extend(received)
                        receiver.paths.append(self.path)
                    status = 200
                answer = ExportTraceServiceResponse().SerializeToString()
                self.send_response(status)
                self.send_header("Content-Type", "application/x-protobuf")
                self.send_header("Content-Length", str(len(answer)))
                self.end_headers()
                self.wfile.write(answer)

            def log_message(self, *args: Any) -> None:  # quiet
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        threading.Thread(target=self._server.serve_forever, name="otlp-receiver",
                         daemon=True).start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def __enter__(self) -> OTLPReceiver:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    def received(self) -> list[ReceivedSpan]:
        """A copy of the spans received so far."""
        with self._lock:
            return list(self.spans)

    def wait_for(self, until: Callable[[list[ReceivedSpan]], bool],
                 timeout: float = DEFAULT_TIMEOUT_S, what: str = "the spans"
                 ) -> list[ReceivedSpan]:
        """Wait until ``until(spans)`` holds; AssertionError naming ``what`` (and the spans
        received) after ``timeout``."""
        def arrived() -> list[ReceivedSpan] | None:
            spans = self.received()
            return spans if until(spans) else None

        try:
            return wait_until(arrived, timeout, what=what, poll_s=0.05)
        except AssertionError as exc:
            raise AssertionError(f"{exc}; received: {self.received()}") from None

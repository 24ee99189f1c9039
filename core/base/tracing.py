"""Traces of runs for OpenTelemetry: spans while an OTLP endpoint is set, nothing otherwise.

The standard variables decide. ``OTEL_EXPORTER_OTLP_ENDPOINT`` (or
``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT``) turns tracing on and says where the collector's
OTLP/HTTP port listens; ``OTEL_SDK_DISABLED=true`` or ``OTEL_TRACES_EXPORTER=none`` turn it
off again; the exporter's headers, timeout and compression, the sampler, the service name
(default ``planboard``) and the resource attributes are read by the SDK as usual. Unset,
:func:`span` hands out one shared span that records nothing: no OpenTelemetry module is
imported and no exporter thread starts, so a run pays one dictionary lookup per span.

Spans are exported in batches by a background thread; :func:`flush` asks for the export
now (at a run's end) and the SDK flushes at the interpreter's exit, so a short command's
trace is sent too (a process leaving through ``os._exit`` calls :func:`shutdown` first).

PlanBoard's tracer provider is its own, never the global one: the libraries under it trace
through the global provider, and the MCP SDK's spans carry a server's error text as it
came, before PlanBoard redacts the configuration's secrets from it. So only PlanBoard's
spans leave the process, with the attributes their callers give: the trace context, names,
counts, statuses and error types, never an API key, a prompt, a result or an argument's
value (docs/TRACING.md lists them).
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Iterator, Mapping
from contextlib import AbstractContextManager, contextmanager, nullcontext
from dataclasses import dataclass
from typing import Any, Literal

from core.base.messages import msg

__all__ = ["Span", "SpanKind", "carrier", "enabled", "endpoint", "flush", "shutdown", "span",
           "start_span"]

logger = logging.getLogger(__name__)

SpanKind = Literal["internal", "client", "producer", "consumer"]

SERVICE_NAME = "planboard"
_ENDPOINTS = ("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_ENDPOINT")
_PROTOCOLS = ("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "OTEL_EXPORTER_OTLP_PROTOCOL")
_SUPPORTED_PROTOCOL = "http/protobuf"
_FLUSH_TIMEOUT_MS = 5_000


def endpoint() -> str:
    """Where traces go (the traces endpoint, else the base endpoint); empty when unset."""
    for name in _ENDPOINTS:
        value = os.environ.get(name, "").strip()
        if value:
            return value
    return ""


def enabled() -> bool:
    """True when an OTLP endpoint is set and neither the SDK nor the traces exporter is
    switched off; read from the environment at every call (cheap), so a process follows
    its environment."""
    if not endpoint():
        return False
    environ = os.environ
    if environ.get("OTEL_SDK_DISABLED", "").strip().lower() == "true":
        return False
    return environ.get("OTEL_TRACES_EXPORTER", "otlp").strip().lower() != "none"


class Span:
    """A span being recorded, or (``raw`` None) the shared span that records nothing."""

    __slots__ = ("_raw",)

    def __init__(self, raw: Any = None) -> None:
        self._raw = raw

    @property
    def recording(self) -> bool:
        """True when this span is exported (tracing is on)."""
        return self._raw is not None

    def set(self, attributes: Mapping[str, Any]) -> None:
        """Add attributes; a None value is left out, a value OTLP cannot carry becomes text."""
        if self._raw is not None:
            self._raw.set_attributes(_attributes(attributes))

    def fail(self, error_type: str) -> None:
        """Mark the span failed with ``error_type``: a class of error, low in cardinality
        (an exception's class name, a message code), never its text."""
        if self._raw is not None:
            from opentelemetry.trace import StatusCode

            self._raw.set_attribute("error.type", error_type)
            self._raw.set_status(StatusCode.ERROR)

    def current(self) -> AbstractContextManager[Any]:
        """Make this span (one of :func:`start_span`) current around a block, without
        ending it at the block's end: spans started in the block, and in the threads that
        copy its context, are its children."""
        if self._raw is None:
            return nullcontext()
        from opentelemetry.trace import use_span

        return use_span(self._raw, end_on_exit=False)

    def end(self) -> None:
        """End a span of :func:`start_span` (once; later calls do nothing)."""
        if self._raw is not None:
            self._raw.end()
            self._raw = None


_OFF = nullcontext(Span())  # the one do-nothing span, entered as often as asked


def span(name: str, attributes: Mapping[str, Any] | None = None, *,
         kind: SpanKind = "internal",
         parent: Mapping[str, str] | None = None) -> AbstractContextManager[Span]:
    """A span named ``name`` around the block, current inside it (so the spans started in
    the block, and in the threads that copy its context, are its children).

    ``parent``: a carrier from :func:`carrier`, stored with a run, whose span is the parent
    (another process's, say); None: the current span, if any. An exception leaving the
    block marks the span failed with its class name. Tracing off: the shared do-nothing
    span.
    """
    if not enabled():
        return _OFF
    tracer = _tracer()
    if tracer is None:
        return _OFF
    return _recording(tracer, name, attributes or {}, kind, parent)


def start_span(name: str, attributes: Mapping[str, Any] | None = None) -> Span:
    """A span named ``name`` started now as a child of the current span, but not made
    current: a level that outlives a block (a phase of a run) makes it current around
    what belongs to it (:meth:`Span.current`) and ends it (:meth:`Span.end`). Tracing off:
    a span that records nothing."""
    if not enabled():
        return Span()
    tracer = _tracer()
    if tracer is None:
        return Span()
    return Span(tracer.start_span(name, attributes=_attributes(attributes or {})))


@contextmanager
def _recording(tracer: Any, name: str, attributes: Mapping[str, Any], kind: SpanKind,
               parent: Mapping[str, str] | None) -> Iterator[Span]:
    from opentelemetry.trace import SpanKind as Kinds

    context = _extracted(parent) if parent else None
    with tracer.start_as_current_span(
            name, context=context, kind=getattr(Kinds, kind.upper()),
            attributes=_attributes(attributes), record_exception=False,
            set_status_on_exception=False) as raw:
        handle = Span(raw)
        try:
            yield handle
        except Exception as exc:  # a BaseException (a suspended run) is no failure
            code = getattr(getattr(exc, "message", None), "code", None)
            handle.set({"planboard.error.code": code})
            handle.fail(type(exc).__name__)
            raise


def carrier() -> dict[str, str]:
    """The current span's W3C trace context (``traceparent``, ``tracestate``) to store with
    a run, so that a process continuing it adds its spans to the same trace; empty when
    tracing is off or no span is current."""
    if not enabled():
        return {}
    from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

    found: dict[str, str] = {}
    TraceContextTextMapPropagator().inject(found)  # only the trace context, no baggage
    return found


def _extracted(parent: Mapping[str, str]) -> Any:
    """The context of a stored carrier; a malformed one gives a context without a span
    (the new span then starts a trace of its own)."""
    from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

    return TraceContextTextMapPropagator().extract(
        {key: value for key, value in parent.items() if isinstance(value, str)})


def _attributes(attributes: Mapping[str, Any]) -> dict[str, Any]:
    kept: dict[str, Any] = {}
    for key, value in attributes.items():
        if value is None:
            continue
        if isinstance(value, list | tuple):
            value = [item if isinstance(item, str | bool | int | float) else str(item)
                     for item in value]
        elif not isinstance(value, str | bool | int | float):
            value = str(value)
        kept[key] = value
    return kept


# ---- the SDK, set up on first use --------------------------------------------------------

@dataclass(frozen=True)
class _Exporting:
    where: tuple[str, ...]  # the endpoint variables it was made for
    provider: Any
    tracer: Any


_lock = threading.Lock()
_current: _Exporting | None = None
_refused: set[tuple[str, ...]] = set()  # settings already warned about (once each)


def _tracer() -> Any:
    """The tracer for the endpoint now set: made on first use, and again (the old provider
    flushed and shut down) when the endpoint changes; None when the SDK cannot export to
    it (said once in the log)."""
    global _current
    where = tuple(os.environ.get(name, "") for name in (*_ENDPOINTS, *_PROTOCOLS))
    with _lock:
        if _current is not None and _current.where == where:
            return _current.tracer
        if where in _refused:
            return None
        old = _current
        try:
            _current = _exporting(where)
        except _Unusable as problem:
            _refused.add(where)
            logger.warning("%s", problem.args[0])
            _current = None
    if old is not None:
        old.provider.shutdown()
    return _current.tracer if _current is not None else None


class _Unusable(Exception):
    """The settings ask for an export this process cannot make."""


def _exporting(where: tuple[str, ...]) -> _Exporting:
    protocol = next((value for name in _PROTOCOLS
                     if (value := os.environ.get(name, "").strip().lower())), "")
    if protocol and protocol != _SUPPORTED_PROTOCOL:
        raise _Unusable(msg("tracing.protocol_unsupported", protocol=protocol))
    try:
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor
    except ImportError as exc:
        raise _Unusable(msg("tracing.sdk_missing", module=exc.name or str(exc))) from None
    resource = Resource.create()  # OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES
    if str(resource.attributes.get("service.name", "")).startswith("unknown_service"):
        resource = resource.merge(Resource({"service.name": SERVICE_NAME}))
    provider = TracerProvider(resource=resource)  # flushed at the interpreter's exit
    provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
    return _Exporting(where, provider, provider.get_tracer("planboard"))


def flush(*, wait: bool = True) -> None:
    """Export the spans ended so far now (``wait=False``: from a thread of its own, so that
    an unreachable collector delays nothing); nothing when no span was made."""
    exporting = _current
    if exporting is None:
        return
    if wait:
        exporting.provider.force_flush(_FLUSH_TIMEOUT_MS)
        return
    threading.Thread(target=exporting.provider.force_flush, args=(_FLUSH_TIMEOUT_MS,),
                     name="planboard-trace-flush", daemon=True).start()


def shutdown() -> None:
    """Export what is left and stop the exporter (before ``os._exit``, which runs no exit
    handler); harmless when nothing was traced."""
    global _current
    with _lock:
        exporting, _current = _current, None
    if exporting is not None:
        exporting.provider.shutdown()

"""One MCP server, connected: started, its tools listed, called, watched and stopped.

A :class:`ServerConnection` lives on the pool's event loop (:mod:`core.tools.mcp.pool`);
every method here is a coroutine of that loop. Its whole life is one task, :meth:`_serve`,
inside one cancel scope: the transport (a process on stdio, or an HTTP session), the MCP
session, ``initialize`` and the first ``tools/list`` run under the scope's deadline
(``startTimeout``), which is lifted once the tools are known; cancelling the scope stops
the server, and the SDK's own shutdown (close stdin, wait, terminate, kill, all bounded)
reaps its process. The task also re-lists the tools when the server sends
``notifications/tools/list_changed``, and ends when the server's output ends (it died):
the connection is then ``stopped``, and the next call starts it again. A call that was in
flight when it died fails; it is never sent again by itself.

What a server writes to stderr goes to a temporary file, so that a server that cannot
start is reported with its own last words (secrets redacted), not a bare "closed".
"""

from __future__ import annotations

import asyncio
import logging
import math
import sys
import tempfile
from collections.abc import Callable
from contextlib import AsyncExitStack
from typing import IO, Any, Literal

import anyio
import mcp_types as types
from mcp import ClientSession
from mcp.shared.exceptions import MCPError

from core.base.messages import Message, msg
from core.errors import ToolExecutionError, ToolsetError
from core.tools.mcp.config import ServerConfig

__all__ = ["CLIENT_NAME", "ServerConnection", "State", "quiet_unparsed_lines"]

logger = logging.getLogger(__name__)

State = Literal["stopped", "starting", "running", "failed"]
CLIENT_NAME = "planboard"
_STDERR_TAIL_CHARS = 400
_LIST_PAGES = 100  # a server that pages forever cannot hang a listing
_HTTP_CONNECT_S = 30.0


class ServerConnection:
    """A configured server and, while it runs, its session and tools.

    ``state``: ``stopped`` (never started, stopped, or it died: the next call starts it),
    ``starting``, ``running``, ``failed`` (it could not start; ``problem`` says why).
    ``changed()`` is called on the loop whenever the state or the tools change.
    """

    def __init__(self, config: ServerConfig, changed: Callable[[], None]) -> None:
        self.config = config
        self.state: State = "stopped"
        self.problem: Message | None = None
        self.tools: tuple[types.Tool, ...] = ()
        self.failed_at: float | None = None  # loop time of the last failed start
        self._changed = changed
        self._session: ClientSession | None = None
        self._scope: anyio.CancelScope | None = None
        self._task: asyncio.Task[None] | None = None
        self._lock: asyncio.Lock | None = None
        self._relist = asyncio.Event()
        self._lost = asyncio.Event()
        self._garbage: str | None = None
        self._errlog: IO[str] | None = None
        self._call_mark = 0  # how much it had written on stderr when the last call began

    # ---- starting and stopping ------------------------------------------------------------

    async def ensure_started(self) -> None:
        """Start the server unless it runs; ToolsetError (one line naming it) when it cannot."""
        if self._lock is None:
            self._lock = asyncio.Lock()
        async with self._lock:
            if self.state == "running" and not self._lost.is_set():
                return
            if self._task is not None and not self._task.done():
                self.stop()  # it died, or its output ended: the old session winds down first
                await self.wait_stopped()
            await self._start()

    async def _start(self) -> None:
        loop = asyncio.get_running_loop()
        ready: asyncio.Future[None] = loop.create_future()
        self.state, self.problem = "starting", None
        self._relist, self._lost, self._garbage = asyncio.Event(), asyncio.Event(), None
        self._task = loop.create_task(self._serve(ready), name=f"mcp-{self.config.name}")
        # the scope's deadline bounds the start; this bound only guards against a shutdown
        # that itself hangs (a process that survives its kill)
        try:
            await asyncio.wait_for(asyncio.shield(ready), self.config.start_timeout + 15)
        except TimeoutError:
            self.stop()
            raise ToolsetError(self._failed(msg(
                "mcp.start_timeout", server=self.config.name,
                seconds=f"{self.config.start_timeout:g}", path=self.config.source))) from None

    def stop(self) -> None:
        """Stop the server (its task ends once the SDK has stopped the process)."""
        if self._scope is not None:
            self._scope.cancel()

    async def wait_stopped(self) -> None:
        """Wait until the connection's task has ended."""
        if self._task is not None and not self._task.done():
            await asyncio.wait([self._task])

    async def _serve(self, ready: asyncio.Future[None]) -> None:
        """The connection's life: start, list, serve calls and re-listings, stop."""
        with tempfile.TemporaryFile("w+", encoding="utf-8", errors="replace") as errlog:
            self._errlog = errlog
            try:
                await self._live(ready)
            finally:
                self._errlog = None
                self._session, self._scope = None, None
                self._changed()

    async def _live(self, ready: asyncio.Future[None]) -> None:
        ended: Message | None = None
        try:
            with anyio.CancelScope() as scope:
                self._scope = scope
                scope.deadline = anyio.current_time() + self.config.start_timeout
                async with AsyncExitStack() as stack:
                    session = await self._connect(stack)
                    await session.initialize()
                    self.tools = await _list_tools(session)
                    scope.deadline = math.inf
                    self._session, self.state = session, "running"
                    ready.set_result(None)
                    self._changed()
                    await self._serve_session(session)
                    ended = msg("mcp.server_exited", server=self.config.name,
                                stderr=self._stderr_tail() or "-")
            if not ready.done():  # the deadline passed while it started
                ready.set_exception(ToolsetError(self._failed(
                    self._start_problem(None) or msg(
                        "mcp.start_timeout", server=self.config.name,
                        seconds=f"{self.config.start_timeout:g}", path=self.config.source))))
        except Exception as exc:  # anything the transport or the server did: reported, kept
            leaf = _leaf(exc)
            if not ready.done():
                ready.set_exception(ToolsetError(self._failed(self._start_problem(leaf))))
            else:
                ended = msg("mcp.server_exited", server=self.config.name,
                            stderr=self.config.secrets.redact(_describe(leaf)))
        if self.state == "running":
            self.state, self.problem = "stopped", ended
            if ended is not None:
                logger.warning("%s", ended)

    async def _serve_session(self, session: ClientSession) -> None:
        async with anyio.create_task_group() as group:
            group.start_soon(self._relister, session)
            await self._lost.wait()  # the server's output ended: it died
            group.cancel_scope.cancel()

    async def _relister(self, session: ClientSession) -> None:
        while True:
            await self._relist.wait()
            self._relist = asyncio.Event()
            try:
                self.tools = await _list_tools(session)
            except Exception as exc:
                logger.warning("MCP server %s: listing its tools again failed: %s",
                               self.config.name, self.config.secrets.redact(_describe(exc)))
                continue
            logger.info("MCP server %s changed its tools: %s", self.config.name,
                        ", ".join(tool.name for tool in self.tools))
            self._changed()

    async def _connect(self, stack: AsyncExitStack) -> ClientSession:
        if self.config.transport == "stdio":
            from mcp.client.stdio import StdioServerParameters, stdio_client

            params = StdioServerParameters(command=self.config.command or "",
                                           args=list(self.config.args),
                                           env=dict(self.config.env) or None, cwd=self.config.cwd)
            read, write = await stack.enter_async_context(
                stdio_client(params, errlog=self._errlog or sys.stderr))
        else:
            import httpx2
            from mcp.client.streamable_http import streamable_http_client

            client = await stack.enter_async_context(httpx2.AsyncClient(
                headers=dict(self.config.headers),
                timeout=httpx2.Timeout(_HTTP_CONNECT_S, read=self.config.timeout + 5)))
            read, write = await stack.enter_async_context(
                streamable_http_client(self.config.url or "", http_client=client))
        watched = _Watched(read, self._lost)
        return await stack.enter_async_context(ClientSession(
            watched, write, message_handler=self._on_message,
            client_info=types.Implementation(name=CLIENT_NAME, version="1")))

    async def _on_message(self, message: Any) -> None:
        if isinstance(message, types.ToolListChangedNotification):
            self._relist.set()
        elif isinstance(message, Exception):  # a line that is not JSON-RPC
            text = self.config.secrets.redact(_unparsed(message))[:_STDERR_TAIL_CHARS]
            if self.state == "starting":
                self._garbage = text
                if self._scope is not None:
                    self._scope.cancel()  # it will not answer in words we understand
            else:
                logger.warning("MCP server %s sent something that is not MCP: %s",
                               self.config.name, text)

    # ---- calls ------------------------------------------------------------------------------

    async def call(self, tool: str, args: dict[str, Any], name: str, *,
                   repeatable: bool = False) -> types.CallToolResult:
        """Call ``tool`` (the server's name for it; ``name`` is PlanBoard's) with ``args``,
        starting the server first when it is not running; ToolExecutionError on timeout,
        death or a refusal.

        A server killed between two calls may not have been noticed yet when the next one
        is sent, so that call meets a closed connection. A ``repeatable`` call (one that
        only reads, or says repeating it is harmless) is then sent once more to a fresh
        start; any other call fails, since the server may have acted on it.
        """
        try:
            return await self._call_once(tool, args, name)
        except _ServerGone as gone:
            if not repeatable:
                raise ToolExecutionError(gone.problem) from None
            logger.info("MCP server %s was gone; %s is sent again to a fresh start",
                        self.config.name, name)
        try:
            return await self._call_once(tool, args, name)
        except _ServerGone as gone:
            raise ToolExecutionError(gone.problem) from None

    async def _call_once(self, tool: str, args: dict[str, Any], name: str
                         ) -> types.CallToolResult:
        try:
            await self.ensure_started()
        except ToolsetError as exc:
            raise ToolExecutionError(msg("mcp.server_unavailable", tool=name,
                                         server=self.config.name, reason=exc.message or str(exc))
                                     ) from None
        session = self._session
        if session is None:  # it died between its start and this call
            raise _ServerGone(self._died(name))
        timeout = self.config.timeout
        self._call_mark = self._stderr_size()
        try:
            with anyio.fail_after(timeout):
                return await session.call_tool(tool, args, read_timeout_seconds=timeout)
        except TimeoutError:
            raise ToolExecutionError(self._timed_out(name)) from None
        except MCPError as exc:
            if exc.code == types.REQUEST_TIMEOUT:
                raise ToolExecutionError(self._timed_out(name)) from None
            if exc.code == types.CONNECTION_CLOSED or self._lost.is_set():
                self._lost.set()
                raise _ServerGone(self._died(name)) from None
            raise ToolExecutionError(msg(
                "mcp.call_refused", tool=name, server=self.config.name,
                error=self.config.secrets.redact(_describe(exc)))) from None
        except Exception as exc:  # the transport broke under the call (an HTTP server gone)
            self._lost.set()
            raise ToolExecutionError(msg(
                "mcp.server_died", tool=name, server=self.config.name,
                reason=self.config.secrets.redact(_describe(_leaf(exc))))) from None

    def _timed_out(self, name: str) -> Message:
        return msg("mcp.call_timeout", tool=name, server=self.config.name,
                   seconds=f"{self.config.timeout:g}", path=self.config.source)

    def _died(self, name: str) -> Message:
        """The call's server died: what it wrote on stderr during the call, if anything."""
        said = self._stderr_tail(since=self._call_mark)
        ended = "its output ended" if self.config.transport == "stdio" else (
            "its connection closed")
        return msg("mcp.server_died", tool=name, server=self.config.name,
                   reason=said or ended)

    # ---- reasons ----------------------------------------------------------------------------

    def _failed(self, problem: Message) -> Message:
        self.state, self.problem = "failed", problem
        self.failed_at = asyncio.get_running_loop().time()
        return problem

    def _start_problem(self, exc: BaseException | None) -> Message | None:
        if self._garbage is not None:
            reason = f"it wrote something that is not MCP on stdout ({self._garbage})"
        elif exc is None:
            return None
        else:
            reason = self.config.secrets.redact(_describe(exc))
        tail = self._stderr_tail()
        if tail:
            reason = f"{reason}; its stderr ends: {tail}"
        return msg("mcp.start_failed", server=self.config.name, reason=reason,
                   path=self.config.source)

    def _stderr_size(self) -> int:
        if self._errlog is None:
            return 0
        try:
            self._errlog.seek(0, 2)
            return self._errlog.tell()
        except (OSError, ValueError):
            return 0

    def _stderr_tail(self, since: int = 0) -> str:
        """The last lines the server wrote on stderr (after offset ``since``), redacted."""
        if self._errlog is None:
            return ""
        try:
            size = self._stderr_size()
            self._errlog.seek(max(since, size - 4 * _STDERR_TAIL_CHARS))
            lines = [line.strip() for line in self._errlog.read().splitlines() if line.strip()]
        except (OSError, ValueError):
            return ""
        tail = " | ".join(lines[-3:])[-_STDERR_TAIL_CHARS:]
        return self.config.secrets.redact(tail)


class _ServerGone(Exception):
    """Internal: the call met a closed connection; ``problem`` says what it left behind."""

    def __init__(self, problem: Message) -> None:
        super().__init__(str(problem))
        self.problem = problem


class _Watched:
    """The session's read stream, noting in ``lost`` when it ends (the server died)."""

    def __init__(self, stream: Any, lost: asyncio.Event) -> None:
        self._stream = stream
        self._lost = lost

    async def receive(self) -> Any:
        try:
            return await self._stream.receive()
        except (anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError):
            self._lost.set()
            raise

    def __aiter__(self) -> _Watched:
        return self

    async def __anext__(self) -> Any:
        try:
            return await self.receive()
        except (anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError):
            raise StopAsyncIteration from None

    async def aclose(self) -> None:
        await self._stream.aclose()

    async def __aenter__(self) -> _Watched:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    def __getattr__(self, name: str) -> Any:  # last_context, for the dispatcher
        return getattr(self._stream, name)


async def _list_tools(session: ClientSession) -> tuple[types.Tool, ...]:
    tools: list[types.Tool] = []
    cursor: str | None = None
    for _ in range(_LIST_PAGES):
        params = types.PaginatedRequestParams(cursor=cursor) if cursor else None
        page = await session.list_tools(params=params)
        tools.extend(page.tools)
        cursor = page.next_cursor
        if not cursor:
            break
    return tuple(tools)


def _leaf(exc: BaseException) -> BaseException:
    """The first error inside (nested) exception groups: what actually went wrong."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return exc


def _unparsed(exc: Exception) -> str:
    """What a line the server wrote held, when it was not JSON-RPC (pydantic names it)."""
    errors = getattr(exc, "errors", None)
    try:
        found = errors()[0].get("input") if callable(errors) else None
    except Exception:  # not pydantic's error after all
        found = None
    return repr(found) if isinstance(found, str) else _describe(exc)


class _SeenHere(logging.Filter):
    """Drops the SDK's record of a server line that is not JSON-RPC: the connection reports
    it itself, in one line and with the configuration's secrets redacted (the SDK's record
    holds the raw line, and a traceback)."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not str(record.msg).startswith("Failed to parse JSONRPC message")


_SEEN_HERE = _SeenHere()


def quiet_unparsed_lines() -> None:
    """Leave the reporting of servers' non-JSON-RPC lines to the connections (once per
    process; the pool calls it when it is made)."""
    stdio_logger = logging.getLogger("mcp.client.stdio")
    if _SEEN_HERE not in stdio_logger.filters:
        stdio_logger.addFilter(_SEEN_HERE)


def _describe(exc: BaseException) -> str:
    if isinstance(exc, FileNotFoundError):
        return f"the command {exc.filename or ''} was not found".replace("  ", " ")
    text = " ".join(str(exc).split())
    name = type(exc).__name__
    return f"{name}: {text}" if text and name not in ("MCPError",) else (text or name)


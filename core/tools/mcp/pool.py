"""The process's MCP servers: one pool per process, on one background event loop thread.

A server is started once per process (the dashboard, a command, a worker) and shared by
every run and registry of that process: :func:`process_pool` makes the pool on first use,
with a daemon thread running its asyncio loop, and registers its shutdown at exit, which
stops every server (the SDK closes stdin, then terminates and kills: no process outlives
PlanBoard's). Callers in any thread get answers through ``run_coroutine_threadsafe`` with
a bound of their own, so nothing here can hang a step or a page.

A server that failed to start is tried again by a later registry build only once
:data:`RETRY_AFTER_S` seconds have passed (a page rerun must not wait for a hanging server
each time); a call always tries, and fails with the reason. ``generation`` counts changes
(a server started, died, stopped or changed its tools), so a process that keeps a registry
knows when to build it again.
"""

from __future__ import annotations

import asyncio
import atexit
import concurrent.futures
import contextlib
import logging
import os
import threading
from collections.abc import Coroutine, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

import mcp_types as types

from core.base.messages import Message, msg
from core.errors import ToolExecutionError, ToolsetError
from core.tools.mcp.config import ServerConfig
from core.tools.mcp.connection import ServerConnection, State, quiet_unparsed_lines

__all__ = ["RETRY_AFTER_S", "McpPool", "ServerState", "current_pool", "process_pool",
           "shutdown_pool"]

logger = logging.getLogger(__name__)

RETRY_AFTER_S = 30.0
_CLOSE_S = 10.0  # at exit, how long the servers get to stop (together)
_GRACE_S = 20.0  # beyond a server's own timeouts, before a caller stops waiting
T = TypeVar("T")


@dataclass(frozen=True)
class ServerState:
    """What a page or the command line shows of a server."""

    name: str
    transport: str
    state: State
    tools: int
    problem: Message | None = None


class McpPool:
    """The connections of this process, by server name, and the loop they live on."""

    def __init__(self) -> None:
        quiet_unparsed_lines()
        self._loop = asyncio.new_event_loop()
        self._connections: dict[str, ServerConnection] = {}
        self._lock = threading.Lock()
        self._generation = 0
        self._closed = False
        self._thread = threading.Thread(target=self._run, name="planboard-mcp", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        asyncio.set_event_loop(self._loop)
        self._loop.run_forever()

    @property
    def generation(self) -> int:
        """A number that changes whenever a server starts, stops, dies or changes its tools."""
        return self._generation

    def _bump(self) -> None:
        with self._lock:
            self._generation += 1

    # ---- servers ----------------------------------------------------------------------------

    def connect(self, servers: Sequence[ServerConfig]) -> list[ServerConnection]:
        """The connections of ``servers``, each running or failed (with its problem) when
        this returns; they start side by side, each within its own start timeout."""
        connections = [self._connection(config) for config in servers]
        futures = [self._submit(self._ready(connection)) for connection in connections]
        for connection, future in zip(connections, futures, strict=True):
            try:
                future.result(timeout=connection.config.start_timeout + _GRACE_S)
            except concurrent.futures.TimeoutError:
                future.cancel()
                logger.warning("MCP server %s: no start within the bound", connection.config.name)
        return connections

    def _connection(self, config: ServerConfig) -> ServerConnection:
        with self._lock:
            found = self._connections.get(config.name)
            if found is not None and found.config.fingerprint() == config.fingerprint():
                return found
            if found is not None:  # its entry changed: the old one stops, a new one starts
                self._loop.call_soon_threadsafe(found.stop)
            connection = ServerConnection(config, self._bump)
            self._connections[config.name] = connection
            return connection

    async def _ready(self, connection: ServerConnection) -> None:
        if connection.state == "failed" and connection.failed_at is not None and (
                self._loop.time() - connection.failed_at < RETRY_AFTER_S):
            return  # failed a moment ago: its problem stands
        with contextlib.suppress(ToolsetError):  # the connection keeps its problem
            await connection.ensure_started()

    def retry(self, server: str) -> bool:
        """Forget that ``server`` failed to start, so that the next :meth:`connect` (the next
        registry built) starts it at once rather than after :data:`RETRY_AFTER_S`; False
        when it has not failed."""
        with self._lock:
            connection = self._connections.get(server)
            if connection is None or connection.state != "failed":
                return False
            del self._connections[server]
        self._bump()  # the tools' sources changed: the dashboard builds its registry again
        return True

    def states(self) -> list[ServerState]:
        """Every server this process knows, in the order it met them."""
        with self._lock:
            connections = list(self._connections.values())
        return [ServerState(name=c.config.name, transport=c.config.transport, state=c.state,
                            tools=len(c.tools) if c.state == "running" else 0,
                            problem=c.problem) for c in connections]

    def call(self, server: str, tool: str, args: dict[str, Any], name: str, *,
             repeatable: bool = False) -> types.CallToolResult:
        """Call ``tool`` on ``server`` from any thread; ToolExecutionError when it fails,
        times out, or the server is gone (the next call starts it again). A ``repeatable``
        call (read-only or idempotent) that finds its server gone is sent once more."""
        with self._lock:
            connection = self._connections.get(server)
        if connection is None or self._closed:
            raise ToolExecutionError(msg("mcp.server_unavailable", tool=name, server=server,
                                         reason="PlanBoard has no such server running"))
        config = connection.config
        future = self._submit(connection.call(tool, args, name, repeatable=repeatable))
        attempts = 2 if repeatable else 1
        try:
            return future.result(
                timeout=attempts * (config.timeout + config.start_timeout) + _GRACE_S)
        except concurrent.futures.TimeoutError:
            future.cancel()
            raise ToolExecutionError(msg("mcp.call_timeout", tool=name, server=server,
                                         seconds=f"{config.timeout:g}", path=config.source)
                                     ) from None

    def stop(self, server: str) -> None:
        """Stop ``server`` (a call starts it again)."""
        with self._lock:
            connection = self._connections.get(server)
        if connection is not None:
            self._submit(self._stopped(connection)).result(timeout=_CLOSE_S + _GRACE_S)

    @staticmethod
    async def _stopped(connection: ServerConnection) -> None:
        connection.stop()
        await connection.wait_stopped()

    def close(self) -> None:
        """Stop every server and the loop (at exit, or when a test is done with the pool)."""
        if self._closed:
            return
        self._closed = True
        with self._lock:
            connections = list(self._connections.values())
        if connections and self._thread.is_alive():
            future = self._submit(self._stop_all(connections))
            try:
                future.result(timeout=_CLOSE_S)
            except concurrent.futures.TimeoutError:
                logger.warning("MCP servers still stopping after %ss; leaving them", _CLOSE_S)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=2)

    async def _stop_all(self, connections: list[ServerConnection]) -> None:
        await asyncio.gather(*(self._stopped(c) for c in connections), return_exceptions=True)

    def _submit(self, coroutine: Coroutine[Any, Any, T]) -> concurrent.futures.Future[T]:
        return asyncio.run_coroutine_threadsafe(coroutine, self._loop)


_pools: dict[int, McpPool] = {}  # by process id: a forked child makes its own
_pools_lock = threading.Lock()


def process_pool() -> McpPool:
    """This process's pool, made (and its shutdown registered at exit) on first use."""
    with _pools_lock:
        pool = _pools.get(os.getpid())
        if pool is None:
            pool = _pools[os.getpid()] = McpPool()
            atexit.register(pool.close)
        return pool


def current_pool() -> McpPool | None:
    """This process's pool when one was made (None: no MCP server was ever asked for)."""
    return _pools.get(os.getpid())


def shutdown_pool() -> None:
    """Stop this process's servers and forget the pool (the next use makes a new one)."""
    with _pools_lock:
        pool = _pools.pop(os.getpid(), None)
    if pool is not None:
        pool.close()

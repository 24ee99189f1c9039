"""Where the tools come from: each toolset and MCP server, whether it loaded, and why not.

The Tools page lists these; :func:`sources_stamp` tells a process that keeps a registry
(the dashboard) when to build it again: when ``PLANBOARD_TOOLSETS`` or the MCP
configuration file changed, or one of this process's servers started, stopped, died or
announced new tools.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

from core.base.messages import Message
from core.errors import ToolsetError
from core.tools.mcp.config import config_path, load_config
from core.tools.mcp.toolset import mcp_server_of
from core.tools.registry import ToolRegistry
from core.tools.toolsets import TOOLSETS_ENV, toolset_names

__all__ = ["SourceState", "ToolSource", "retry_server", "server_of", "sources_stamp",
           "tool_sources"]

SourceState = Literal["loaded", "running", "starting", "stopped", "failed"]


@dataclass(frozen=True)
class ToolSource:
    """A toolset (``kind="toolset"``) or an MCP server (``kind="mcp"``) and its state."""

    name: str
    kind: Literal["toolset", "mcp"]
    state: SourceState
    tools: int
    problem: Message | None = None
    transport: str = ""  # an MCP server's: stdio or http


def tool_sources(registry: ToolRegistry, environ: Mapping[str, str] | None = None
                 ) -> list[ToolSource]:
    """The toolsets ``PLANBOARD_TOOLSETS`` names, then the servers of the MCP configuration,
    each with the number of tools ``registry`` has from it and what went wrong."""
    env = os.environ if environ is None else environ
    counts: dict[str, int] = {}
    for tool in registry:
        counts[tool.source] = counts.get(tool.source, 0) + 1
    sources = [_toolset(name, counts.get(name, 0), registry.problems)
               for name in toolset_names(env)]
    return sources + _servers(env, counts, registry.problems)


def server_of(registry: ToolRegistry, name: str | None) -> str | None:
    """The MCP server behind tool ``name`` (None for any other tool, or an unknown one)."""
    if not name or name not in registry:
        return None
    return mcp_server_of(registry.get(name))


def retry_server(name: str) -> bool:
    """Start MCP server ``name`` again at the next registry build, now that a person has
    fixed what kept it from starting; False when it has not failed in this process."""
    from core.tools.mcp.pool import current_pool

    pool = current_pool()
    return pool is not None and pool.retry(name)


def sources_stamp(environ: Mapping[str, str] | None = None) -> str:
    """A text that changes whenever the tools a registry would hold may have changed."""
    env = os.environ if environ is None else environ
    parts = [env.get(TOOLSETS_ENV, "")]
    path = config_path(env)
    if path is not None:
        try:
            found = path.stat()
            parts.append(f"{path}:{found.st_mtime_ns}:{found.st_size}")
        except OSError:
            parts.append(f"{path}:missing")
        from core.tools.mcp.pool import current_pool

        pool = current_pool()
        parts.append(str(pool.generation if pool is not None else 0))
    return "|".join(parts)


def _toolset(name: str, tools: int, problems: list[Message]) -> ToolSource:
    problem = next((p for p in problems if p.code.startswith("toolset.")
                    and p.params.get("name") == name), None)
    state: SourceState = "failed" if problem is not None or not tools else "loaded"
    return ToolSource(name=name, kind="toolset", state=state, tools=tools, problem=problem)


def _servers(env: Mapping[str, str], counts: dict[str, int], problems: list[Message]
             ) -> list[ToolSource]:
    path = config_path(env)
    if path is None:
        return []
    try:
        config = load_config(path, env)
    except ToolsetError as exc:  # the file itself: one entry, named after it
        return [ToolSource(name=path.name, kind="mcp", state="failed", tools=0,
                           problem=exc.message)]
    states = {}
    if config.servers:
        from core.tools.mcp.pool import current_pool

        pool = current_pool()
        states = {s.name: s for s in pool.states()} if pool is not None else {}
    found = []
    for server in config.servers:
        known = states.get(server.name)
        problem = next((p for p in problems if p.code.startswith("mcp.")
                        and p.params.get("server") == server.name), None)
        state: SourceState = known.state if known is not None else "stopped"
        if known is not None and known.problem is not None:
            problem = known.problem
        found.append(ToolSource(name=server.name, kind="mcp", state=state,
                                tools=counts.get(server.name, 0), problem=problem,
                                transport=server.transport))
    found += [ToolSource(name=str(p.params.get("server", "")), kind="mcp", state="failed",
                         tools=0, problem=p) for p in config.problems]
    return found

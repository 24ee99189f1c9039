"""MCP servers as a toolset: every tool of every configured server becomes a ``SERVER__TOOL``.

:func:`register_mcp_servers` reads the configuration (:mod:`core.tools.mcp.config`), asks
the process's pool for the servers (started side by side; the ``mcp`` SDK is imported only
when a configuration names one) and adds their tools to the registry, each with:

- its JSON schema as it is, checked with jsonschema before a call (``schema_validator``);
- a side effect unless the server says ``readOnlyHint: true`` or the configuration's
  ``readOnly`` names it; ``sideEffects`` in the configuration overrides both (a server
  that claims to only read is not the last word on a tool that writes);
- ``idempotent`` from ``idempotentHint``;
- ``source``: the server's name.

A server that cannot start, a tool whose name or schema cannot be used, and names in
``readOnly``/``sideEffects`` the server does not offer each become one problem of the
registry; every other tool still loads. The registry is a snapshot: a server's new tool
list (``tools/list_changed``) is in the next registry built (the pool's ``generation``
says when).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from core.base.messages import Message, msg
from core.errors import ToolsetError
from core.tools.mcp.config import CONFIG_ENV, ServerConfig, config_path, load_config
from core.tools.mcp.naming import tool_name
from core.tools.mcp.secrets import Secrets
from core.tools.registry import Tool, ToolRegistry

if TYPE_CHECKING:
    import mcp_types as types

__all__ = ["McpToolCall", "mcp_server_of", "mcp_tool", "register_mcp_servers"]

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class McpToolCall:
    """The function of an MCP tool: calls ``tool`` on ``server`` through the process's pool
    and turns the answer into the step's result (:mod:`core.tools.mcp.content`)."""

    server: str
    tool: str  # the server's own name for it
    name: str  # PlanBoard's, SERVER__TOOL
    secrets: Secrets = field(default_factory=Secrets, repr=False)
    repeatable: bool = False  # read-only or idempotent: safe to send again


    def __call__(self, /, **arguments: Any) -> Any:  # an argument may be called "self"
        from core.tools.mcp.content import call_result
        from core.tools.mcp.pool import process_pool

        answer = process_pool().call(self.server, self.tool, arguments, self.name,
                                     repeatable=self.repeatable)
        return call_result(answer, server=self.server, tool=self.tool, name=self.name,
                           secrets=self.secrets)


def mcp_server_of(tool: Tool) -> str | None:
    """The MCP server ``tool`` calls, or None for a tool of a Python toolset."""
    return tool.function.server if isinstance(tool.function, McpToolCall) else None


def register_mcp_servers(registry: ToolRegistry, environ: Mapping[str, str]) -> None:
    """Add the tools of the servers the MCP configuration names (nothing without one)."""
    path = config_path(environ)
    if path is None:
        return
    try:
        config = load_config(path, environ)
    except ToolsetError as exc:
        _problems(registry, [exc.message or msg("mcp.config_invalid", path=str(path),
                                                problem=str(exc), example="")])
        return
    problems = list(config.problems)
    if config.servers:
        from core.tools.mcp.pool import process_pool

        for connection in process_pool().connect(config.servers):
            server = connection.config
            # a server that died after listing its tools still offers them: the next call
            # starts it again (checking "running" alone races with a death being noticed)
            if not (connection.state == "running"
                    or (connection.state == "stopped" and connection.tools)):
                problems.append(connection.problem or msg(
                    "mcp.start_failed", server=server.name, reason=connection.state,
                    path=server.source))
                continue
            with registry.loading(server.name):
                problems += _add_tools(registry, server, connection.tools)
    _problems(registry, problems)


def _problems(registry: ToolRegistry, problems: list[Message]) -> None:
    for problem in problems:
        logger.warning("%s", problem)
        registry.problems.append(problem)


def _add_tools(registry: ToolRegistry, server: ServerConfig,
               listed: tuple[types.Tool, ...]) -> list[Message]:
    from core.tools.mcp.arguments import schema_problem

    problems = _unknown_names(server, {tool.name for tool in listed})
    taken: set[str] = set()
    for found in listed:
        name = tool_name(server.name, found.name)
        if name is None:
            problems.append(msg("mcp.tool_name_refused", server=server.name, tool=found.name))
            continue
        if name in taken:
            problems.append(msg("mcp.tool_name_clash", server=server.name, tool=found.name,
                                name=name))
            continue
        why = schema_problem(found.input_schema)
        if why is not None:
            problems.append(msg("mcp.tool_schema_refused", server=server.name,
                                tool=found.name, problem=why))
            continue
        taken.add(name)
        registry.add(mcp_tool(server, found, name))
    return problems


def _unknown_names(server: ServerConfig, offered: set[str]) -> list[Message]:
    problems = []
    declared = {"readOnly": server.read_only if isinstance(server.read_only, frozenset)
                else frozenset(), "sideEffects": server.side_effects}
    for key, names in declared.items():
        unknown = sorted(names - offered)
        if unknown:
            problems.append(msg("mcp.unknown_listed_tool", server=server.name, key=key,
                                tools=", ".join(unknown), path=server.source,
                                variable=CONFIG_ENV))
    return problems


def mcp_tool(server: ServerConfig, found: types.Tool, name: str) -> Tool:
    """The Tool ``name`` for the tool ``found`` that ``server`` listed."""
    from core.tools.mcp.arguments import schema_validator

    hints = found.annotations
    read_only = server.says_read_only(found.name) or bool(hints and hints.read_only_hint)
    side_effect = found.name in server.side_effects or not read_only
    schema = dict(found.input_schema)
    return Tool(
        name=name,
        description=(found.description or found.title or found.name).strip(),
        parameters=schema,
        function=McpToolCall(server=server.name, tool=found.name, name=name,
                             secrets=server.secrets,
                             repeatable=not side_effect or bool(hints and hints.idempotent_hint)),
        side_effect=side_effect,
        idempotent=bool(hints and hints.idempotent_hint),
        source=server.name,
        schema_validator=schema_validator(schema),
        # the protocol's outputSchema describes the structured content a call returns,
        # which is the result later steps read
        output_schema=dict(found.output_schema) if found.output_schema else None,
    )

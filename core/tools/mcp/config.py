"""The MCP configuration: an ``mcpServers`` JSON file, as other MCP clients read it.

    {"mcpServers": {
        "git":  {"command": "mcp-server-git", "args": [], "env": {"TOKEN": "${GIT_TOKEN}"},
                 "cwd": "/srv", "timeout": 60, "readOnly": ["git_log"]},
        "docs": {"url": "http://127.0.0.1:8931/mcp",
                 "headers": {"Authorization": "Bearer ${DOCS_TOKEN}"}}}}

A server runs as a process speaking stdio (``command``, ``args``, ``env``, ``cwd``) or is
reached over streamable HTTP (``url``, ``headers``). PlanBoard's own keys, per server:
``timeout`` (seconds a call may take, default 60), ``startTimeout`` (seconds to start and
list the tools, default 30), ``readOnly`` (true, or the tools that only read) and
``sideEffects`` (tools that have side effects whatever the server says). ``disabled: true``
(as other clients write it) leaves a server out. Keys other clients read (``autoApprove``,
``alwaysAllow`` …) are ignored, so a configuration pastes as it is; a key that looks like a
misspelling of PlanBoard's own (``readonly``, ``sideEffect``) is refused, since ignoring it
would silently change what counts as a side effect. ``${VAR}`` in ``env`` and ``headers`` comes
from the environment and is a secret (:mod:`core.tools.mcp.secrets`).

The file is ``PLANBOARD_MCP_CONFIG``, else ``mcp.json`` in ``PLANBOARD_HOME``. A file that
is not such JSON is one problem naming the file and what to fix; a server entry that is
wrong is one problem naming the server, and the other servers still load.
"""

from __future__ import annotations

import difflib
import hashlib
import json
import logging
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from core.base.home import home_path
from core.base.messages import Message, json_error, msg
from core.errors import ToolsetError
from core.tools.mcp.naming import server_name_problem
from core.tools.mcp.secrets import Secrets, expand

__all__ = [
    "CONFIG_ENV",
    "CONFIG_FILE",
    "DEFAULT_START_TIMEOUT_S",
    "DEFAULT_TIMEOUT_S",
    "McpConfig",
    "ServerConfig",
    "config_path",
    "load_config",
]

logger = logging.getLogger(__name__)

CONFIG_ENV = "PLANBOARD_MCP_CONFIG"
CONFIG_FILE = "mcp.json"
DEFAULT_TIMEOUT_S = 60.0
DEFAULT_START_TIMEOUT_S = 30.0
_FORMAT = '{"mcpServers": {"NAME": {"command": "...", "args": ["..."]}}}'
_STDIO_KEYS = {"command", "args", "env", "cwd"}
_HTTP_KEYS = {"url", "headers"}
_OWN_KEYS = {"timeout", "startTimeout", "readOnly", "sideEffects", "disabled", "type"}


@dataclass(frozen=True)
class ServerConfig:
    """One server of the configuration, its ``${VAR}`` values expanded (never shown)."""

    name: str
    source: str  # the file it came from, for messages
    command: str | None = None
    args: tuple[str, ...] = ()
    env: Mapping[str, str] = field(default_factory=dict, repr=False)
    cwd: str | None = None
    url: str | None = None
    headers: Mapping[str, str] = field(default_factory=dict, repr=False)
    timeout: float = DEFAULT_TIMEOUT_S
    start_timeout: float = DEFAULT_START_TIMEOUT_S
    read_only: bool | frozenset[str] = False
    side_effects: frozenset[str] = frozenset()
    secrets: Secrets = field(default_factory=Secrets, repr=False)

    @property
    def transport(self) -> str:
        """``stdio`` (a process PlanBoard starts) or ``http`` (a server at a URL)."""
        return "stdio" if self.command is not None else "http"

    def fingerprint(self) -> str:
        """A digest of everything that decides how the server runs (secrets included, never
        shown): a changed entry is a new server."""
        data = [self.name, self.command, list(self.args), sorted(self.env.items()), self.cwd,
                self.url, sorted(self.headers.items()), self.timeout, self.start_timeout]
        return hashlib.sha256(json.dumps(data).encode("utf-8")).hexdigest()

    def says_read_only(self, tool: str) -> bool:
        """True when the configuration declares ``tool`` (the server's own name) read-only."""
        return self.read_only is True or (
            isinstance(self.read_only, frozenset) and tool in self.read_only)


@dataclass(frozen=True)
class McpConfig:
    """The servers a configuration file describes, and what was wrong with the others."""

    path: Path
    servers: tuple[ServerConfig, ...] = ()
    problems: tuple[Message, ...] = ()


def config_path(environ: Mapping[str, str]) -> Path | None:
    """The configuration file in force: ``PLANBOARD_MCP_CONFIG``, else ``mcp.json`` in the
    home when it exists; None when there is none (no server, and nothing is imported)."""
    configured = (environ.get(CONFIG_ENV) or "").strip()
    if configured:
        return Path(configured).expanduser()
    found = home_path(environ) / CONFIG_FILE
    return found if found.is_file() else None


def load_config(path: Path, environ: Mapping[str, str]) -> McpConfig:
    """Read ``path``; ToolsetError (one line naming the file) when it is not a usable
    ``mcpServers`` file. A wrong server entry is a problem of the result, not an error."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ToolsetError(msg("mcp.config_unreadable", path=str(path),
                               error=exc.strerror or str(exc), variable=CONFIG_ENV)) from None
    except UnicodeDecodeError:
        raise _invalid(path, "it is not UTF-8 text; save it as UTF-8") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise _invalid(path, msg("mcp.config_not_json", error=json_error(exc))) from None
    if not isinstance(data, dict) or not isinstance(data.get("mcpServers"), dict):
        raise _invalid(path, 'it needs an object "mcpServers" holding one object per server')
    servers: list[ServerConfig] = []
    problems: list[Message] = []
    for name, entry in data["mcpServers"].items():
        try:
            server = _server(str(name), entry, path, environ)
        except _EntryError as exc:
            problems.append(msg("mcp.server_invalid", server=str(name), path=str(path),
                                problem=str(exc)))
            continue
        if server is not None:
            servers.append(server)
    return McpConfig(path=path, servers=tuple(servers), problems=tuple(problems))


def _invalid(path: Path, problem: str | Message) -> ToolsetError:
    return ToolsetError(msg("mcp.config_invalid", path=str(path), problem=problem,
                            example=_FORMAT))


class _EntryError(Exception):
    """Internal: what is wrong with one server entry (worded for mcp.server_invalid)."""


def _server(name: str, entry: Any, path: Path, environ: Mapping[str, str]
            ) -> ServerConfig | None:
    if (problem := server_name_problem(name)) is not None:
        raise _EntryError(problem)
    if not isinstance(entry, dict):
        raise _EntryError("its entry must be an object")
    if entry.get("disabled") is True:
        return None
    _check_other_keys(name, entry)
    has_command, has_url = "command" in entry, "url" in entry
    if has_command == has_url:
        raise _EntryError('it needs either "command" (a server PlanBoard starts) or "url" '
                          "(a streamable HTTP server), not both or neither")
    kind = entry.get("type")
    if kind not in (None, "stdio", "http", "streamable-http", "streamableHttp"):
        raise _EntryError(f'"type": {json.dumps(kind)} is not supported; PlanBoard speaks stdio '
                          "and streamable HTTP")
    common = {
        "name": name, "source": str(path),
        "timeout": _seconds(entry, "timeout", DEFAULT_TIMEOUT_S),
        "start_timeout": _seconds(entry, "startTimeout", DEFAULT_START_TIMEOUT_S),
        "read_only": _read_only(entry.get("readOnly", False)),
        "side_effects": frozenset(_names(entry.get("sideEffects", []), "sideEffects")),
    }
    if has_command:
        return _stdio(entry, path, environ, common)
    return _http(entry, environ, common)


def _check_other_keys(name: str, entry: dict[str, Any]) -> None:
    """Refuse a key that looks like a misspelt key of ours; leave other clients' keys be."""
    known = _STDIO_KEYS | _HTTP_KEYS | _OWN_KEYS
    by_folded = {key.casefold(): key for key in known}
    others = sorted(set(entry) - known)
    for key in others:
        close = by_folded.get(key.casefold()) or next(
            iter(difflib.get_close_matches(key, sorted(known), n=1, cutoff=0.8)), None)
        if close is not None:
            raise _EntryError(f"unknown key {key}: did you mean {close}? (a server takes "
                              "command, args, env, cwd or url, headers, and timeout, "
                              "startTimeout, readOnly, sideEffects)")
    if others:
        logger.info("MCP server %s: keys for other clients ignored: %s", name, ", ".join(others))


def _stdio(entry: dict[str, Any], path: Path, environ: Mapping[str, str],
           common: dict[str, Any]) -> ServerConfig:
    extra = sorted(set(entry) & _HTTP_KEYS)
    if extra:
        raise _EntryError(f"{', '.join(extra)} belong(s) to a server at a URL, not to a command")
    command = entry["command"]
    if not isinstance(command, str) or not command.strip():
        raise _EntryError('"command" must be the program to run, as text')
    args = entry.get("args", [])
    if not isinstance(args, list) or not all(isinstance(a, str) for a in args):
        raise _EntryError('"args" must be a list of strings')
    env, secrets = _expanded(entry.get("env", {}), "env", environ)
    cwd = entry.get("cwd")
    if cwd is not None and (not isinstance(cwd, str) or not cwd.strip()):
        raise _EntryError('"cwd" must be a directory, as text')
    if cwd is not None:
        cwd = str((path.parent / Path(cwd).expanduser()).resolve())
    return ServerConfig(command=command, args=tuple(args), env=env, cwd=cwd, secrets=secrets,
                        **common)


def _http(entry: dict[str, Any], environ: Mapping[str, str],
          common: dict[str, Any]) -> ServerConfig:
    extra = sorted(set(entry) & _STDIO_KEYS)
    if extra:
        raise _EntryError(f"{', '.join(extra)} belong(s) to a server PlanBoard starts, not to "
                          "one at a URL")
    url = entry["url"]
    if not isinstance(url, str) or not url.startswith(("http://", "https://")):
        raise _EntryError('"url" must be an http:// or https:// address')
    headers, secrets = _expanded(entry.get("headers", {}), "headers", environ)
    return ServerConfig(url=url, headers=headers, secrets=secrets, **common)


def _expanded(values: Any, key: str, environ: Mapping[str, str]
              ) -> tuple[dict[str, str], Secrets]:
    if not isinstance(values, dict) or not all(
            isinstance(k, str) and isinstance(v, str) for k, v in values.items()):
        raise _EntryError(f'"{key}" must be an object of strings')
    expanded: dict[str, str] = {}
    secrets = Secrets()
    for name, raw in values.items():
        value, used, missing = expand(raw, environ)
        if missing:
            raise _EntryError(f"{key}.{name} uses ${{{missing[0]}}}, which is not set in the "
                              "environment; set it (or write the value itself)")
        expanded[name] = value
        secrets = secrets.merged(used)
    return expanded, secrets


def _seconds(entry: dict[str, Any], key: str, default: float) -> float:
    value = entry.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int | float) or not (
            math.isfinite(value) and value > 0):
        raise _EntryError(f'"{key}" must be a positive number of seconds, such as {default:g}')
    return float(value)


def _read_only(value: Any) -> bool | frozenset[str]:
    if isinstance(value, bool):
        return value
    return frozenset(_names(value, "readOnly"))


def _names(value: Any, key: str) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise _EntryError(f'"{key}" must be a list of the server\'s tool names'
                          + (" (or true)" if key == "readOnly" else ""))
    return value

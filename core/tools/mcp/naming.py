"""Names of MCP tools in PlanBoard: ``SERVER__TOOL``, valid function names for every provider.

Two servers may both offer a ``search``; prefixing the server keeps them apart. A model
provider takes function names matching ``^[a-zA-Z0-9_-]{1,64}$`` (OpenAI's rule, the
strictest of the common ones), so a server name must be made of those characters (and may
not hold the separator), a tool name's other characters become ``_``, and a name that
would still be longer than 64 characters is refused: cutting it could make two tools one.
"""

from __future__ import annotations

import re

__all__ = ["MAX_NAME_CHARS", "MAX_SERVER_CHARS", "SEPARATOR", "server_name_problem", "tool_name"]

SEPARATOR = "__"
MAX_NAME_CHARS = 64
_ALLOWED = re.compile(r"^[A-Za-z0-9_-]+$")
_OTHER = re.compile(r"[^A-Za-z0-9_-]")
MAX_SERVER_CHARS = 32


def server_name_problem(name: str) -> str | None:
    """Why ``name`` cannot name a server (None when it can), in words for the config error."""
    if not name or not _ALLOWED.match(name):
        return ("a server name may hold only letters, digits, '_' and '-' (it starts every "
                "tool name, and model providers accept nothing else)")
    if SEPARATOR in name:
        return f"a server name may not contain {SEPARATOR!r} (it separates server and tool)"
    if len(name) > MAX_SERVER_CHARS:
        return f"a server name may be at most {MAX_SERVER_CHARS} characters long"
    return None


def tool_name(server: str, tool: str) -> str | None:
    """``SERVER__TOOL`` with the tool's other characters as ``_``; None when the result would
    exceed 64 characters (or the tool has no name)."""
    if not tool:
        return None
    name = f"{server}{SEPARATOR}{_OTHER.sub('_', tool)}"
    return name if len(name) <= MAX_NAME_CHARS else None

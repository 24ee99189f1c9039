"""An MCP server whose tools misbehave on purpose: hang, die, fail, answer 5 MB, change the
tool list, echo a secret, and count a side effect in a file (for the crash test).

Run as ``python -m tests.mcp_servers.troubles``; ``COUNTER_FILE`` (environment) is where
``bump`` writes, ``API_TOKEN`` what ``whoami`` reveals (it also writes it to stderr). With
``NEEDS_FILE`` set, it will not start until that file exists (a server a person fixes).
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import anyio
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import ToolAnnotations

READ_ONLY = ToolAnnotations(read_only_hint=True, idempotent_hint=True)
WRITES = ToolAnnotations(read_only_hint=False, idempotent_hint=False)

server = MCPServer("troubles")


@server.tool(annotations=READ_ONLY)
def pid() -> dict:
    """The server's process id."""
    return {"pid": os.getpid()}


@server.tool(annotations=READ_ONLY)
async def hang(seconds: float = 3600) -> str:
    """Answer after a long time (never, for a test)."""
    await anyio.sleep(seconds)
    return "woke up"


@server.tool(annotations=READ_ONLY, structured_output=False)
def die() -> str:
    """Exit the server's process in the middle of the call."""
    os._exit(3)


@server.tool(annotations=READ_ONLY, structured_output=False)
def fail(reason: str = "the disk is full") -> str:
    """Fail with an error the client sees as isError."""
    raise ToolError(reason)


@server.tool(annotations=READ_ONLY, structured_output=False)
def huge(megabytes: int = 5) -> str:
    """Answer with a text of ``megabytes`` MB."""
    return "x" * (megabytes * 1024 * 1024)


@server.tool(annotations=READ_ONLY, structured_output=False)
def order() -> str:
    """A JSON object as text (fields to read)."""
    return '{"order_id": "A-1", "status": "shipped"}'


@server.tool(annotations=READ_ONLY, structured_output=False)
def whoami() -> str:
    """Reveal the API token the server was given (and write it to stderr)."""
    token = os.environ.get("API_TOKEN", "")
    print(f"token in use: {token}", file=sys.stderr, flush=True)
    return f"I am using token {token}"


@server.tool(annotations=READ_ONLY, structured_output=False)
def mirror(text: str) -> str:
    """Answer with ``text``."""
    return text


@server.tool(annotations=WRITES, structured_output=False)
def bump(pause: float = 0.0) -> str:
    """Add a line to COUNTER_FILE (a side effect, not idempotent), then wait ``pause`` s."""
    counter = Path(os.environ["COUNTER_FILE"])
    with counter.open("a", encoding="utf-8") as handle:
        handle.write("bumped\n")
    time.sleep(pause)
    return f"bumped {len(counter.read_text(encoding='utf-8').splitlines())}"


@server.tool(annotations=READ_ONLY)
async def grow(ctx: Context) -> str:
    """Add a tool called ``extra`` and announce the new tool list."""

    def extra() -> str:
        """A tool that did not exist at the start."""
        return "extra!"

    server.add_tool(extra, name="extra", annotations=READ_ONLY, structured_output=False)
    await ctx.session.send_tool_list_changed()
    return "grown"


if __name__ == "__main__":
    needed = os.environ.get("NEEDS_FILE")
    if needed and not Path(needed).exists():
        print(f"not configured yet: {needed} is missing", file=sys.stderr, flush=True)
        sys.exit(2)
    server.run()

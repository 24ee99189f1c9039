"""An MCP server over streamable HTTP on 127.0.0.1 (``python -m tests.mcp_servers.over_http
PORT``): ``whoami`` answers with the Authorization header the client sent."""

from __future__ import annotations

import sys

from mcp.server.mcpserver import Context, MCPServer
from mcp.types import ToolAnnotations

server = MCPServer("over-http")


@server.tool(annotations=ToolAnnotations(read_only_hint=True), structured_output=False)
def whoami(ctx: Context) -> str:
    """The Authorization header of the request."""
    headers = ctx.headers or {}
    return f"authorized as {headers.get('authorization', 'nobody')}"


if __name__ == "__main__":
    server.run("streamable-http", host="127.0.0.1", port=int(sys.argv[1]))

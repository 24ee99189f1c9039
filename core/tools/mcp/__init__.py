"""MCP servers as toolsets: configuration, names, the process's server pool, and their tools.

Importing this package imports no MCP code: the ``mcp`` SDK is loaded only when a
configuration names a server (:mod:`core.tools.mcp.toolset`).
"""

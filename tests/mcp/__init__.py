"""MCP servers as toolsets: the configuration, secrets, and real servers over stdio and HTTP."""

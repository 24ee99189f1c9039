"""Small MCP servers of the tests' own (stdio, built with the mcp SDK) for the bad paths."""

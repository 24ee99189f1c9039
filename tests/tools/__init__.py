"""The tool registry, toolsets and packs, tool results and tools tried by hand."""

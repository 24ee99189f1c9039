"""Toolsets of the tests' own, loaded by name as a person's modules would be."""

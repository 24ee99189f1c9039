"""Talking to OpenAI-compatible models: client, providers, settings, forced tool calls."""

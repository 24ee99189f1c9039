"""The chat client against the fake OpenAI-compatible server: settings, providers, faults,
tool calls."""

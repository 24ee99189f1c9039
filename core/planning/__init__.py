"""Deciding what to do: planner, router, clarifying questions, follow-ups, checkpoints."""

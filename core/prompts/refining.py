"""Prompt templates of refining a plan with a person's sentence."""

from __future__ import annotations

from string import Template

__all__ = ["REFINE_RULES", "REFINE_USER_TEMPLATE"]

REFINE_RULES = Template("""\
Refining rules:
- A person reviewed the plan below and tells you what to change. Change only what the
  sentence asks for; every other step stays exactly as it is, with its id, tool, arguments
  and condition (a person may have edited them by hand: keep their values).
- Keep the id of every step you keep. Number new steps from $next_id on; never reuse an id.
- Answer with the whole revised plan in the plan JSON format: every step, kept or new.""")

REFINE_USER_TEMPLATE = Template("""\
The current plan (JSON):
$plan

What to change:
$sentence

Send the revised plan.""")

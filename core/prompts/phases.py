"""Prompt templates of planning in two levels: the phase plan, a phase's steps, and changes.

The phase planner writes only phases (one small call); a phase is expanded into steps when
it is reached, with the results of the phases before it in view; a failed step is replanned
inside its phase, and only a phase whose goal cannot be reached changes the phase plan.
"""

from __future__ import annotations

from collections.abc import Mapping
from string import Template
from typing import Any

from core.base.text import clip

__all__ = [
    "EXPAND_RULES",
    "EXPAND_USER",
    "PHASES_SYSTEM",
    "PHASES_USER",
    "PHASE_REPLAN_RULES",
    "PHASE_REPLAN_USER",
    "REVISE_PHASES_USER",
    "expand_rules",
    "expand_user_prompt",
    "phase_replan_rules",
    "phase_replan_user_prompt",
    "phases_system_prompt",
    "phases_user_prompt",
    "results_lines",
    "revise_phases_user_prompt",
]

_RESULT_CHARS = 600
_RESULTS_CHARS = 6000  # the results of earlier phases, together, in an expansion prompt

PHASES_SYSTEM = Template("""\
You plan long tasks in two levels. First write only the phases of the work: the stages a
person would approve before any detail exists (for example collect → analyse → report).
Each phase is expanded into concrete steps later, when it is reached, with the results of
the phases before it in view; do not write steps now.
Tools the steps will be able to use: $tools
Rules:
1. 3 to 7 phases for the request's stages; one phase per stage or deliverable.
2. A phase has an id (p1, p2, ...), a short title, a goal (what it achieves), the phases
   it comes after ("depends_on": phases whose results it needs; independent phases may run
   side by side) and a "done_when" that says how to know it reached its goal.
3. The last phase writes the answer for the user from the results of the phases before it.
4. Write titles, goals and done_when in $language, the language of the request.
Answer with one JSON object and nothing else:
{"goal": "the request in one sentence", "definition_of_done": "...", "phases": [
 {"id": "p1", "title": "...", "goal": "...", "depends_on": [], "done_when": "..."},
 {"id": "p2", "title": "...", "goal": "...", "depends_on": ["p1"], "done_when": "..."}]}""")

PHASES_USER = Template("Plan the phases of this request:\n\n$request")

EXPAND_RULES = Template("""\
Phase rules:
- You plan only the steps of phase $phase ("$title"): its goal is "$goal". Every step has
  "phase": "$phase".
- A step may use the results of the earlier steps listed below ($usable) through
  depends_on and "{{sN.field}}"; never depend on steps of other phases.
- Number the new steps from $next_id on; never reuse an earlier id.
- $ending
- Answer in the plan JSON format, with only this phase's steps in "steps".""")

_LAST_PHASE = ("This is the last phase: end with a step with \"tool\": null that writes the "
               "answer for the user from the results it depends on.")
_MIDDLE_PHASE = ("Later phases come after this one: do not write the final answer yet; end "
                 "when the phase's goal is reached.")

EXPAND_USER = Template("""\
Request: $request

Phases of the plan:
$phases

Results of the phases before $phase:
$results

Plan the steps of phase $phase ($title). Number them from $next_id on.""")

PHASE_REPLAN_RULES = Template("""\
Replanning rules (a plan in phases):
- Only phase $phase ("$title") changes: its goal stays "$goal". Its completed steps are
  kept with their results; plan its remaining steps, each with "phase": "$phase". Steps of
  other phases are not yours to change.
- Fix the cause of the failure first; when it cannot be fixed, take another route.
- Number the new steps from $next_id on; never reuse an earlier id.
- $ending
- When the phase's goal cannot be reached at all, answer instead
  {"phase_unreachable": true, "reason": "why, in one sentence"}.
- Otherwise answer in the plan JSON format, with only the new steps in "steps".""")

PHASE_REPLAN_USER = Template("""\
Goal: $request

Progress of phase $phase ($title):
$summary

Results of its completed steps and of the steps it may use:
$results

What went wrong:
$failure

Plan the remaining steps of phase $phase. Number them from $next_id on.""")

REVISE_PHASES_USER = Template("""\
Request: $request

The phases so far, with their status:
$phases

Phase $phase cannot reach its goal: $reason

Results so far:
$results

Write the phase plan again. Keep every completed phase exactly as it is (same id, title and
goal). Replace $phase and the phases not started yet by phases that can reach the goal by
another route; give new phases new ids (from $next_id on). Answer in the same JSON format.""")


def phases_system_prompt(tools: list[str], language_name: str) -> str:
    """The phase planner's system prompt: the rules and format of a phase plan."""
    return PHASES_SYSTEM.substitute(tools=", ".join(tools) or "(none)", language=language_name)


def phases_user_prompt(request: str) -> str:
    """The phase planner's user message."""
    return PHASES_USER.substitute(request=request.strip())


def expand_rules(*, phase: str, title: str, goal: str, usable: list[str], next_id: str,
                 last: bool) -> str:
    """The rules block an expansion adds to the planner's system prompt."""
    return EXPAND_RULES.substitute(phase=phase, title=title, goal=goal or title,
                                   usable=", ".join(usable) or "none", next_id=next_id,
                                   ending=_LAST_PHASE if last else _MIDDLE_PHASE)


def expand_user_prompt(*, request: str, phases: str, phase: str, title: str, results: str,
                       next_id: str) -> str:
    """The user message of an expansion: the request, the phases, earlier results."""
    return EXPAND_USER.substitute(request=request.strip(), phases=phases, phase=phase,
                                  title=title, results=results or "(none yet)",
                                  next_id=next_id)


def phase_replan_rules(*, phase: str, title: str, goal: str, next_id: str, last: bool) -> str:
    """The rules block of a replan inside one phase."""
    return PHASE_REPLAN_RULES.substitute(phase=phase, title=title, goal=goal or title,
                                         next_id=next_id,
                                         ending=_LAST_PHASE if last else _MIDDLE_PHASE)


def phase_replan_user_prompt(*, request: str, phase: str, title: str, summary: str,
                             results: str, failure: str, next_id: str) -> str:
    """The user message of a replan inside one phase."""
    return PHASE_REPLAN_USER.substitute(request=request.strip(), phase=phase, title=title,
                                        summary=summary, results=results or "(none)",
                                        failure=failure.strip() or "(no details)",
                                        next_id=next_id)


def revise_phases_user_prompt(*, request: str, phases: str, phase: str, reason: str,
                              results: str, next_id: str) -> str:
    """The user message that asks for a new phase plan when a phase cannot be done."""
    return REVISE_PHASES_USER.substitute(request=request.strip(), phases=phases, phase=phase,
                                         reason=reason.strip() or "(no reason given)",
                                         results=results or "(none)", next_id=next_id)


def results_lines(results: Mapping[str, Any]) -> str:
    """Results by step id, each folded, all of them within a bound."""
    lines = [f"- {step_id}: {clip(value, _RESULT_CHARS)}" for step_id, value in results.items()]
    return clip("\n".join(lines), _RESULTS_CHARS) if lines else ""

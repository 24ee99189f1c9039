"""Prompts of adaptive planning (router, checkpoint, success check, reflection, follow-up,
clarifying questions, knowledge and direct answers) and the reader of their JSON replies."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator
from string import Template
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from core.base.language import Language
from core.base.text import clip, strip_think
from core.errors import PlanParseError

__all__ = [
    "CHECKPOINT_SYSTEM",
    "CHECKPOINT_USER",
    "CLARIFY_INSTRUCTION",
    "DIRECT_SYSTEM",
    "FOLLOWUP_CORRECTIVE",
    "FOLLOWUP_RULES",
    "FOLLOWUP_USER",
    "KNOWLEDGE_SYSTEM",
    "LANGUAGE_NAMES",
    "REFLECTION_SYSTEM",
    "REFLECTION_USER",
    "REVIEW_SYSTEM",
    "REVIEW_USER",
    "ROUTER_SYSTEM",
    "SUCCESS_SYSTEM",
    "decision_json",
    "fold",
    "language_name",
    "parse_reply",
]

LANGUAGE_NAMES: dict[str, str] = {"en": "English", "zh": "Chinese (简体中文)"}

ROUTER_SYSTEM = Template("""\
You route a user's request to one of four ways of working:
- "knowledge": a question answered from the knowledge base (policies, product guides, how-to,
  "what is ..."), with no order, service or other id to look up and nothing to change.
- "direct": a simple task done with one to three read-only tool calls, for example looking
  up one order by its id or checking one service; no condition, nothing to change.
- "plan": anything larger: several sub-tasks ("另外", "also"), a condition ("if it arrived,
  refund it"), an action with a side effect (a refund), or a long analysis.
- "hierarchical": a long task in three or more explicit stages ("first ..., then ...,
  finally ...", "先……再……最后……", a numbered list) or with several deliverables: planned as
  phases first, each phase detailed into steps when it is reached.
Tools available: $tools
When unsure, choose "plan".
Answer with one JSON object and nothing else:
{"mode": "knowledge" | "direct" | "plan" | "hierarchical", "reason": "one short sentence in \
$language"}""")

CHECKPOINT_SYSTEM = Template("""\
You are the checkpoint of a plan that is being executed. A step has just finished. Decide
whether the remaining (pending) steps still make sense given its result:
- needs_replan: true when a pending step rests on a premise the result shows to be false
  (for example a refund for an order that already has a refund in progress), when a
  needed step is missing, or when a pending step has become pointless.
- can_finish_early: true when the goal is already met and the pending steps (except the
  final summary) can be dropped.
- updated_pending_steps: when needs_replan is true, the complete new list of pending steps
  (keep a step's id to keep it, give new steps new ids from $next_id on, leave out steps
  to drop, end with the summary step); null otherwise.
Completed steps never change. Write the reason in $language.
Answer with one JSON object and nothing else:
{"needs_replan": false, "can_finish_early": false, "reason": "...",
 "updated_pending_steps": null}
A step in updated_pending_steps looks like:
{"id": "s4", "description": "...", "tool": "tool_name or null", "args": {},
 "depends_on": ["s1"], "success_criteria": "...", "condition": "s1.status == 'x'"}""")

CHECKPOINT_USER = Template("""\
Goal: $goal

Completed steps and their results:
$completed

$just_finished

Pending steps:
$pending""")

SUCCESS_SYSTEM = Template("""\
You check whether one step of a plan met its success criteria, judging only from its
result below. A result that asks for information the step should have gathered,
apologises that it cannot do the step, or only restates the question never meets them.
Write the reason in $language.
Success criteria: $criteria
Step: $description
Result:
$result
Answer with one JSON object and nothing else: {"met": true | false, "reason": "..."}""")

REFLECTION_SYSTEM = Template("""\
You are the reflector. An agent's run failed after all its replans. Find the root cause in
the trajectory below and name at least one concrete decision that should change next time
(which tool, which argument, which check to add), with the evidence from the trajectory.
"Be more careful" or "bad luck" is not a lesson. Write every field in $language.
Answer with one JSON object and nothing else:
{"root_cause": "the root cause in one sentence",
 "lesson": "what to do or not do next time (actionable, names the tool)",
 "should_retry": true | false,
 "retry_hint": "the concrete change of strategy for the next attempt"}""")

REFLECTION_USER = Template("""\
Goal: $goal
Plan versions tried: $versions
Failure: $failure

Trajectory of the last version:
$trajectory""")

REVIEW_SYSTEM = Template("""\
You review a run that succeeded only after its plan was changed. From the trajectory of
every version below, state what failed first and which change made it work, as a lesson
the planner can use next time (names the tools). Write every field in $language.
Answer with one JSON object and nothing else:
{"root_cause": "what went wrong in the first version",
 "lesson": "the adjustment that worked, as advice for next time",
 "should_retry": false, "retry_hint": ""}""")

FOLLOWUP_RULES = Template("""\
Follow-up rules:
- The plan below has already run. Its steps and results are kept: never repeat them.
- Plan only what the follow-up request adds. New steps may use earlier results through
  depends_on and "{{sN.field}}".
- Number the new steps from $next_id on; never reuse an earlier id.
- End with a new synthesis step ("tool": null) that answers the follow-up.
- Answer in the plan JSON format, with only the new steps in "steps".""")

FOLLOWUP_USER = Template("""\
The plan so far:
$summary

Results of its completed steps:
$results

Follow-up request:
$follow_up

Plan the new steps. Number them from $next_id on.""")

CLARIFY_INSTRUCTION = """\
If the request lacks something a step cannot do without (an order number, a budget the
request says matters) and it cannot be looked up with the tools, do not guess: answer
{"questions": ["...", "..."]} (at most 3 short questions in the request's language)
instead of a plan. Otherwise answer with the plan."""

FOLLOWUP_CORRECTIVE = Template("""\
The steps could not be used:
$problems
Send the corrected JSON with only the new steps, and nothing else.""")

REVIEW_USER = Template("""\
Goal: $goal

$history""")

KNOWLEDGE_SYSTEM = Template("""\
You answer the user's question from the knowledge-base documents below, and only from them.
Quote the facts that matter (numbers, days, conditions), name the document you used, and
say plainly when the documents do not cover the question. Answer in $language.

Documents:
$documents""")

DIRECT_SYSTEM = Template("""\
You help the user with a simple task. Use at most three tool calls, only of the read-only
tools offered, and only when the answer needs them; then reply with the answer as plain
text that states the facts from the tool results which answer the request (for an order:
its status, and the dates and places the results give; for a history of events, such as a
parcel's scans: where and how it stands at the latest one). Do not invent ids or values the
request and the tool results do not give. Answer in $language.""")

_FENCE = re.compile(r"```[\w-]*[ \t]*\n?(.*?)```", re.S)
_TRAILING_COMMA = re.compile(r",(\s*[}\]])")
_MAX_STARTS = 200
_FOLD_CHARS = 1200

Model = TypeVar("Model", bound=BaseModel)


def language_name(language: Language | str) -> str:
    """The name of a language as the prompts write it."""
    return LANGUAGE_NAMES.get(language, "English")


def fold(value: Any, limit: int = _FOLD_CHARS) -> str:
    """A result as compact text, cut to ``limit`` characters."""
    return clip(value, limit)


def _objects(text: str) -> Iterator[dict[str, Any]]:
    chunks = [m.group(1) for m in _FENCE.finditer(text)] + [text]
    chunks += [_TRAILING_COMMA.sub(r"\1", c) for c in chunks]
    decoder = json.JSONDecoder()
    for chunk in chunks:
        position = starts = 0
        while starts < _MAX_STARTS:
            start = chunk.find("{", position)
            if start < 0:
                break
            starts += 1
            try:
                value, end = decoder.raw_decode(chunk, start)
            except json.JSONDecodeError:
                position = start + 1
                continue
            if isinstance(value, dict):
                yield value
            position = end


def decision_json(text: str, keys: Iterable[str], *, what: str) -> dict[str, Any]:
    """The first JSON object in ``text`` holding one of ``keys``.

    Survives ``<think>`` blocks, code fences, prose around the JSON and trailing commas;
    raises PlanParseError (keeping ``raw``) when there is none.
    """
    wanted = set(keys)
    cleaned = strip_think(text)
    for value in _objects(cleaned):
        if wanted & set(value):
            return value
    expected = ", ".join(f'"{k}"' for k in sorted(wanted))
    raise PlanParseError(
        f"the {what} reply holds no JSON object with {expected}; answer with that JSON only",
        raw=text,
    )


def parse_reply(text: str, model: type[Model], *, what: str) -> Model:
    """Parse a model's JSON reply into ``model``; PlanParseError (keeps ``raw``) otherwise."""
    data = decision_json(text, model.model_fields, what=what)
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(map(str, e['loc'])) or 'reply'}: {e['msg']}" for e in exc.errors()
        )
        raise PlanParseError(
            f"the {what} reply does not fit its format ({problems}); answer with that JSON only",
            raw=text,
        ) from None

"""Prompt templates of the planner and the replanner, and the small functions that fill them."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from string import Template
from typing import Any

from core.base.language import Language, written_in
from core.base.messages import msg, render
from core.base.text import clip
from core.llm.providers import PromptStyle

__all__ = [
    "COMPACT_FORMAT",
    "COMPACT_INTRO",
    "COMPACT_RULES",
    "COMPACT_SYSTEM_TEMPLATE",
    "CORRECTIVE_TEMPLATE",
    "CORRECTIVE_TOOLS_TEMPLATE",
    "EMPTY_ARGUMENT_TEMPLATE",
    "EVERY_TOOL_TEMPLATE",
    "LANGUAGE_NAMES",
    "LESSONS_TEMPLATE",
    "PERIOD_TEMPLATE",
    "PLANNER_INTRO",
    "PLANNER_SYSTEM_TEMPLATE",
    "PLANNER_USER_TEMPLATE",
    "PLANNING_PRINCIPLES",
    "PLAN_FORMAT",
    "REPLANNER_INTRO",
    "REPLANNER_RULES",
    "REPLANNER_USER_TEMPLATE",
    "SHORTLIST_HEADING",
    "SHORTLIST_RULE",
    "TODAY_TEMPLATE",
    "TOOLS_HEADING",
    "UNNEEDED_FAILURES_TEMPLATE",
    "corrective_prompt",
    "describe_tools",
    "describe_tools_compact",
    "fallback_descriptions",
    "lessons_block",
    "planner_system_prompt",
    "planner_user_prompt",
    "replanner_system_prompt",
    "replanner_user_prompt",
    "synthesis_description",
    "tool_example",
    "tools_block",
]

LANGUAGE_NAMES: dict[str, str] = {"en": "English", "zh": "Chinese (简体中文)"}

PLANNER_INTRO = (
    "You are a task planner. Break the user's request into a short plan of steps that an "
    "executor will carry out one by one. You do not call tools yourself: you only decide "
    "which step uses which tool."
)

REPLANNER_INTRO = (
    "You are a replanner. A plan ran into a problem while it was being executed. Keep what "
    "has been done and plan the remaining steps again. You do not call tools yourself."
)

PLANNING_PRINCIPLES = """\
Planning principles:
1. One action per step: one tool call or one piece of reasoning.
2. Declare dependencies: "depends_on" lists every earlier step whose result the step needs.
   Steps that do not need each other stay independent, so that they can run in parallel.
3. Split a conditional request ("if X, then do Y") into a check step and an act step. The
   act step depends on the check step and has a "condition", a small expression over earlier
   results such as "s2.status == 'delivered'" (allowed: ==, !=, <, >, <=, >=, in, and, or,
   not, literals and sN.field). When the condition is false the step is skipped.
4. Use 3 to 10 steps. Describe each step at the level of its goal (what it achieves), not
   implementation detail; never split one tool call into several steps.
5. Use only the tools listed below, spelled exactly; "tool": null means a reasoning step.
   Give "args" when the values are known from the request. To use a value from an earlier
   step write "{{sN.field}}" (or "{{sN}}" for its whole result) and list sN in depends_on.
   Leave "args" out when the values can only be worked out while the plan runs.
6. A tool marked [side effect] changes something in the world (a refund, an order, a
   message): use it only when the request asks for that action, and put a check step and
   a condition in front of it when the request is conditional.
7. The last step is a synthesis step with "tool": null that depends on the steps whose
   results it needs and writes the final answer for the user.
8. Step ids are s1, s2, s3 ... in order; a step depends only on steps before it.
9. Write every description, the definition_of_done and the constraints in $language, the
   language of the request.
10. Output only the JSON object: no prose, no code fences."""

PLAN_FORMAT = """\
Output format (JSON):
{
  "goal": "the user's request in one sentence",
  "definition_of_done": "how we know the whole task is finished",
  "constraints": ["budget <= 2000"],
  "steps": [
    {"id": "s1", "description": "Look up the record the request names",
     "tool": "<a lookup tool>", "args": {"<its parameter>": "<the value from the request>"},
     "depends_on": [], "success_criteria": "the record's status is known"},
    {"id": "s2", "description": "If the record allows it, take the action the request asks for",
     "tool": "<an action tool>", "args": {"<its parameter>": "{{s1.<a field>}}"},
     "depends_on": ["s1"], "condition": "s1.status == '<the status it needs>'"},
    {"id": "s3", "description": "Summarise the results for the user",
     "tool": null, "depends_on": ["s1", "s2"]}
  ]
}
(Names in angle brackets stand for the tools, parameters and values listed below.)"""

# The compact style is for small local models: short rules, and per tool one line saying
# when to use it and how a call looks (measured by ``python -m bench.prompts``).
COMPACT_INTRO = (
    "You plan tasks. Turn the user's request into a JSON plan of steps; an executor runs "
    "each step. Use a tool whenever one fits: look facts up, never guess them."
)

COMPACT_RULES = """Rules:
1. One tool call per step; copy ids and numbers from the request into "args".
   "{{s1.field}}" uses a field of step s1's result (then list "s1" in depends_on).
2. Every part of the request needs at least one step.
3. "If X, do Y": a step that checks X, then a step for Y with a "condition" such as
   "s1.status == 'delivered'".
4. Tools marked [side effect] only when the request asks for that action.
5. "tool": null only to reason over earlier results. The last step has "tool": null,
   depends on the steps it needs and writes the answer.
6. Descriptions in $language. Reply with the JSON object only."""

COMPACT_FORMAT = Template("""JSON:
{"goal": "...", "steps": [
 {"id": "s1", "description": "...", "tool": $tool, "args": $args, "depends_on": []},
 {"id": "s2", "description": "Answer the user", "tool": null, "depends_on": ["s1"]}]}""")

LESSONS_TEMPLATE = Template(
    "Lessons from earlier runs (avoid repeating these mistakes):\n$lessons"
)

# What does not change comes first, so that a server's prefix cache serves it again: the
# instructions (per language), then the tools (per catalogue, or per request when only a
# shortlist is described), then the compact style's example and any lessons (per request);
# the request itself is the user message, last. A corrective retry is a follow-up turn
# after all of it.
PLANNER_SYSTEM_TEMPLATE = Template("$intro\n\n$principles\n\n$format\n\n$tools$extra")
COMPACT_SYSTEM_TEMPLATE = Template("$intro\n\n$principles\n\n$tools\n\n$format$extra")

TOOLS_HEADING = "Available tools:"
EVERY_TOOL_TEMPLATE = Template("Every tool, by name ($count): $names")
SHORTLIST_HEADING = "The tools that fit this request:"
SHORTLIST_RULE = (
    'A tool that is only named in the list above may be used too: write its exact name in '
    '"tool" and leave "args" out.'
)

PLANNER_USER_TEMPLATE = Template("Make a plan for this request:\n\n$request")

TODAY_TEMPLATE = Template("Today is $today.")

PERIOD_TEMPLATE = Template(
    "The request is about $period: dates from $start up to, not including, $end. Use these "
    "bounds in every date condition, and name the period in step descriptions.")

REPLANNER_RULES = """\
Replanning rules:
- The completed steps are kept with their results: do not repeat them. New steps may use
  their results through depends_on and "{{sN.field}}".
- Fix the cause of the failure first; when it cannot be fixed, take another route (another
  tool, a reduced answer) instead of repeating what failed.
- Plan only the remaining steps and end with the synthesis step.
- Number the new steps from $next_id on; never reuse an earlier id.
- Answer in the same JSON format, with only the new steps in "steps"."""

REPLANNER_USER_TEMPLATE = Template(
    "Goal: $goal\n\n"
    "Progress of the current plan:\n$summary\n\n"
    "Results of the completed steps:\n$results\n\n"
    "What went wrong:\n$failure\n\n"
    "Plan the remaining steps. Number them from $next_id on."
)

# A small model replanned a failed conversion the request never asked for, version after
# version, beside the results that already answered it: said plainly, it may stop there.
UNNEEDED_FAILURES_TEMPLATE = Template(
    "No other step waits for $steps. If the results of the completed steps already answer "
    "every part of the goal, send only the synthesis step.")

CORRECTIVE_TEMPLATE = Template(
    "Your plan could not be used:\n$errors\n\n"
    "Send the corrected plan as one JSON object in the same format, and nothing else."
)

CORRECTIVE_TOOLS_TEMPLATE = Template("To fix it:\n$tools")
EMPTY_ARGUMENT_TEMPLATE = Template(
    '$step leaves $tool without $arguments, which it needs. If the request does not give '
    'the value, $tool is the wrong tool for "$description": use $better, which does not '
    'need it.')


_RESULT_CHARS = 1200
_USE_WHEN_WORDS = 5
_HINT_CHARS = 90
_SENTENCE_END = re.compile(r"(?<!e\.g)(?<!i\.e)\.\s+(?=[A-Z])")
_EXAMPLE = re.compile(r'(?:for example|such as|e\.g\.,?)\s*"([^"]+)"|"([^"]+)"')


def describe_tools(catalogue: Sequence[dict[str, Any]]) -> str:
    """The tool catalogue as lines: name, parameters, description and the side-effect mark."""
    if not catalogue:
        return "(no tools: every step is a reasoning step with \"tool\": null)"
    lines = []
    for entry in catalogue:
        params = _describe_parameters(entry.get("parameters") or {})
        mark = " [side effect]" if entry.get("side_effect") else ""
        lines.append(f"- {entry['name']}({params}){mark}: {entry.get('description', '')}")
    return "\n".join(lines)


def describe_tools_compact(
    catalogue: Sequence[dict[str, Any]], language: Language = "en"
) -> str:
    """One line per tool: what it does, when to use it (its keywords in ``language``, if
    the entry carries ``keywords``), an example call and the names of its optional
    arguments (else a tool whose arguments are all optional reads as taking none)."""
    if not catalogue:
        return "(no tools: every step has \"tool\": null)"
    lines = []
    for entry in catalogue:
        mark = " [side effect]" if entry.get("side_effect") else ""
        keywords = [word for word in entry.get("keywords") or ()
                    if written_in(word, language)][:_USE_WHEN_WORDS]
        use_when = f" Use for: {', '.join(keywords)}." if keywords else ""
        call = json.dumps(tool_example(entry), ensure_ascii=False)
        schema = entry.get("parameters") or {}
        optional = [name for name in schema.get("properties") or {}
                    if name not in schema.get("required", [])]
        may_add = f" Optional: {', '.join(optional)}." if optional else ""
        lines.append(f"- {entry['name']}{mark}: {entry.get('description', '')}{use_when} "
                     f"Args: {call}{may_add}")
    return "\n".join(lines)


def tool_example(entry: dict[str, Any]) -> dict[str, Any]:
    """Example arguments for a catalogue entry: its required parameters, each with the
    value its description quotes ("for example "T-7"") or a placeholder with the first
    sentence of its description."""
    schema = entry.get("parameters") or {}
    properties = schema.get("properties") or {}
    example: dict[str, Any] = {}
    for name in schema.get("required", []):
        prop = properties.get(name, {})
        quoted = _quoted_value(prop)
        if quoted is not None:
            example[name] = quoted
        elif prop.get("type") in ("integer", "number"):
            example[name] = 1
        else:
            example[name] = f"<{_placeholder(name, prop.get('description', ''))}>"
    return example


def _quoted_value(prop: dict[str, Any]) -> str | None:
    """The value a parameter's description quotes, if it quotes one."""
    quoted = _EXAMPLE.search(prop.get("description", ""))
    return (quoted.group(1) or quoted.group(2)) if quoted else None


def _placeholder(name: str, description: str) -> str:
    """``name``, with the first sentence of its description when it has one: a server's
    tools say there which form a value takes ("IANA timezone name", "HH:MM")."""
    first = _SENTENCE_END.split(description.strip(), maxsplit=1)[0].rstrip(".")
    return f"{name}: {clip(first, _HINT_CHARS)}" if first else name


def _describe_parameters(schema: dict[str, Any]) -> str:
    required = set(schema.get("required", []))
    parts = []
    for name, prop in (schema.get("properties") or {}).items():
        text = f"{name}: {_type_name(prop)}"
        if name not in required:
            default = prop.get("default")
            text += f" = {json.dumps(default, ensure_ascii=False)}"
        if prop.get("description"):
            text += f" ({prop['description']})"
        parts.append(text)
    return ", ".join(parts)


def _type_name(prop: dict[str, Any]) -> str:
    if "enum" in prop:
        return " | ".join(json.dumps(v, ensure_ascii=False) for v in prop["enum"])
    if "type" in prop:
        kind = prop["type"]
        if kind == "array" and isinstance(prop.get("items"), dict):
            return f"array of {_type_name(prop['items'])}"
        return str(kind)
    options = prop.get("anyOf") or prop.get("oneOf")
    if options:
        return " | ".join(_type_name(option) for option in options)
    return "any"


def lessons_block(lessons: Iterable[str]) -> str:
    """The "lessons from earlier runs" block, or "" when there are none."""
    items = [lesson.strip() for lesson in lessons if lesson and lesson.strip()]
    if not items:
        return ""
    return LESSONS_TEMPLATE.substitute(lessons="\n".join(f"- {item}" for item in items))


def tools_block(described: str, every_name: Sequence[str] = ()) -> str:
    """The tools part of a planning prompt: the described tools, headed as the whole
    catalogue; or, when ``every_name`` is given (a shortlist), every tool's name in one line
    first (the same for every request), then the described ones and how to use another."""
    if not every_name:
        return f"{TOOLS_HEADING}\n{described}"
    names = EVERY_TOOL_TEMPLATE.substitute(count=len(every_name), names=", ".join(every_name))
    return f"{names}\n\n{SHORTLIST_HEADING}\n{described}\n{SHORTLIST_RULE}"


def _system_prompt(
    intro: str,
    catalogue: Sequence[dict[str, Any]],
    language: Language,
    extra_blocks: Sequence[str],
    style: PromptStyle = "full",
    example_tool: str | None = None,
    every_name: Sequence[str] = (),
) -> str:
    name = LANGUAGE_NAMES.get(language, "English")
    extra = "".join(f"\n\n{block}" for block in extra_blocks if block)
    if style == "compact":
        return COMPACT_SYSTEM_TEMPLATE.substitute(
            intro=intro if intro != PLANNER_INTRO else COMPACT_INTRO,
            principles=Template(COMPACT_RULES).substitute(language=name),
            tools=tools_block(describe_tools_compact(catalogue, language), every_name),
            format=_compact_format(catalogue, example_tool),
            extra=extra,
        )
    return PLANNER_SYSTEM_TEMPLATE.substitute(
        intro=intro,
        principles=Template(PLANNING_PRINCIPLES).substitute(language=name),
        format=PLAN_FORMAT,
        tools=tools_block(describe_tools(catalogue), every_name),
        extra=extra,
    )


def _compact_format(catalogue: Sequence[dict[str, Any]], example_tool: str | None = None
                    ) -> str:
    """The example step calls ``example_tool`` (else a read-only tool taking arguments): a
    small model copies the example's tool whatever the request, so the planner passes the
    tool the packs' rules start the request with. It copies the arguments' shape too: a
    clock called with ``{}`` in the example was called so in the plan, and the time zone the
    request named was then reached by conversions nobody asked for, so a tool that requires
    nothing is shown with the optional arguments its descriptions quote a value for, as
    placeholders."""
    ranked = sorted(catalogue, key=lambda entry: (
        entry["name"] != example_tool, bool(entry.get("side_effect")),
        not (entry.get("parameters") or {}).get("required")))
    if not ranked:
        return COMPACT_FORMAT.substitute(tool="null", args="{}")
    entry = ranked[0]
    return COMPACT_FORMAT.substitute(
        tool=json.dumps(entry["name"]),
        args=json.dumps(tool_example(entry) or _optional_example(entry), ensure_ascii=False),
    )


def _optional_example(entry: dict[str, Any]) -> dict[str, Any]:
    """The optional parameters whose descriptions quote a value, each with a placeholder:
    the quoted value itself was copied ("Asia/Shanghai" for Tokyo in 5 of 5 Chinese drafts)."""
    properties = (entry.get("parameters") or {}).get("properties") or {}
    return {name: f"<{name}>" for name, prop in properties.items()
            if _quoted_value(prop) is not None}


def planner_system_prompt(
    catalogue: Sequence[dict[str, Any]],
    *,
    language: Language = "en",
    lessons: Iterable[str] = (),
    style: PromptStyle = "full",
    example_tool: str | None = None,
    every_name: Sequence[str] = (),
) -> str:
    """The planner's system prompt: principles, output format, tools, and any lessons.

    ``style="compact"`` (small local models) gives each tool one line with its keywords
    (catalogue entries may carry ``keywords``) and an example call, and short rules; its
    example step calls ``example_tool`` when that is in the catalogue. ``every_name``
    (the names of every tool, when ``catalogue`` is a shortlist of them) is listed before
    the described tools, with the rule that a tool only named may be used too.
    """
    return _system_prompt(PLANNER_INTRO, catalogue, language, [lessons_block(lessons)], style,
                          example_tool, every_name)


def planner_user_prompt(request: str, *, today: str = "", period: str = "", start: str = "",
                        end: str = "") -> str:
    """The planner's user message for ``request``: today's date (ISO) when given, first (it
    changes daily, the request every time: a server's prefix cache keeps what comes before),
    the request, and the period it names with its bounds (ISO, ``end`` exclusive)."""
    parts = [TODAY_TEMPLATE.substitute(today=today)] if today else []
    parts.append(PLANNER_USER_TEMPLATE.substitute(request=request.strip()))
    if period:
        parts.append(PERIOD_TEMPLATE.substitute(period=period, start=start, end=end))
    return "\n\n".join(parts)


def replanner_system_prompt(
    catalogue: Sequence[dict[str, Any]],
    *,
    next_id: str,
    language: Language = "en",
    lessons: Iterable[str] = (),
    style: PromptStyle = "full",
    every_name: Sequence[str] = (),
) -> str:
    """The replanner's system prompt: the planner's, plus the rules of replanning."""
    rules = Template(REPLANNER_RULES).substitute(next_id=next_id)
    return _system_prompt(REPLANNER_INTRO, catalogue, language,
                          [rules, lessons_block(lessons)], style, every_name=every_name)


def replanner_user_prompt(
    *,
    goal: str,
    summary: str,
    results: dict[str, Any],
    failure: str,
    next_id: str,
    unneeded: Sequence[str] = (),
) -> str:
    """The replanner's user message: progress, completed results (folded), the failure,
    and, when there are results, that the failed steps in ``unneeded`` (ids) may be left
    out."""
    lines = [f"- {step_id}: {_fold(value)}" for step_id, value in results.items()]
    failure = failure.strip() or "(no details)"
    if unneeded and results:
        failure += "\n" + UNNEEDED_FAILURES_TEMPLATE.substitute(steps=", ".join(unneeded))
    return REPLANNER_USER_TEMPLATE.substitute(
        goal=goal,
        summary=summary,
        results="\n".join(lines) or "(none)",
        failure=failure,
        next_id=next_id,
    )


def _fold(value: Any) -> str:
    return clip(value, _RESULT_CHARS)


def corrective_prompt(errors: Sequence[str], tools: str = "") -> str:
    """The follow-up message that sends the problems of a plan back to the model, with
    ``tools`` first (what the model needs to fix them: the tools it named that the prompt
    only named, a tool that fits a step it left without a required value)."""
    text = CORRECTIVE_TEMPLATE.substitute(errors="\n".join(f"- {error}" for error in errors))
    return f"{CORRECTIVE_TOOLS_TEMPLATE.substitute(tools=tools)}\n\n{text}" if tools else text


def fallback_descriptions(request: str, language: Language) -> tuple[str, str]:
    """Descriptions of the fallback plan's two steps (work on the request, then synthesise)."""
    return (render(msg("plan.fallback_work", request=request.strip()), language),
            synthesis_description(language))


def synthesis_description(language: Language) -> str:
    """The description of a plan's closing step that writes the answer."""
    return render(msg("plan.synthesis_step"), language)

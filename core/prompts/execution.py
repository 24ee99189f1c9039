"""The executor's named prompts: forced tool call, bounded ReAct, synthesis, condition judge."""

from __future__ import annotations

import json
from typing import Any

__all__ = [
    "ARGUMENTS_AS_JSON",
    "CONDITION_JUDGE_SYSTEM",
    "FORCED_TOOL_SYSTEM",
    "LANGUAGE_NAMES",
    "LANGUAGE_REWRITE_SYSTEM",
    "REACT_FINAL_NUDGE",
    "REACT_SYSTEM",
    "REFUSED_CALL",
    "SYNTHESIS_PERIOD",
    "SYNTHESIS_SYSTEM",
    "arguments_json_messages",
    "condition_messages",
    "forced_tool_messages",
    "react_messages",
    "refused_call",
    "synthesis_messages",
]

LANGUAGE_NAMES = {"zh": "Chinese (简体中文)", "en": "English"}

FORCED_TOOL_SYSTEM = """\
You are the executor of a plan. Do exactly the current step and nothing else.
Call the tool {tool_name} once, with arguments taken from the goal and the results below.
Do not invent values that are not in the context; use the values already known as given.
{known_args}
{context}"""

ARGUMENTS_AS_JSON = """\
Do not answer in words. Reply with only the arguments for {tool_name} as one JSON object
with these parameters: {parameters}"""

REFUSED_CALL = """\
{tool_name} refused these arguments: {args}
Its error: {error}
Call {tool_name} again with arguments that fix this error."""

REACT_SYSTEM = """\
You are the executor of a plan, working on one step. Rules:
- Do only what the current step describes; later steps belong to other steps.
- Call at most one tool at a time, and only when the results below are not enough.
- As soon as the step's goal is met, reply with the result as plain text and stop.
- The results of earlier steps are below: never ask for them; use a tool for anything missing.
- Reply in {language}.
You have at most {rounds} rounds.

{context}"""

REACT_FINAL_NUDGE = (
    "This is the last round: no more tools. Reply now with the result of the current step."
)

SYNTHESIS_SYSTEM = """\
You write the final answer for the user from the results of the plan's steps below.
The steps have already run: report what they found and what was done, never the steps you
would take. Do not call any tool. Answer the goal directly and completely, say plainly if something
could not be done, and do not invent facts that the results do not contain. Never ask
for information or for the results: they are all below.
Answer in the language of the request: {language}, throughout: where a name exists in both
languages (a product, a status), use the one in that language; translate tool findings.
Keep tabular results as Markdown tables (a header row, a |---| row, one row per line).
If an earlier answer is among the results (a follow-up), do not repeat it: answer the
follow-up from the new results and refer to the earlier answer in one sentence at most.

{context}"""

LEFT_OUT_TEMPLATE = """\
Your answer leaves out what these steps found:
{steps}
Write the whole answer again, answering every part of the request from the results."""

SYNTHESIS_PERIOD = """\
The request is about {period} (dates from {start} up to, not including, {end}): say in the
answer which period it covers, with its dates."""

LANGUAGE_REWRITE_SYSTEM = """\
Rewrite the user's message in {language}. Keep every fact, number, date, id, name and
Markdown table exactly; change nothing else. Output only the rewritten text."""

CONDITION_JUDGE_SYSTEM = """\
You decide whether a plan step should run. Its condition is: "{condition}".
Judge it only from the results below. Reply with exactly one word: yes or no.

{context}"""


def forced_tool_messages(
    context: str, tool_name: str, known_args: dict[str, Any], goal: str
) -> list[dict[str, Any]]:
    """Messages for the one forced call that fills in a tool step's missing arguments."""
    known = (
        "Values already known (use them as they are): "
        + json.dumps(known_args, ensure_ascii=False, default=str)
        if known_args else ""
    )
    system = FORCED_TOOL_SYSTEM.format(tool_name=tool_name, known_args=known, context=context)
    return [
        {"role": "system", "content": system},
        {"role": "user", "content": f"Request: {goal}"},
    ]


def refused_call(tool_name: str, args: dict[str, Any], error: str) -> str:
    """What the model reads when the tool refused the arguments it wrote."""
    return REFUSED_CALL.format(tool_name=tool_name, error=error,
                               args=json.dumps(args, ensure_ascii=False, default=str))


def arguments_json_messages(
    forced: list[dict[str, Any]], tool_name: str, parameters: dict[str, Any]
) -> list[dict[str, Any]]:
    """The forced call's messages, then a request for the arguments as JSON (for a model
    that answered with text when asked to call the tool)."""
    ask = ARGUMENTS_AS_JSON.format(tool_name=tool_name,
                                   parameters=json.dumps(parameters, ensure_ascii=False))
    return [*forced, {"role": "user", "content": ask}]


def react_messages(context: str, goal: str, language: str, rounds: int) -> list[dict[str, Any]]:
    """Opening messages of a reasoning step's bounded ReAct loop."""
    system = REACT_SYSTEM.format(
        context=context, language=LANGUAGE_NAMES.get(language, language), rounds=rounds
    )
    return [
        {"role": "system", "content": system},
        {"role": "user", "content": f"Request: {goal}"},
    ]


def synthesis_messages(context: str, goal: str, language: str, *,
                       period: tuple[str, str, str] | None = None) -> list[dict[str, Any]]:
    """Messages of the synthesis call (sent with no tools at all); ``period`` (its label,
    first day and the day after its last, ISO) is the period the answer names."""
    system = SYNTHESIS_SYSTEM.format(
        context=context, language=LANGUAGE_NAMES.get(language, language)
    )
    if period is not None:
        label, start, end = period
        system = f"{system}\n\n{SYNTHESIS_PERIOD.format(period=label, start=start, end=end)}"
    return [
        {"role": "system", "content": system},
        {"role": "user", "content": goal},
    ]


def condition_messages(context: str, condition: str) -> list[dict[str, Any]]:
    """Messages asking the model for a yes/no verdict on a condition written in prose."""
    return [
        {"role": "system", "content": CONDITION_JUDGE_SYSTEM.format(
            condition=condition, context=context)},
        {"role": "user", "content": f"Should the step run? Condition: {condition}"},
    ]

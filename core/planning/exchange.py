"""One planning exchange with the model: how to ask, the corrective retry, soft problems.

Where the provider takes one, the request carries the plan's JSON schema (tool names
limited to the catalogue); the reply is parsed and validated all the same. Besides hard
problems (unparseable, invalid), a plan may have soft ones (a reasoning step that plainly
needs a tool, a clause no step covers): they send the plan back once, and what remains
becomes a warning on the plan.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from core.base.usage import Usage
from core.errors import PlanParseError, PlanValidationError
from core.llm.client import ChatModel, ChatReply
from core.llm.providers import PromptStyle
from core.plan.model import Plan, Step
from core.plan.step_stream import StepReader
from core.prompts.plan_schema import plan_schema
from core.prompts.planning import corrective_prompt, describe_tools, describe_tools_compact
from core.tools.registry import Tool, ToolRegistry

__all__ = [
    "ClarificationNeeded",
    "PlanningResult",
    "StepListener",
    "catalogue",
    "converse",
    "described_lines",
    "prompt_style",
    "schema_for",
]

logger = logging.getLogger(__name__)

ATTEMPTS = 2

StepListener = Callable[[list[Step]], None]
"""Told the steps of the reply being written each time another one is complete: a preview
of the plan (every reply starts its own list), never the plan that is checked and approved."""


@dataclass
class PlanningResult:
    """What one planning (or replanning) exchange produced and cost.

    ``plan`` is always set by :func:`plan_request` (the fallback plan when the model's
    output was unusable); :func:`replan_request` leaves it None when replanning failed.
    ``errors`` holds every problem found, prefixed by the attempt that produced it.
    """

    plan: Plan | None
    usage: Usage = field(default_factory=Usage)
    attempts: int = 0
    raw_replies: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    fallback: bool = False
    questions: list[str] = field(default_factory=list)


class ClarificationNeeded(Exception):
    """The planner asked questions instead of planning (raised by an ``accept`` function)."""

    def __init__(self, questions: list[str]) -> None:
        super().__init__("; ".join(questions))
        self.questions = questions


def prompt_style(model: ChatModel) -> PromptStyle:
    """The planner prompt for ``model``'s provider (a model without a profile: "full")."""
    profile = getattr(model, "profile", None)
    return profile.prompt_style if profile is not None else "full"


def catalogue(registry: ToolRegistry, described: Iterable[Tool] | None = None
              ) -> list[dict[str, Any]]:
    """The catalogue (or only the ``described`` tools, a shortlist of it) with each tool's
    keywords (the compact prompt's "use for")."""
    tools = registry if described is None else described
    return [{**item.catalogue_entry(), "keywords": list(item.keywords)} for item in tools]


def described_lines(entries: list[dict[str, Any]], style: PromptStyle) -> str:
    """Catalogue entries as the planning prompt of ``style`` describes them."""
    return describe_tools_compact(entries) if style == "compact" else describe_tools(entries)


def schema_for(registry: ToolRegistry, *, questions: bool = False,
               described: Iterable[Tool] = (), steps_only: bool = False) -> dict[str, Any]:
    """The plan schema, tool names limited to the catalogue and the arguments of the
    ``described`` tools (the prompt's shortlist) to their parameters (the client sends it
    where the provider takes one)."""
    return plan_schema(registry.names(), questions=questions, steps_only=steps_only,
                       arguments={tool.name: tool.parameters for tool in described})


def _ask(model: ChatModel, messages: list[dict[str, Any]], schema: dict[str, Any] | None,
         on_steps: StepListener | None) -> ChatReply:
    if on_steps is None:
        return model.chat(messages, role="planner", tools=None, json_mode=True,
                          json_schema=schema)
    reader = StepReader()

    def hear(text: str) -> None:
        steps = reader.feed(text)
        if steps:
            on_steps(steps)

    return model.chat(messages, role="planner", tools=None, json_mode=True, json_schema=schema,
                      on_text=hear)


def converse(
    model: ChatModel,
    messages: list[dict[str, Any]],
    accept: Callable[[str], Plan],
    *,
    review: Callable[[Plan], list[str]] | None = None,
    schema: dict[str, Any] | None = None,
    explain: Callable[[str], str] | None = None,
    on_steps: StepListener | None = None,
) -> PlanningResult:
    """Ask, and once more with the problems sent back; ``plan`` is None if both fail.

    Problems ``review`` finds in an accepted plan are soft: they are sent back once, and
    the plan with whatever remains is kept (a plan with soft problems beats the fallback
    when the second reply is unusable); the review's pipeline makes them its warnings
    (core.planning.checks.Pipeline.settle). The retry is a follow-up turn (the reply,
    then the problems, after the same messages), so that a server's prefix cache serves
    everything before it; ``explain(reply)`` adds what the model needs to fix it (the
    tools it named that the prompt did not describe). ``on_steps`` hears each reply's steps
    while it is written (the reply is streamed where the model can).
    """
    result = PlanningResult(plan=None)
    candidate: Plan | None = None
    for attempt in range(1, ATTEMPTS + 1):
        reply = _ask(model, messages, schema, on_steps)
        text = reply.content or ""
        result.usage = result.usage + reply.usage
        result.attempts = attempt
        result.raw_replies.append(text)
        try:
            plan = accept(text)
        except ClarificationNeeded as exc:
            result.questions = exc.questions
            return result
        except PlanParseError as exc:
            problems = [str(exc)]
        except PlanValidationError as exc:
            problems = [str(problem) for problem in exc.problems]  # a model reads English
        else:
            problems = review(plan) if review is not None else []
            candidate = plan
            if not problems or attempt == ATTEMPTS:
                break
        logger.info("planning attempt %d unusable: %s", attempt, problems)
        result.errors.extend(f"attempt {attempt}: {problem}" for problem in problems)
        messages = [
            *messages,
            {"role": "assistant", "content": text or "(empty reply)"},
            {"role": "user", "content": corrective_prompt(
                problems, explain(text) if explain is not None else "")},
        ]
    if candidate is not None:
        result.plan = candidate
    return result

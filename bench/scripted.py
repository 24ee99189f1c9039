"""A scripted model for the plan-quality bench: the fake endpoint answering as a planner that
knows the demo's rules, so that a flat plan and a plan in phases can be compared at equal
planning skill.

Served by tests/fake_openai.py (no network), it answers each kind of request the engine
makes by what the request is: the router with the rules' route; the planner with the demo's
offline plan; the phase planner with the phases of the demo's phased plan, and each phase's
expansion with that phase's steps (numbered from the id the prompt gives, references to
earlier phases' steps renamed to the ids they got); the answer step by repeating the results
it was shown; a success check or a checkpoint with "met" and "nothing to change". What it
measures is the engine's own cost of each way of planning (model calls, tokens as the fake
server estimates them), not a model's skill.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from core.plan.model import Plan
from core.planning.router import route_offline
from core.prompts.planning import PERIOD_TEMPLATE, PLANNER_USER_TEMPLATE
from core.tools.registry import ToolRegistry
from demo.offline.phased import phased_plan
from demo.offline.planner import offline_plan
from tests.support.fake_openai import DEFAULT_KEY, FakeOpenAI, FakeReply, text

__all__ = ["ScriptedPlanner", "scripted_endpoint"]

_PHASE = re.compile(r"You plan only the steps of phase (p\d+)")
_NEXT = re.compile(r"Number them from s(\d+) on")
_REQUEST = re.compile(r"^Request: (.*?)\n", re.S)
_STEP_REF = re.compile(r"\b(s\d+)\b")
# the planner's user message: today's date, then the request, then the period it names
_FLAT_HEAD = PLANNER_USER_TEMPLATE.template.split("$request")[0]
_PERIOD_HEAD = "\n\n" + PERIOD_TEMPLATE.template.split("$period")[0]


class ScriptedPlanner:
    """The responder of the fake endpoint (see the module docstring); thread-safe enough
    for one run at a time, as the bench runs them."""

    def __init__(self, registry: ToolRegistry) -> None:
        self.registry = registry
        self._assigned: dict[str, dict[str, str]] = {}  # request → draft id → id it got

    def __call__(self, body: dict[str, Any]) -> FakeReply:
        messages = body.get("messages") or []
        system = str(messages[0].get("content") or "") if messages else ""
        user = str(messages[-1].get("content") or "") if messages else ""
        for test, answer in self._answers():
            if test(system, user):
                return answer(system, user)
        return text("Done. " + " ".join(str(m.get("content") or "") for m in messages))

    def _answers(self) -> list[tuple[Callable[[str, str], bool], Callable[[str, str], FakeReply]]]:
        return [
            (lambda s, u: s.startswith("You route a user's request"), self._route),
            (lambda s, u: s.startswith("You plan long tasks in two levels"), self._phases),
            (lambda s, u: bool(_PHASE.search(s)), self._expansion),
            (lambda s, u: _FLAT_HEAD in u, self._flat),
            (lambda s, u: "met its success criteria" in s + u,
             lambda s, u: _json({"met": True, "reason": "the result shows it"})),
            (lambda s, u: s.startswith("You are the checkpoint"),
             lambda s, u: _json({"needs_replan": False, "reason": "nothing to change"})),
            (lambda s, u: s.startswith(("You review a run", "You are the reflector")),
             lambda s, u: _json({"root_cause": "", "lesson": "", "should_retry": False,
                                 "retry_hint": ""})),
        ]

    def _route(self, system: str, user: str) -> FakeReply:
        route = route_offline(user, self.registry)
        return _json({"mode": route.mode, "reason": route.reason})

    def _flat(self, system: str, user: str) -> FakeReply:
        request = user.split(_FLAT_HEAD, 1)[1].split(_PERIOD_HEAD, 1)[0]
        return _json(offline_plan(request, self.registry).canonical())

    def _phases(self, system: str, user: str) -> FakeReply:
        request = user.split("\n\n", 1)[-1]
        self._assigned[request] = {}
        drafted = phased_plan(request, self.registry)
        return _json({"goal": drafted.goal, "definition_of_done": drafted.definition_of_done,
                      "phases": [phase.canonical() for phase in drafted.phases]})

    def _expansion(self, system: str, user: str) -> FakeReply:
        phase = _PHASE.search(system)[1]  # type: ignore[index]
        found = _REQUEST.search(user)
        request = found.group(1).strip() if found else ""
        number = int(_NEXT.search(user)[1]) if _NEXT.search(user) else 1  # type: ignore[index]
        drafted: Plan = phased_plan(request, self.registry)
        assigned = self._assigned.setdefault(request, {})
        own = [step for step in drafted.steps if step.phase == phase]
        for offset, step in enumerate(own):
            assigned[step.id] = f"s{number + offset}"
        steps = []
        for step in own:
            data = step.model_dump(include={"id", "description", "tool", "args", "depends_on",
                                            "condition", "success_criteria"}, exclude_none=True)
            steps.append(json.loads(_STEP_REF.sub(
                lambda m: assigned.get(m.group(1), m.group(1)), json.dumps(data))))
        return _json({"steps": steps})


def _json(data: dict[str, Any]) -> FakeReply:
    return text(json.dumps(data, ensure_ascii=False))


@contextmanager
def scripted_endpoint(registry: ToolRegistry) -> Iterator[dict[str, str]]:
    """The scripted planner served on 127.0.0.1; yields the environment that points the
    engine at it (base URL, the fake key, a model it serves)."""
    with FakeOpenAI(responder=ScriptedPlanner(registry)) as server:
        yield {"OPENAI_BASE_URL": server.base_url, "OPENAI_API_KEY": DEFAULT_KEY,
               "OPENAI_MODEL": "gpt-4o-mini", "PLANBOARD_MAX_RETRIES": "0"}

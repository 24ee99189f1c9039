"""The replay: an OpenAI-compatible endpoint that answers each turn with its ground truth.

Served by the project's fake endpoint (tests/support/fake_openai.py, on 127.0.0.1, no
network), it plays the planner that knows BFCL's answers: the first turn's planning call
gets the turn's ground-truth calls as a PlanBoard plan, each later turn's follow-up call
gets them as the new steps (numbered from the id the prompt gives), and any other call (the
answer step) gets an answer that repeats what it was shown. A plan is what a person would
write: one step per call, in the ground truth's order (each step waits for the one before:
the backends are stateful), described by the function's own description, its arguments
by name (a positional argument of the ground truth named by the backend's signature), and
a last step that answers. What comes back from the checks and the executor must be those
calls, untouched: every entry then scores right with BFCL's checker, with the weak-model
checks on and off.

The responder counts what it was asked (``asked``: "plan", "follow_up", "answer" per
call), so a check that sends a correct plan back shows as a call too many.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from bench.bfcl.backend import Call, EntryBackends
from bench.bfcl.data import Entry
from core.base.usage import Usage
from core.llm.client import ChatReply, ToolCall
from core.llm.providers import ProviderProfile
from core.prompts.adaptive import FOLLOWUP_USER, REFLECTION_SYSTEM, REVIEW_SYSTEM
from core.prompts.execution import SYNTHESIS_SYSTEM
from core.prompts.planning import PLANNER_USER_TEMPLATE, REPLANNER_USER_TEMPLATE
from tests.support.fake_openai import DEFAULT_KEY, FakeOpenAI, FakeReply, text, tool_call

__all__ = ["ReplayModel", "ReplayResponder", "replay_endpoint", "turn_steps"]

_PLAN_HEAD = PLANNER_USER_TEMPLATE.template.split("$request")[0]
_FOLLOW_HEAD = FOLLOWUP_USER.template.split("$follow_up")[0].rsplit("\n\n", 1)[-1]
_FOLLOW_TAIL = FOLLOWUP_USER.template.split("$follow_up")[1].split("$next_id")[0]
_ANSWER_HEAD = SYNTHESIS_SYSTEM.split("\n", 1)[0]
_REPLAN_TAIL = REPLANNER_USER_TEMPLATE.template.split("$next_id")[0].rsplit("\n", 1)[-1]
_ARGUMENTS_HEAD = "Reply with only the arguments for "
_REFLECTION_HEADS = (REFLECTION_SYSTEM.template[:20], REVIEW_SYSTEM.template[:20])
_RESULTS_HEAD = "Results of the steps it depends on:"
ANSWER_DESCRIPTION = "Tell the user what was done and what the results show"


def _described(call: Call, backends: EntryBackends) -> str:
    """The step's description: the first sentence of the function's own description, then
    its arguments."""
    _, doc = backends.docs[call.name]
    words = str(doc.get("description", call.name)).split("Tool description:")[-1].strip()
    sentence = words.split(". ")[0].rstrip(".")
    shown = ", ".join(f"{name}={value!r}" for name, value in call.args.items())
    return f"{sentence} ({shown})" if shown else sentence


def ground_truth_results(entry: Entry) -> list[list[Any]]:
    """What each ground-truth call returns, turn by turn, on fresh backends."""
    scratch = EntryBackends(entry)
    results = []
    for turn in entry.ground_truth:
        results.append([scratch.call(call.name, call.args)
                        for call in map(scratch.read_call, turn)])
    return results


def _found_in(value: Any, earlier: list[tuple[str, Any]]) -> str | None:
    """A reference to the latest earlier result with a top-level field holding ``value``."""
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        return None
    for step_id, result in reversed(earlier):
        if isinstance(result, dict):
            for key, held in result.items():
                if type(held) is type(value) and held == value:
                    return f"{{{{{step_id}.{key}}}}}"
    return None


def turn_steps(entry: Entry, backends: EntryBackends, turn: int, first_id: int,
               results: list[list[Any]]) -> list[dict[str, Any]]:
    """The plan steps of ``turn``'s ground truth, numbered from ``first_id``, ending with
    the answer step. An argument that is a value an earlier call of the turn returned, and
    that the request does not give, reads it from that step's result, as a person writing
    the plan before it runs would (the ground truth writes the value it knew afterwards)."""
    steps: list[dict[str, Any]] = []
    earlier: list[tuple[str, Any]] = []
    for offset, text_of_call in enumerate(entry.ground_truth[turn]):
        call = backends.read_call(text_of_call)
        step_id = f"s{first_id + offset}"
        args, waits = {}, [steps[-1]["id"]] if steps else []
        for name, value in call.args.items():
            reference = None if str(value) in entry.turns[turn] else _found_in(value, earlier)
            args[name] = reference or value
            if reference is not None:
                waits.append(reference[2:].split(".")[0])
        steps.append({"id": step_id, "description": _described(call, backends),
                      "tool": call.name, "args": args, "depends_on": list(dict.fromkeys(waits))})
        earlier.append((step_id, results[turn][offset]))
    steps.append({"id": f"s{first_id + len(steps)}", "description": ANSWER_DESCRIPTION,
                  "tool": None, "depends_on": [step["id"] for step in steps]})
    return steps


class ReplayResponder:
    """Answers the fake endpoint's calls for the entry in play (:meth:`play`)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.entry: Entry | None = None
        self.backends: EntryBackends | None = None
        self.results: list[list[Any]] = []
        self._now = 0  # the turn being planned
        self._served: dict[str, int] = {}  # arguments asked for per function this turn
        self.asked: list[str] = []
        self.sent_back: list[str] = []

    def play(self, entry: Entry, backends: EntryBackends) -> None:
        """Answer for ``entry`` from now on (``backends`` name its positional arguments)."""
        with self._lock:
            self.entry, self.backends, self.asked, self.sent_back = entry, backends, [], []
            self.results = ground_truth_results(entry)

    def __call__(self, body: dict[str, Any]) -> FakeReply:
        messages = body.get("messages") or []
        system = str(messages[0].get("content") or "") if messages else ""
        users = [str(m.get("content") or "") for m in messages if m.get("role") == "user"]
        first = users[0] if users else ""
        with self._lock:
            if len(users) > 1:  # a corrective turn: what was sent back, and why
                self.sent_back.append(users[-1])
            kind, reply = self._reply(body, system, first)
            self.asked.append(kind)
        return reply

    def _reply(self, body: dict[str, Any], system: str, first: str) -> tuple[str, FakeReply]:
        """What kind of call ``body`` is, and the answer to it."""
        tools = body.get("tools") or []
        if len(tools) == 1:  # a step's arguments, asked through its one tool
            name = tools[0]["function"]["name"]
            return "arguments", tool_call(name, self._arguments(name))
        if _FOLLOW_HEAD in first and _FOLLOW_TAIL in first:
            return "follow_up", self._follow_up(first)
        if _PLAN_HEAD in first:
            return "plan", self._plan(first)
        if _REPLAN_TAIL in first:  # nothing is left to do but answer
            next_id = first.split(_REPLAN_TAIL, 1)[1].split()[0]
            return "replan", _json({"steps": [{"id": next_id, "description": ANSWER_DESCRIPTION,
                                               "tool": None, "depends_on": []}]})
        if _ARGUMENTS_HEAD in system + first:
            name = (system + first).split(_ARGUMENTS_HEAD, 1)[1].split()[0]
            return "arguments", _json(self._arguments(name))
        if system.startswith(_ANSWER_HEAD):
            return "answer", text(_answer(system))
        if system.startswith(_REFLECTION_HEADS):
            return "reflection", _json({"root_cause": "", "lesson": "", "should_retry": False,
                                        "retry_hint": ""})
        return "other", text("Done.")

    def _arguments(self, name: str) -> dict[str, Any]:
        """The ground-truth arguments of the turn's next call of ``name`` not yet asked for
        (the planned step lost them to a check)."""
        assert self.entry is not None and self.backends is not None
        served = self._served.setdefault(name, 0)
        calls = [call for call in map(self.backends.read_call, self.entry.ground_truth[self._now])
                 if call.name == name]
        self._served[name] = served + 1
        return calls[min(served, len(calls) - 1)].args if calls else {}

    def _turn(self, request: str) -> int:
        assert self.entry is not None, "play an entry first"
        wanted = request.strip()
        for number, turn in enumerate(self.entry.turns):
            if turn.strip() == wanted:
                return number
        raise LookupError(f"{self.entry.id} has no turn {wanted[:80]!r}")

    def _plan(self, prompt: str) -> FakeReply:
        request = prompt.split(_PLAN_HEAD, 1)[1].split("\n\nThe request is about")[0]
        number = self._turn(request)
        self._now, self._served = number, {}
        assert self.entry is not None and self.backends is not None
        return _json({"goal": request.strip(),
                      "steps": turn_steps(self.entry, self.backends, number, 1, self.results)})

    def _follow_up(self, prompt: str) -> FakeReply:
        after = prompt.split(_FOLLOW_HEAD, 1)[1]
        request, tail = after.split(_FOLLOW_TAIL, 1)
        first_id = int(tail.strip().lstrip("s").split()[0].rstrip("."))
        self._now, self._served = self._turn(request), {}
        assert self.entry is not None and self.backends is not None
        return _json({"steps": turn_steps(self.entry, self.backends, self._now, first_id,
                                          self.results)})


def _answer(system: str) -> str:
    """An answer that reports every result it was shown: the results the answer step's
    prompt lists."""
    if _RESULTS_HEAD not in system:
        return "Done."
    return "Done. The results:\n" + system.split(_RESULTS_HEAD, 1)[1].strip()


def _json(data: dict[str, Any]) -> FakeReply:
    return text(json.dumps(data, ensure_ascii=False))


class ReplayModel:
    """The responder as an in-process chat model (no HTTP), on ``profile``: what the test
    suite replays the 200 entries with, where the HTTP round trips and the SDK's request
    building would double the cost (the endpoint path is the command's)."""

    def __init__(self, responder: ReplayResponder, profile: ProviderProfile) -> None:
        self.responder = responder
        self.profile = profile

    def chat(self, messages: list[dict[str, Any]], *, role: str = "executor",
             tools: list[dict[str, Any]] | None = None,
             tool_choice: str | dict[str, Any] | None = None, json_mode: bool = False,
             json_schema: dict[str, Any] | None = None,
             on_text: Callable[[str], None] | None = None) -> ChatReply:
        """The responder's answer to the request, as the client would read it."""
        reply = self.responder({"messages": messages, "tools": tools or []})
        calls = [ToolCall(id=f"call_{number}", name=name,
                          arguments=arguments if isinstance(arguments, str)
                          else json.dumps(arguments))
                 for number, (name, arguments) in enumerate(reply.calls)]
        if on_text is not None and reply.content:
            on_text(reply.content)
        return ChatReply(content=reply.content, tool_calls=calls, usage=Usage(llm_calls=1))


@contextmanager
def replay_endpoint() -> Iterator[tuple[ReplayResponder, dict[str, str]]]:
    """The replay served on 127.0.0.1: its responder, and the environment that points
    PlanBoard at it."""
    responder = ReplayResponder()
    with FakeOpenAI(responder=responder) as server:
        yield responder, {"OPENAI_BASE_URL": server.base_url, "OPENAI_API_KEY": DEFAULT_KEY,
                          "OPENAI_MODEL": "gpt-4o-mini", "PLANBOARD_MAX_RETRIES": "0"}

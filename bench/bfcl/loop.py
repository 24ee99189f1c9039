"""The plain tool-calling loop: the peer a user would pick instead of PlanBoard, run the way
BFCL's own function-calling runs go.

Every function the entry offers is sent as a tool, the conversation keeps every turn, and
in a turn the model is asked again after each reply that makes calls, with the results as
tool messages, until a reply makes none (the turn ends) or the turn has spent
:data:`MAX_MODEL_CALLS` (BFCL's ``MAXIMUM_STEP_LIMIT``: the turn is cut and, as in BFCL,
the entry ends there and fails). A reply whose calls cannot be read (arguments that are not
JSON) ends the turn, as BFCL's decoding failure does. The request says ``tool_choice:
"auto"``, OpenAI's default when tools are sent, and the conversation opens with a system
message (:data:`SYSTEM`; Qwen2.5's own chat template adds one like it whenever tools are
given, as in BFCL's runs of Qwen), since llama-cpp-python's function-calling format writes
the tools into the system message and shows them to the model only with both.
Calls run on the backends unchecked, as BFCL executes them; a call of a function the entry
does not offer answers an error and changes nothing. The model is PlanBoard's client
(:class:`core.llm.client.OpenAIChatModel`) on the same endpoint and profile a PlanBoard run
uses, so a server's quirks (tool results written as plain turns for llama-cpp-python) are
handled alike.
"""

from __future__ import annotations

import json
import time
from typing import Any

from bench.bfcl.backend import EntryBackends, result_text
from bench.bfcl.data import Entry
from bench.bfcl.records import EntryRun, TurnRecord
from core.errors import LLMError
from core.llm.client import ChatModel, ChatReply

__all__ = ["MAX_MODEL_CALLS", "SYSTEM", "run_loop"]

MAX_MODEL_CALLS = 20
SYSTEM = "You are a helpful assistant."


def run_loop(entry: Entry, model: ChatModel) -> EntryRun:
    """Every turn of ``entry`` through the plain loop on ``model``."""
    backends = EntryBackends(entry)
    tools = [tool.openai_spec() for tool in backends.registry()]
    run = EntryRun(entry.id, "loop")
    messages: list[dict[str, Any]] = [{"role": "system", "content": SYSTEM}]
    for text in entry.turns:
        messages.append({"role": "user", "content": text})
        turn = TurnRecord()
        run.turns.append(turn)
        started = time.monotonic()
        try:
            finished = _turn(backends, model, messages, tools, turn)
        except LLMError as exc:  # e.g. the conversation outgrew the server's context
            run.error = f"model error: {exc}"
            finished = False
        turn.wall_s = round(time.monotonic() - started, 2)
        if not finished:
            run.error = run.error or f"cut after {MAX_MODEL_CALLS} model calls in a turn"
            break
    return run


def _turn(backends: EntryBackends, model: ChatModel, messages: list[dict[str, Any]],
          tools: list[dict[str, Any]], turn: TurnRecord) -> bool:
    """One turn's calls; False when it hit the call limit."""
    for _ in range(MAX_MODEL_CALLS):
        reply = model.chat(messages, role="executor", tools=tools, tool_choice="auto")
        turn.model_calls += reply.usage.llm_calls
        turn.prompt_tokens += reply.usage.prompt_tokens
        turn.completion_tokens += reply.usage.completion_tokens
        calls = _decoded(reply)
        messages.append(_assistant(reply, calls))
        if not calls:
            return True
        for call_id, name, args in calls:
            if name in backends.docs:
                result = result_text(backends.call(name, args))
            else:
                result = f"Error during execution: no function named {name!r}"
            messages.append({"role": "tool", "tool_call_id": call_id, "content": result})
        turn.steps.append(backends.take_calls())
    return False


def _decoded(reply: ChatReply) -> list[tuple[str, str, dict[str, Any]]]:
    """The reply's calls with their arguments read; none when any cannot be read."""
    calls = []
    for call in reply.tool_calls:
        try:
            args = json.loads(call.arguments or "{}")
        except ValueError:
            return []
        if not isinstance(args, dict):
            return []
        calls.append((call.id, call.name, args))
    return calls


def _assistant(reply: ChatReply, calls: list[tuple[str, str, dict[str, Any]]]
               ) -> dict[str, Any]:
    """The reply as the conversation keeps it: its calls only when they were made."""
    message: dict[str, Any] = {"role": "assistant", "content": reply.content or ""}
    if calls:
        message["tool_calls"] = [
            {"id": call_id, "type": "function",
             "function": {"name": name, "arguments": json.dumps(args)}}
            for call_id, name, args in calls]
    return message

"""Planner prompt sizes with 15 and with 100 tools, and what a one-slot prompt cache spares.

``python -m bench.prompts`` prints two tables (``--markdown``: as GitHub tables):

- the planner's prompt (system and user message) for one request per language, in the full
  and the compact style, over a catalogue of 15 tools (the default 12, the time and fetch
  servers) and of 100 (several MCP servers, :mod:`bench.catalogues`): how many tools it
  describes, its approximate tokens, and what describing every schema would cost;
- the planning calls of a session against the fake endpoint with the llama.cpp profile
  (compact style): a request whose first reply is unusable (the corrective retry), then
  another request; per call the prompt tokens the endpoint counted and the share a
  one-slot prefix cache, as llama.cpp's server keeps, would serve
  (:class:`core.llm.prompt_cache.PromptCache`).

Approximate tokens: about four Latin characters per token, one per Chinese character (a
guide, not any tokenizer's exact count); the fake endpoint counts a fourth of the request's
JSON characters.
"""

from __future__ import annotations

import argparse
import json
import re
from typing import Any

from bench.catalogues import catalogue_registry
from bench.tables import Table
from core.base.language import Language, detect_language
from core.llm.engine import Engine
from core.llm.prompt_cache import PromptCache
from core.llm.providers import PromptStyle
from core.planning.exchange import catalogue
from core.planning.shortlist import shortlist
from core.prompts.planning import planner_system_prompt, planner_user_prompt
from core.runs.session import request_language
from core.tools.registry import ToolRegistry

__all__ = ["REQUESTS", "SIZES", "approx_tokens", "cache_table", "main", "sizes", "table"]

_CJK = re.compile(r"[\u3400-\u9fff\uf900-\ufaff\u3000-\u303f\uff00-\uffef]")
SIZES = (15, 100)
REQUESTS: dict[Language, str] = {"en": "Where is the parcel for order 70412 right now?",
                                 "zh": "订单 70412 的快递现在到哪里了？"}
_OTHER_REQUEST = "Which of our services are degraded or down right now?"


def approx_tokens(text: str) -> int:
    """About four Latin characters per token, one per Chinese character or punctuation."""
    chinese = len(_CJK.findall(text))
    return chinese + (len(text) - chinese + 3) // 4


def prompt_tokens(request: str, registry: ToolRegistry, style: PromptStyle, *,
                  every_schema: bool = False) -> tuple[int, int]:
    """(tools described, approximate tokens) of the planner's prompt for ``request``;
    ``every_schema``: as if every tool were described."""
    listed = shortlist(request, registry, send_all_up_to=len(registry) if every_schema else 16)
    system = planner_system_prompt(catalogue(registry, listed.described),
                                   language=detect_language(request), style=style,
                                   every_name=listed.every_name)
    return len(listed.described), approx_tokens(system + planner_user_prompt(request))


def sizes() -> list[tuple[int, PromptStyle, Language, int, int, int]]:
    """(tools, style, language, tools described, ~tokens, ~tokens with every schema)."""
    rows = []
    for count in SIZES:
        registry = catalogue_registry(count)
        for style in ("full", "compact"):
            for language, request in REQUESTS.items():
                described, tokens = prompt_tokens(request, registry, style)
                _, whole = prompt_tokens(request, registry, style, every_schema=True)
                rows.append((count, style, language, described, tokens, whole))
    return rows


def table() -> Table:
    """The sizes as a table, each against the same style and language with 15 tools."""
    rows = sizes()
    base = {(style, language): tokens for count, style, language, _, tokens, _ in rows
            if count == SIZES[0]}
    result = Table("Planner prompt (system + request) with 15 and with 100 tools, per style "
                   "and request language", ["tools", "style", "lang", "described", "~tokens",
                                            "vs 15 tools", "every schema ~tokens"],
                   align="rllrrrr", timed=False)
    for count, style, language, described, tokens, whole in rows:
        result.rows.append([str(count), style, language, str(described), str(tokens),
                            f"{tokens / base[style, language]:.2f}", str(whole)])
    result.notes.append("Past 16 tools the prompt describes a shortlist (at most 8, chosen for "
                        "what the request needs) and names every tool in one line; a plan "
                        "may use any of them. ~tokens: four Latin characters or one Chinese "
                        "character each (a guide, not a tokenizer's count). Requests: "
                        + "; ".join(f"{lang} \"{text}\"" for lang, text in REQUESTS.items())
                        + ".")
    return result


# ---- the prompt cache, against the fake endpoint -----------------------------------------


def _plan_reply(request: str) -> str:
    return json.dumps({"goal": request, "steps": [
        {"id": "s1", "description": "Look it up", "tool": "query_order",
         "args": {"order_id": "70412"}, "depends_on": []},
        {"id": "s2", "description": "Answer", "tool": None, "depends_on": ["s1"]}]})


def _session(count: int) -> list[tuple[str, int, int]]:
    """(call, prompt tokens, cached tokens) of each planning call of one session."""
    from core.llm.client import OpenAIChatModel
    from core.planning.planner import plan_request
    from tests.support.fake_openai import FakeOpenAI

    cache = PromptCache()
    calls: list[tuple[str, int, int]] = []
    registry = catalogue_registry(count)
    with FakeOpenAI() as server:
        server.script("not a plan", _plan_reply(REQUESTS["en"]),
                      json.dumps({"goal": _OTHER_REQUEST, "steps": [
                          {"id": "s1", "description": "Check", "tool": "check_health",
                           "args": {"service": "all"}, "depends_on": []},
                          {"id": "s2", "description": "Answer", "tool": None,
                           "depends_on": ["s1"]}]}))
        with OpenAIChatModel(server.settings(provider="llamacpp")) as model:
            metered = _Metered(model, cache, calls)
            engine = Engine(registry=registry, model=metered)
            metered.labels = ["a request", "its corrective retry", "another request"]
            plan_request(REQUESTS["en"], engine, language=request_language(REQUESTS["en"]))
            plan_request(_OTHER_REQUEST, engine, language=request_language(_OTHER_REQUEST))
    return calls


class _Metered:
    """The model, with each call's cache use noted under the next of ``labels``."""

    def __init__(self, model: Any, cache: PromptCache, calls: list[tuple[str, int, int]]
                 ) -> None:
        self.model, self.cache, self.calls = model, cache, calls
        self.labels: list[str] = []
        self.profile = model.profile

    def chat(self, messages: list[dict[str, Any]], **kwargs: Any) -> Any:
        reply = self.model.chat(messages, **kwargs)
        used = self.cache.use(messages, kwargs.get("tools"), reply)
        label = self.labels.pop(0) if self.labels else "another call"
        self.calls.append((label, used.prompt_tokens, used.cached_tokens))
        return reply


def cache_table() -> Table:
    """Prompt tokens per planning call and the share a one-slot prefix cache serves."""
    result = Table("Planning calls of one session against the fake endpoint (llama.cpp "
                   "profile, compact style): prompt tokens and what a one-slot prefix cache "
                   "serves", ["tools", "call", "prompt tokens", "cached", "re-read",
                              "re-read share"], align="rlrrrr", timed=False)
    for count in SIZES:
        for call, prompt, cached in _session(count):
            result.rows.append([str(count), call, str(prompt), str(cached),
                                str(prompt - cached), f"{(prompt - cached) / prompt:.0%}"])
    result.notes.append(
        "The corrective retry is a follow-up turn (the reply, then the problems, after the "
        "same messages), so the cache serves all but the reply and the correction. Another "
        "request shares the instructions, and with 100 tools the line naming every tool and "
        "the described tools both requests need, before its own. Cached: estimated from the "
        "text each prompt shares with the one before (llama-cpp-python reports none; on the "
        "local model a corrective turn after a 1,529-token prompt re-read 560 tokens, its "
        "reply and the correction).")
    return result


def main(argv: list[str] | None = None) -> int:
    """Print the tables (``--markdown``: as GitHub tables)."""
    parser = argparse.ArgumentParser(prog="python -m bench.prompts", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--markdown", action="store_true",
                        help="print GitHub Markdown tables headed by what, on what and when")
    args = parser.parse_args(argv)
    for made in (table(), cache_table()):
        print(made.markdown("python -m bench.prompts") if args.markdown else made.text())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

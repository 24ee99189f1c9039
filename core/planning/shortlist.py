"""The planner's shortlist: which tools its prompt describes when the catalogue is large.

With a hundred tools (several MCP servers) a prompt that describes every schema costs a
small local model minutes before its first word, and buries the few tools a request needs.
Up to :data:`SEND_ALL_UP_TO` tools every one is described. Past that the prompt describes
the tools relevant to the request: those the packs' rules and readings name for it, those
the caller keeps (a plan's own tools, when it is replanned or extended), then the best
that match the request best (:func:`core.planning.tool_match.matches`: names, descriptions,
argument names, keywords and translated texts), each next one chosen for what the earlier
ones do not cover, up to :data:`SHORTLIST_SIZE` in all.

A plan may still use any other tool: the prompt names every tool in one line, a plan is
validated against the whole registry, and a step whose tool was not described leaves its
arguments to the forced call that runs it (which sends that tool's schema). That costs no
model call, where a "show me more tools" turn would cost one per request; so the number of
calls a plan spends stays what it was.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from core.base.language import Language
from core.base.messages import msg, render
from core.planning.offline import rule_drafts
from core.planning.packs import reading
from core.planning.tool_match import matches
from core.tools.registry import Tool, ToolRegistry

__all__ = ["SEND_ALL_UP_TO", "SHORTLIST_SIZE", "Shortlist", "shortlist"]

SEND_ALL_UP_TO = 16  # a catalogue this small is described whole (the default one has 12)
SHORTLIST_SIZE = 8  # tools described past that, besides the ones a caller keeps
# a tool scoring under a third of the best one shares a word or two with the request by
# chance ("events" of a calendar for "count the churn events")
_WEAKEST_SHARE = 3


@dataclass(frozen=True)
class Shortlist:
    """The tools a planning prompt describes (in the registry's order, so that two requests
    with the same tools get the same text) and, when that is not all of them, the name of
    every registered tool."""

    described: tuple[Tool, ...]
    every_name: tuple[str, ...] = ()

    @property
    def cut(self) -> bool:
        """Whether some tools are named but not described."""
        return len(self.every_name) > len(self.described)

    def note(self, language: Language) -> str | None:
        """What the plan's warnings say about the shortlist, in ``language`` (None: every
        tool was described)."""
        if not self.cut:
            return None
        return render(msg("plan.shortlist", shown=len(self.described),
                          total=len(self.every_name),
                          tools=", ".join(tool.name for tool in self.described)), language)


def shortlist(request: str, registry: ToolRegistry, *, keep: Iterable[str] = (),
              size: int = SHORTLIST_SIZE, send_all_up_to: int = SEND_ALL_UP_TO) -> Shortlist:
    """The tools to describe for ``request`` (see the module's docstring); ``keep`` names
    tools described whatever the request (unknown names are ignored)."""
    tools = list(registry)
    if len(tools) <= send_all_up_to:
        return Shortlist(described=tuple(tools))
    chosen = list(dict.fromkeys(name for name in keep if name in registry))
    for name in _suggested(request, registry):
        if len(chosen) >= size:
            break
        if name not in chosen:
            chosen.append(name)
    found = {tool.name: matches(tool, request) for tool in tools}
    chosen += _covering(found, chosen, size - len(chosen))
    picked = set(chosen)
    return Shortlist(described=tuple(tool for tool in tools if tool.name in picked),
                     every_name=tuple(tool.name for tool in tools))


def _covering(found: dict[str, dict[str, int]], chosen: list[str], room: int) -> list[str]:
    """Up to ``room`` more tools, each the one that matches most of what the tools chosen
    so far do not (then the most in all, then by name): a request about a file and the
    weather gets a tool for each before a second tool for files. A tool scoring under a
    third of the best is left out, and so is one that adds nothing new unless it scores
    at least half the best."""
    totals = {name: sum(words.values()) for name, words in found.items()}
    floor = max(1, max(totals.values(), default=0) // _WEAKEST_SHARE)
    covered = {word for name in chosen for word in found.get(name, {})}
    left = {name for name, total in totals.items() if total >= floor and name not in chosen}
    top = max(totals.values(), default=0)
    more: list[str] = []
    while left and len(more) < room:
        gains = {name: sum(w for word, w in found[name].items() if word not in covered)
                 for name in left}
        best = min(left, key=lambda name: (-gains[name], -totals[name], name))
        if gains[best] == 0 and 2 * totals[best] < top:
            break  # it matches only what is covered, and matches it weakly
        more.append(best)
        covered |= set(found[best])
        left.discard(best)
    return more


def _suggested(request: str, registry: ToolRegistry) -> list[str]:
    """The registered tools the packs name for ``request``: their rules' draft, then what
    their reading says a lookup finds (none without a pack)."""
    drafted = [step.tool for draft in rule_drafts(request, registry) for step in draft.steps
               if step.tool is not None]
    needed = [name for need in reading(request, registry).needs for name in need.tools]
    return [name for name in dict.fromkeys([*drafted, *needed]) if name in registry]

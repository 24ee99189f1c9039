"""Packs: what a toolset offers the engine beyond its tools, every part optional.

A toolset registers its tools (with their hints) and may add a :class:`Pack` beside them,
as ``demo.register`` does. A pack may offer a rule-based draft for requests in its domain
(the offline planner, and the reference that the rule-reading repairs compare a model's
plan with), offline answers composed from its tools' results, a reading of a text in its
domain (what it names, what it is about), an offline route and clarifying questions for
requests it knows, its own plan checks (the engine's shape, each naming its stages),
scenarios for the gallery, and a data reset. The engine asks the packs it finds and knows
nothing of what any of them holds; without a pack, the generic rules alone apply.

The registry (tools wing) keeps packs as opaque objects; :func:`packs` returns those that
are Packs, in the order their toolsets were loaded.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import date
from typing import Any

from pydantic import BaseModel, ConfigDict

from core.base.language import Language
from core.base.messages import Both
from core.plan.model import Plan
from core.planning.routes import Route
from core.tools.registry import ToolRegistry

__all__ = [
    "DataReset",
    "Need",
    "Pack",
    "Reading",
    "Scenario",
    "data_resets",
    "data_until",
    "packs",
    "reading",
    "scenarios",
]


class Scenario(BaseModel):
    """One example request for the gallery, with its title and text in English and Chinese."""

    model_config = ConfigDict(frozen=True)

    id: str
    title_en: str
    title_zh: str
    request_en: str
    request_zh: str

    def title(self, lang: Language) -> str:
        """The title in ``lang``."""
        return Both(en=self.title_en, zh=self.title_zh).word(lang)

    def request(self, lang: Language) -> str:
        """The request in ``lang``."""
        return Both(en=self.request_en, zh=self.request_zh).word(lang)


@dataclass(frozen=True)
class Need:
    """Something a text names that tools look up: ``what`` it is, in both languages, and
    the names of the tools that look it up (the engine keeps the registered read-only ones)."""

    what: Both
    tools: tuple[str, ...]


@dataclass(frozen=True)
class Reading:
    """What a pack reads in a text of its domain.

    ``things``: what it names, by kind (``{"order": ("88231",)}``); two texts naming the
    same thing are about the same part of a request. ``topics``: the pack's own families
    the text is about, specific enough for the same purpose. ``asks``: what it asks the
    pack's tools to do, in the pack's words (a route's reason names them). ``needs``: what
    it names that a lookup finds, so that a step about it takes a tool.
    """

    things: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    topics: frozenset[str] = frozenset()
    asks: tuple[str, ...] = ()
    needs: tuple[Need, ...] = ()

    def __or__(self, other: Reading) -> Reading:
        things = {kind: tuple(dict.fromkeys([*self.things.get(kind, ()), *values]))
                  for kind, values in other.things.items()}
        return Reading(things={**self.things, **things}, topics=self.topics | other.topics,
                       asks=tuple(dict.fromkeys([*self.asks, *other.asks])),
                       needs=(*self.needs, *other.needs))


@dataclass(frozen=True)
class DataReset:
    """A pack's data reset: ``run`` recreates its data and returns where it lives; ``what``
    names the data and ``restores`` says what a reset gives back, in both languages."""

    run: Callable[[], Any]
    what: Both
    restores: Both


@dataclass(frozen=True)
class Pack:
    """What one toolset offers beyond its tools; every part is optional.

    ``draft(request, registry, strict)``: the rules' plan for a request (strict: raise
    UnservableRequestError when no part maps to a tool). ``phased(request, registry,
    strict)``: the same as a plan with phases (core.plan.phases), for a request in stages.
    ``answer(plan)``: the answer
    composed from the results without a model. ``read(text)``: a :class:`Reading`.
    ``route(request, registry)``: an offline route for a request it knows, or None.
    ``questions(request, registry)``: what to ask before planning offline. ``checks``: its
    own plan checks, of the engine's shape (core.planning.checks.shape.Check; anything
    else is ignored), run after the engine's own. ``scenarios`` and ``reset``: for the
    gallery and the data reset. ``data_until``: the last day its tools' data holds (a
    relative period the data does not reach moves to the latest one it holds).
    """

    name: str
    draft: Callable[[str, ToolRegistry, bool], Plan] | None = None
    phased: Callable[[str, ToolRegistry, bool], Plan] | None = None
    answer: Callable[[Plan], str] | None = None
    read: Callable[[str], Reading] | None = None
    route: Callable[[str, ToolRegistry], Route | None] | None = None
    questions: Callable[[str, ToolRegistry], list[str]] | None = None
    checks: tuple[Any, ...] = ()
    scenarios: tuple[Scenario, ...] = ()
    reset: DataReset | None = None
    data_until: date | None = None


def packs(registry: ToolRegistry) -> list[Pack]:
    """The packs the registry's toolsets added, in the order they were loaded."""
    return [pack for pack in registry.packs() if isinstance(pack, Pack)]


def scenarios(registry: ToolRegistry) -> list[Scenario]:
    """Every pack's scenarios, for the gallery and ``python -m core scenarios``."""
    return [scenario for pack in packs(registry) for scenario in pack.scenarios]


def data_resets(registry: ToolRegistry) -> list[DataReset]:
    """The data resets the packs offer (none: nothing to reset)."""
    return [pack.reset for pack in packs(registry) if pack.reset is not None]


def data_until(registry: ToolRegistry) -> date | None:
    """The last day the packs' data holds (the latest they declare); None when none does."""
    days = [pack.data_until for pack in packs(registry) if pack.data_until is not None]
    return max(days, default=None)


def reading(text: str, registry: ToolRegistry) -> Reading:
    """What the packs read in ``text``, together (empty without a pack that reads)."""
    found = Reading()
    for pack in packs(registry):
        if pack.read is not None:
            found = found | pack.read(text)
    return found

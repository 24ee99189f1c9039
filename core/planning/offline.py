"""Planning and answering without a model: what the packs offer, or one clear error.

A pack able to draft (the demo's rule planner) plans the requests of its domain with no
model; its drafts are also the reference the rule-reading repairs compare a model's plan
with (:func:`rule_drafts`). With no such pack, offline planning says so plainly: the
offline planner plans only for the demo tools, so set a model or load the demo pack. An
answer without a model is the first pack's composition of the results, if a pack offers
one (the executor falls back to a plain summary).
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from core.base.messages import msg
from core.errors import UnservableRequestError
from core.plan.approval import has_side_effect
from core.plan.model import Plan, Step
from core.planning.packs import packs
from core.tools.registry import ToolRegistry

__all__ = ["offline_answer", "offline_plan", "rule_drafts", "tool_chain"]

logger = logging.getLogger(__name__)


Draft = Callable[[str, ToolRegistry, bool], Plan]


def _drafting(registry: ToolRegistry) -> list[Draft]:
    return [pack.draft for pack in packs(registry) if pack.draft is not None]


def offline_plan(request: str, registry: ToolRegistry, *, strict: bool = False) -> Plan:
    """The rules' plan for ``request``: the first drafting pack's (with ``strict``, the
    first that serves some part of it; UnservableRequestError when none does). Without a
    pack that drafts, UnservableRequestError says what to do instead."""
    drafting = _drafting(registry)
    if not drafting:
        raise UnservableRequestError(msg("offline.no_planner", variable="PLANBOARD_TOOLSETS"))
    refused: UnservableRequestError | None = None
    for draft in drafting:
        try:
            return draft(request, registry, strict)
        except UnservableRequestError as exc:
            refused = refused or exc
    assert refused is not None
    raise refused


def rule_drafts(request: str, registry: ToolRegistry) -> list[Plan]:
    """Every drafting pack's plan for ``request`` (none: no pack drafts), the reference the
    rule-reading repairs compare a model's plan with."""
    return [draft(request, registry, False) for draft in _drafting(registry)]


def offline_answer(plan: Plan, registry: ToolRegistry) -> str | None:
    """The answer composed from ``plan``'s results by the first pack that offers one."""
    for pack in packs(registry):
        if pack.answer is not None:
            return pack.answer(plan)
    return None


def tool_chain(request: str, registry: ToolRegistry, *, limit: int = 2) -> list[Step]:
    """The read-only tool steps the rules draft for ``request``, in plan order, each needing
    only the ones before it (a record, then what its result points to), at most ``limit``;
    empty when no rule fits the request."""
    chain: list[Step] = []
    for draft in rule_drafts(request, registry)[:1]:
        for step in draft.steps:
            if step.tool is None or has_side_effect(step, registry):
                continue
            if set(step.depends_on) <= {earlier.id for earlier in chain}:
                chain.append(step)
            if len(chain) == limit:
                break
    return chain

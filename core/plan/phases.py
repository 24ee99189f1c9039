"""Phases: the level above steps that makes a plan hierarchical (goal → phases → steps).

A plan may list ``phases`` (``{"id": "p1", "title", "goal", "depends_on", "done_when"}``);
each of its steps then names its ``phase``. The rules, checked by :func:`phase_problems`:

- phase ids look like ``p1`` and are unique; a phase has a title;
- phases form a DAG: a phase comes after the phases it depends on, and a cycle names
  exactly the phases on it;
- every step names a phase of the plan (and a step of a plan without phases names none);
- a step depends only on steps of its own phase or of a phase its phase comes after,
  directly or not, so that a phase can be run, replanned and folded as one piece.

A phase's status is derived from its steps (:func:`phase_status`): no step yet (a phase
that is expanded when it is reached) or none started is ``pending``; then ``running``
until every step finished; then ``failed`` if one failed, ``skipped`` if every one was
skipped, else ``completed``. A phase a new phase plan dropped (its goal could not be
reached; ``dropped`` says why) is ``skipped``, whatever its steps did.

The module knows steps only by the fields it reads (``id``, ``phase``, ``depends_on``,
``status``), so the plan model can import it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Literal, Protocol

from pydantic import BaseModel, Field

from core.base.messages import Message, msg
from core.plan.dag import ancestors, dependency_cycles

__all__ = [
    "PHASE_ID",
    "PHASE_STATUSES",
    "Phase",
    "PhaseStatus",
    "phase_ancestors",
    "phase_order",
    "phase_problems",
    "phase_status",
]

PHASE_ID = re.compile(r"^p\d+$")
PhaseStatus = Literal["pending", "running", "completed", "failed", "skipped"]
PHASE_STATUSES: tuple[PhaseStatus, ...] = ("pending", "running", "completed", "failed",
                                           "skipped")
_FINISHED = frozenset({"completed", "failed", "skipped"})


class _StepLike(Protocol):
    id: str
    phase: str | None
    depends_on: list[str]
    status: str


class Phase(BaseModel):
    """One stage of the work: what it is for and which phases come before it.

    ``done_when`` is the phase's own definition of done, checked when its steps have all
    completed (as a step's success criteria are).
    """

    id: str
    title: str
    goal: str = ""
    depends_on: list[str] = Field(default_factory=list)
    done_when: str | None = None
    dropped: str | None = None  # why a new phase plan gave it up (its goal was unreachable)

    def canonical(self) -> dict[str, Any]:
        """The phase as the plan's canonical JSON writes it (no empty extras)."""
        data: dict[str, Any] = {"id": self.id, "title": self.title, "goal": self.goal,
                                "depends_on": list(self.depends_on)}
        if self.done_when:
            data["done_when"] = self.done_when
        if self.dropped:
            data["dropped"] = self.dropped
        return data


def phase_status(steps: Iterable[_StepLike]) -> PhaseStatus:
    """The status of a phase whose steps are ``steps`` (see the module docstring)."""
    statuses = [step.status for step in steps]
    if not statuses or all(status == "pending" for status in statuses):
        return "pending"
    if not all(status in _FINISHED for status in statuses):
        return "running"
    if "failed" in statuses:
        return "failed"
    if all(status == "skipped" for status in statuses):
        return "skipped"
    return "completed"


def _graph(phases: Sequence[Phase]) -> dict[str, list[str]]:
    return {phase.id: list(phase.depends_on) for phase in phases}


def phase_ancestors(phases: Sequence[Phase], phase_id: str) -> set[str]:
    """The phases ``phase_id`` comes after, directly or not (itself excluded)."""
    graph = _graph(phases)
    return set(ancestors(graph, graph.get(phase_id, []))) - {phase_id}


def phase_order(phases: Sequence[Phase]) -> list[str]:
    """Phase ids so that each comes after the phases it depends on, else in list order: the
    earliest listed phase whose phases are all placed comes next (phases on a cycle come
    last, in list order)."""
    graph = _graph(phases)
    known = set(graph)
    placed: dict[str, None] = {}
    waiting = [pid for pid in graph]
    while waiting:
        ready = next((pid for pid in waiting
                      if all(dep in placed or dep not in known or dep == pid
                             for dep in graph[pid])), None)
        if ready is None:
            break
        placed[ready] = None
        waiting.remove(ready)
    return [*placed, *waiting]


def phase_problems(phases: Sequence[Phase], steps: Sequence[_StepLike]) -> list[Message]:
    """Every problem of the phases and of how the steps use them, each naming the culprits
    (empty when fine; a plan without phases only has to name none); a face words them."""
    if not phases:
        return [msg("phase.none_in_plan", step=step.id, phase=step.phase)
                for step in steps if step.phase]
    return [*_phase_list_problems(phases), *_step_phase_problems(phases, steps)]


def _phase_list_problems(phases: Sequence[Phase]) -> list[Message]:
    ids = {phase.id for phase in phases}
    problems: list[Message] = []
    seen: set[str] = set()
    for phase in phases:
        if phase.id in seen:
            problems.append(msg("phase.duplicate", phase=phase.id))
        seen.add(phase.id)
        if not PHASE_ID.match(phase.id):
            problems.append(msg("phase.bad_id", phase=repr(phase.id)))
        if not phase.title.strip():
            problems.append(msg("phase.no_title", phase=phase.id))
        for dep in phase.depends_on:
            if dep == phase.id:
                problems.append(msg("phase.after_itself", phase=phase.id))
            elif dep not in ids:
                problems.append(msg("phase.after_unknown", phase=phase.id, dep=dep))
    problems += [msg("phase.cycle", phases=", ".join(cycle))
                 for cycle in dependency_cycles(_graph(phases)) if len(cycle) > 1]
    return problems


def _step_phase_problems(phases: Sequence[Phase], steps: Sequence[_StepLike]
                         ) -> list[Message]:
    ids = ", ".join(phase.id for phase in phases)
    known = {phase.id for phase in phases}
    before = _reachable(phases)
    phase_of = {step.id: step.phase for step in steps}
    problems: list[Message] = []
    for step in steps:
        if not step.phase:
            problems.append(msg("phase.step_without", step=step.id, phases=ids))
            continue
        if step.phase not in known:
            problems.append(msg("phase.step_unknown", step=step.id, phase=step.phase,
                                phases=ids))
            continue
        for dep in step.depends_on:
            other = phase_of.get(dep)
            if other is None or other == step.phase or other not in known:
                continue  # unknown steps and phases are reported on their own
            if other not in before[step.phase]:
                problems.append(msg("phase.step_order", step=step.id, phase=step.phase,
                                    dep=dep, dep_phase=other))
    return problems


def _reachable(phases: Sequence[Phase]) -> Mapping[str, set[str]]:
    """For each phase, the phases it comes after (each computed once)."""
    graph = _graph(phases)
    return {phase.id: set(ancestors(graph, graph[phase.id])) - {phase.id}
            for phase in phases}

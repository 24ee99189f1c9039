"""The demo's rule planner in phases: a request in stages becomes a plan of phases.

The request is read as stages (core.planning.stages: "check …, diagnose …, then write …";
clauses when it names no stages); the rule planner drafts the steps of every stage in one
draft, so a later stage reads what an earlier one looked up. Each stage that adds steps is a
phase, titled with the stage's own words (so in the request's language); the answer step is
the last phase, titled with the stages that only it serves ("then write a report"), or with
its own description. A last stage that asks for the answer itself (a report, a summary,
recommendations) is that last phase, with whatever steps it added. A phase comes after the
phases whose steps its steps read, and the last phase after every other one.
"""

from __future__ import annotations

from core.plan.model import Phase, Plan
from core.planning.clauses import split_clauses
from core.planning.stages import split_stages
from core.tools.registry import ToolRegistry
from demo.offline.planner import SYNTHESIS_ONLY, draft_parts

__all__ = ["phased_plan"]

_TITLE_CHARS = 60


def phased_plan(request: str, registry: ToolRegistry, *, strict: bool = False) -> Plan:
    """The rules' plan for ``request`` in phases (see the module docstring); it always
    passes validate(). ``strict`` as :func:`demo.offline.planner.offline_plan`."""
    text = request if isinstance(request, str) else str(request or "")
    _, stages, _ = split_stages(text)
    if len(stages) < 2:
        stages = split_clauses(text)
    drafted = draft_parts(text, stages, registry, strict=strict)
    plan = drafted.plan
    answer = plan.steps[-1]
    phases: list[Phase] = []
    phase_of: dict[str, str] = {}
    answered_by: list[str] = []  # stages that added no step: the answer serves them
    closing: list[str] = []  # steps of a last stage that asks for the answer itself
    for position, (stage, ids) in enumerate(drafted.parts):
        ids = [step_id for step_id in ids if step_id != answer.id]
        if position == len(drafted.parts) - 1 and SYNTHESIS_ONLY.search(stage) and phases:
            answered_by.append(stage)
            closing = ids
            continue
        if not ids:
            answered_by.append(stage)
            continue
        phase_id = f"p{len(phases) + 1}"
        phases.append(Phase(id=phase_id, title=_title(stage), goal=stage))
        phase_of.update(dict.fromkeys(ids, phase_id))
    if not phases:
        phases.append(Phase(id="p1", title=_title(text), goal=text))
    last = f"p{len(phases) + 1}"
    for step in plan.steps[:-1]:
        phase_of.setdefault(step.id, last if step.id in closing else phases[-1].id)
    title = "; ".join(answered_by) or answer.description
    phases.append(Phase(id=last, title=_title(title), goal=title,
                        depends_on=[phase.id for phase in phases]))
    phase_of.update(dict.fromkeys([*closing, answer.id], last))
    for step in plan.steps:
        step.phase = phase_of[step.id]
    for phase in phases[:-1]:
        reads = {phase_of[dep] for step in plan.steps if step.phase == phase.id
                 for dep in step.depends_on}
        phase.depends_on = [p.id for p in phases if p.id in reads - {phase.id}]
    plan.phases = phases
    return plan


def _title(text: str) -> str:
    text = " ".join(text.split())
    text = text[:1].upper() + text[1:]
    return text if len(text) <= _TITLE_CHARS else text[: _TITLE_CHARS - 1] + "…"

"""A phase's own done-definition, checked once its steps have all completed.

A phase may say how to know it reached its goal (``done_when``). When every step of the
phase has finished and none failed, the phase is judged as a step's success criteria are
(core.execution.success_check: structurally where the results allow it, else by the model,
skipped offline), over the results of its steps. A miss is a failure of the phase: the
scheduler replans inside it, and checks it again once its new steps have run.
"""

from __future__ import annotations

from core.base.usage import Usage
from core.execution.success_check import SuccessVerdict, check_success
from core.llm.engine import Engine
from core.plan.model import Plan, Step

__all__ = ["check_key", "check_phase", "phases_to_check"]


def phases_to_check(plan: Plan, checked: set[str]) -> list[str]:
    """The completed phases with a done-definition whose current steps were not checked
    yet (a key of :func:`check_key` not in ``checked``), in phase order."""
    statuses = plan.phase_statuses()
    return [phase.id for phase in (plan.phase(pid) for pid in statuses)
            if phase.done_when and statuses[phase.id] == "completed"
            and check_key(plan, phase.id) not in checked]


def check_key(plan: Plan, phase_id: str) -> str:
    """What a check of phase ``phase_id`` judged: the phase and its steps (a replan that
    gives it new steps makes a new key, so the phase is checked again)."""
    return f"{phase_id}:{','.join(s.id for s in plan.steps_of(phase_id))}"


def check_phase(plan: Plan, phase_id: str, engine: Engine) -> tuple[SuccessVerdict, Usage]:
    """Judge phase ``phase_id``'s done-definition over the results of its steps."""
    phase = plan.phase(phase_id)
    results = {s.id: s.result for s in plan.steps_of(phase_id) if s.status == "completed"}
    judged = Step(id=phase.id, description=phase.goal or phase.title,
                  success_criteria=phase.done_when, result=results)
    judged.advance("running")  # the phase as one step that ran and completed
    judged.advance("completed")
    return check_success(judged, engine, language=plan.language)

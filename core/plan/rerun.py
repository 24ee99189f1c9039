"""Re-running a plan from one step: the next version, where that step (edited or not) and
every step that depends on it are fresh, and every other step keeps what it recorded.

The scheduler does not run finished steps again, so executing this version runs only the
fresh ones: a kept step calls no tool and asks no model, and a side effect it made is not
repeated. A fresh step is a new pending step with the old one's id and definition (plus the
person's edit), not the old step moved backwards: a step's status still moves one way.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict

from core.base.copies import copied, json_copy
from core.base.messages import msg
from core.errors import PlanError
from core.plan.dag import descendants
from core.plan.diff import DEFINITION_FIELDS
from core.plan.model import Plan, Step

__all__ = ["StepEdit", "rerun_from"]


class StepEdit(BaseModel):
    """What a person changes in the step a re-run starts from; a field left out stays as it
    was, and an empty condition clears the condition."""

    model_config = ConfigDict(extra="forbid")

    description: str | None = None
    tool: str | None = None
    args: dict[str, Any] | None = None
    condition: str | None = None

    def changes(self) -> dict[str, Any]:
        """The fields the person set, with their new values."""
        changed = self.model_dump(include=self.model_fields_set)
        if "condition" in changed:
            changed["condition"] = (changed["condition"] or "").strip() or None
        return changed


def rerun_from(plan: Plan, step_id: str, edit: StepEdit | None = None) -> Plan:
    """The version after ``plan`` that runs ``step_id`` (with ``edit``) and its descendants
    again; PlanError (one line, naming the steps there are) when the plan has no such step.

    Other steps are copied with their status, results and usage; the fresh steps start
    pending, with no result, no attempts and no usage of their own.
    """
    if step_id not in plan.ids():
        raise PlanError(msg("rerun.unknown_step", step=step_id, steps=", ".join(plan.ids())))
    fresh = set(descendants(plan.dependency_graph(), [step_id]))
    changes = (edit or StepEdit()).changes()
    steps = []
    for step in plan.steps:
        if step.id not in fresh:
            steps.append(copied(step))
            continue
        definition = {field: json_copy(getattr(step, field)) for field in DEFINITION_FIELDS}
        if step.id == step_id:
            definition |= changes
        steps.append(Step(id=step.id, **definition))
    return copied(plan, version=plan.version + 1, steps=steps)

"""What changed between two plan versions: added, removed and changed steps, as data and text.

In a plan with phases, a change of the phase plan shows too: phases added, phases removed,
and phases whose title, goal, order, done-definition or drop changed.
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import BaseModel, Field

from core.base.language import Language
from core.base.messages import msg, render
from core.plan.model import Phase, Plan, Step

__all__ = ["DEFINITION_FIELDS", "PHASE_FIELDS", "PhaseChange", "PlanDiff", "StepChange",
           "diff_plans", "format_diff"]

DEFINITION_FIELDS: tuple[str, ...] = (
    "description", "tool", "args", "depends_on", "success_criteria", "condition", "phase",
)
PHASE_FIELDS: tuple[str, ...] = ("title", "goal", "depends_on", "done_when", "dropped")
_PLAN_FIELDS: tuple[str, ...] = ("goal", "definition_of_done", "constraints")
_VALUE_CHARS = 80


class StepChange(BaseModel):
    """A step present in both versions whose definition differs in ``fields``."""

    old: Step
    new: Step
    fields: list[str]


class PhaseChange(BaseModel):
    """A phase present in both versions whose definition differs in ``fields``."""

    old: Phase
    new: Phase
    fields: list[str]


class PlanDiff(BaseModel):
    """Steps added, removed and changed from one version to the next (plus plan fields,
    and the phases of a plan with phases)."""

    old_version: int
    new_version: int
    added: list[Step] = Field(default_factory=list)
    removed: list[Step] = Field(default_factory=list)
    changed: list[StepChange] = Field(default_factory=list)
    plan_fields: list[str] = Field(default_factory=list)
    phases_added: list[Phase] = Field(default_factory=list)
    phases_removed: list[Phase] = Field(default_factory=list)
    phases_changed: list[PhaseChange] = Field(default_factory=list)

    @property
    def is_empty(self) -> bool:
        """True when nothing changed."""
        return not (self.added or self.removed or self.changed or self.plan_fields
                    or self.phase_level)

    @property
    def phase_level(self) -> bool:
        """True when the phase plan itself changed (a phase added, removed or changed)."""
        return bool(self.phases_added or self.phases_removed or self.phases_changed)

    def counts(self) -> dict[str, int]:
        """How many steps were added, removed and changed."""
        return {"added": len(self.added), "removed": len(self.removed),
                "changed": len(self.changed)}


def diff_plans(old: Plan, new: Plan, *, include_status: bool = False) -> PlanDiff:
    """Compare two versions step by step (by id); runtime fields are ignored unless asked."""
    fields = DEFINITION_FIELDS + (("status",) if include_status else ())
    old_steps = {s.id: s for s in old.steps}
    new_steps = {s.id: s for s in new.steps}
    changed = []
    for step in new.steps:
        before = old_steps.get(step.id)
        if before is None:
            continue
        differing = [f for f in fields if _norm(getattr(before, f)) != _norm(getattr(step, f))]
        if differing:
            changed.append(StepChange(old=before, new=step, fields=differing))
    old_phases = {p.id: p for p in old.phases}
    new_phases = {p.id: p for p in new.phases}
    phases_changed = []
    for phase in new.phases:
        before = old_phases.get(phase.id)
        if before is None:
            continue
        differing = [f for f in PHASE_FIELDS
                     if _norm(getattr(before, f)) != _norm(getattr(phase, f))]
        if differing:
            phases_changed.append(PhaseChange(old=before, new=phase, fields=differing))
    return PlanDiff(
        old_version=old.version, new_version=new.version,
        added=[s for s in new.steps if s.id not in old_steps],
        removed=[s for s in old.steps if s.id not in new_steps],
        changed=changed,
        plan_fields=[f for f in _PLAN_FIELDS if getattr(old, f) != getattr(new, f)],
        phases_added=[p for p in new.phases if p.id not in old_phases],
        phases_removed=[p for p in old.phases if p.id not in new_phases],
        phases_changed=phases_changed,
    )


def _norm(value: Any) -> Any:
    return value if value not in ("", [], {}) else None


def _show(value: Any) -> str:
    if value is None:
        return "—"
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
    text = " ".join(text.split())
    return text if len(text) <= _VALUE_CHARS else text[: _VALUE_CHARS - 1] + "…"


def _line(step: Step) -> str:
    tool = f" [{step.tool}]" if step.tool else ""
    return f"{step.id}{tool}: {step.description}"


def format_diff(diff: PlanDiff, lang: Language = "en") -> str:
    """The diff as text lines: ``+`` added, ``-`` removed, ``~`` changed (field: old → new)."""
    def word(code: str) -> str:
        return render(msg(f"diff.{code}"), lang)

    head = f"v{diff.old_version} → v{diff.new_version}"
    if diff.is_empty:
        return f"{head}: {word('none')}"
    lines = [head]
    lines += [f"+ {word('added')} {word('phase')} {p.id}: {p.title}" for p in diff.phases_added]
    lines += [f"- {word('removed')} {word('phase')} {p.id}: {p.title}"
              for p in diff.phases_removed]
    for phase_change in diff.phases_changed:
        parts = "; ".join(
            f"{f}: {_show(getattr(phase_change.old, f))} → {_show(getattr(phase_change.new, f))}"
            for f in phase_change.fields)
        lines.append(f"~ {word('changed')} {word('phase')} {phase_change.new.id}: {parts}")
    lines += [f"+ {word('added')} {_line(s)}" for s in diff.added]
    lines += [f"- {word('removed')} {_line(s)}" for s in diff.removed]
    for change in diff.changed:
        parts = "; ".join(
            f"{f}: {_show(getattr(change.old, f))} → {_show(getattr(change.new, f))}"
            for f in change.fields
        )
        lines.append(f"~ {word('changed')} {change.new.id}: {parts}")
    if diff.plan_fields:
        lines.append(f"~ {word('plan')}: {', '.join(diff.plan_fields)}")
    return "\n".join(lines)

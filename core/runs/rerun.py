"""Re-running a finished run from one step: which runs may, and the re-run a person approves.

A re-run is a new plan version of the same run (:func:`core.plan.rerun.rerun_from`), shown
with its diff, the steps it runs again and which of those have side effects, before anyone
approves it; :meth:`core.runs.runner.Runner.rerun` then continues the run's one recorded
history with it. Everything here is checked before anything is recorded: bad input changes
nothing in the store.
"""

from __future__ import annotations

from dataclasses import dataclass

from core.base.messages import Message, msg
from core.base.usage import Usage
from core.errors import PlanError, StoreError
from core.lifecycle import statuses_allowing
from core.plan.approval import has_side_effect
from core.plan.diff import PlanDiff, diff_plans
from core.plan.model import Plan, Step
from core.plan.rerun import StepEdit, rerun_from
from core.store.run_store import RunRecord
from core.tools.registry import ToolRegistry

__all__ = ["RERUNNABLE", "PreparedRerun", "prepare_rerun", "require_rerunnable"]

RERUNNABLE = statuses_allowing("rerun")


@dataclass(frozen=True)
class PreparedRerun:
    """A re-run ready for a person's approval: the new version, what changed, which steps
    run again (``again``, in plan order), those of them with a side effect, and what the
    steps it replaces had spent (kept in the run's usage)."""

    run_id: str
    step_id: str
    plan: Plan
    diff: PlanDiff
    again: list[str]
    side_effects: list[str]
    replaced: Usage

    @property
    def why(self) -> Message:
        """Why the version exists, as a code (a face words it in its reader's language)."""
        return msg("version.rerun", step=self.step_id)

    @property
    def reason(self) -> str:
        """Why the version exists, as its record keeps it."""
        return str(self.why)


def require_rerunnable(record: RunRecord) -> Plan:
    """The run's plan; StoreError (one line) unless the run has finished and has a plan."""
    if record.status not in RERUNNABLE:
        raise StoreError(msg("rerun.unfinished", run_id=record.run_id,
                             status=msg(f"run_status.{record.status}")))
    if record.plan is None:
        raise StoreError(msg("run.no_plan", run_id=record.run_id))
    return record.plan


def prepare_rerun(record: RunRecord, step_id: str, edit: StepEdit | None,
                  registry: ToolRegistry, *, can_infer: bool = True) -> PreparedRerun:
    """The re-run of ``record`` from ``step_id`` with ``edit``, checked against the tools:
    StoreError for a run that has not finished, PlanError for an unknown step, an edited
    step that leaves out an argument its tool requires, or any problem of the new version
    (``can_infer`` False: no model will fill in an argument a fresh step leaves out)."""
    old = require_rerunnable(record)
    plan = rerun_from(old, step_id, edit)
    if edit is not None and {"tool", "args"} & edit.model_fields_set:
        _require_arguments(plan.step(step_id), registry)
    plan.raise_if_invalid(registry, can_infer=can_infer)
    again = [step.id for step in plan.steps if step.status == "pending"]
    replaced = sum((Usage(llm_calls=s.llm_calls, prompt_tokens=s.prompt_tokens,
                          completion_tokens=s.completion_tokens)
                    for s in old.steps if s.id in again), Usage())
    return PreparedRerun(
        run_id=record.run_id, step_id=step_id, plan=plan, diff=diff_plans(old, plan),
        again=again, replaced=replaced,
        side_effects=[s.id for s in plan.steps if s.id in again and has_side_effect(s, registry)])


def _require_arguments(step: Step, registry: ToolRegistry) -> None:
    """A person who changes a tool step's tool or arguments gives every argument the tool
    requires: the plan's own check leaves a missing one to a model when the step runs, which
    would then guess what the person left out."""
    if step.tool is None or step.tool not in registry:
        return  # a reasoning step; an unknown tool is the plan check's to name
    missing = [name for name in registry.get(step.tool).required if name not in (step.args or {})]
    if missing:
        raise PlanError(msg("rerun.missing_args", step=step.id, tool=step.tool, missing=missing))

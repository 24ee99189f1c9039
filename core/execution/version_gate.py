"""The approved plan as a run's boundary: steps of a version nobody approved wait at a gate.

A person approves a plan before it runs (the dashboard's Run button, the CLI's prompt or
``--yes``); :attr:`RunControl.approved` keeps that version. When a later version (a replan,
a checkpoint, a retry, a follow-up) widens it (:func:`core.plan.approval.widening`), each
of its widening steps stops here when it becomes ready, and ``RunOptions.new_versions``
decides: ``ask`` (the run waits in ``waiting_confirmation`` until a person approves or
rejects the version), ``refuse`` (the step fails: it needs approval nobody can give), or
``approve`` (a person opted in beforehand). An approved version becomes the new boundary;
a rejected one ends its widening steps as skipped and the rest of it goes on. A question
to a person is plain state (:attr:`VersionGate.asking`): no thread waits for the answer.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from core.base.messages import msg
from core.execution.control import RunControl
from core.execution.executor import StepOutcome
from core.execution.options import RunOptions
from core.plan.approval import widening
from core.plan.model import Plan, Step
from core.tools.registry import ToolRegistry

__all__ = ["REJECTED", "VersionGate"]

logger = logging.getLogger(__name__)

REJECTED = str(msg("step.rejected"))  # the recorded error the run view reads
Finish = Callable[[Step, StepOutcome], None]


class VersionGate:
    """Holds, asks about, refuses or approves the steps of versions beyond the boundary."""

    def __init__(self, control: RunControl, options: RunOptions, registry: ToolRegistry,
                 emit: Callable[..., None], finish: Finish, confirmed: set[str]) -> None:
        self.control, self.options, self.registry = control, options, registry
        self.emit, self.finish = emit, finish
        self.confirmed = confirmed  # approving a version confirms its widening steps
        self.asking: set[int] = set()  # versions a person was asked about, undecided

    def held(self, plan: Plan) -> list[str]:
        """The steps of ``plan`` the approved plan does not cover (none before one is set)."""
        approved = self.control.approved
        return [] if approved is None else widening(approved, plan, self.registry)

    def review(self, plan: Plan) -> None:
        """Forget the questions that a decision, a pause or a newer version than ``plan``
        ended: the next :meth:`admit` acts on the decision, or asks again."""
        if self.control.is_paused():
            self.asking.clear()
        else:
            self.asking = {version for version in self.asking if version == plan.version
                           and self.control.version_decision(version) is None}

    def admit(self, plan: Plan, step: Step, held: list[str]) -> bool:
        """Decide about ready ``step`` (one of ``held``); True when something changed."""
        decision = self.control.version_decision(plan.version)
        if decision is None and self.options.new_versions == "approve":
            self._approve(plan, held, by="opt-in")
            return True
        if decision is True:
            self._approve(plan, held, by="person")
            return True
        if decision is False:
            self._reject(plan, held)
            return True
        if self.options.new_versions == "refuse":
            self._refuse(plan, step)
            return True
        if plan.version not in self.asking:
            approved = self.control.approved
            self.emit("waiting_confirmation", plan, None, version=plan.version,
                      approved_version=approved.version if approved else None, steps=held)
            self.asking.add(plan.version)
        return False

    def _approve(self, plan: Plan, held: list[str], *, by: str) -> None:
        self.control.set_approved(plan)
        self.confirmed.update(held)
        self.emit("confirmed", plan, None, version=plan.version, steps=held, by=by)

    def _reject(self, plan: Plan, held: list[str]) -> None:
        self.emit("rejected", plan, None, version=plan.version, steps=held)
        for step_id in held:
            step = plan.step(step_id)
            if step.status == "pending":
                self.finish(step, StepOutcome.skipped(msg("step.rejected")))

    def _refuse(self, plan: Plan, step: Step) -> None:
        approved = self.control.approved
        before = approved.version if approved else 1
        error = msg("step.needs_approval", version=plan.version, approved=before)
        self.finish(step, StepOutcome(status="failed", error=str(error), error_message=error,
                                      mode="direct"))

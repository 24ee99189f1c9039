"""Checkpoint policies: after a step, decide whether the pending steps still make sense.

Seed 003's checkpoint stage. ``rigid`` never replans; ``on_failure`` (the default) replans
only when a step fails; ``adaptive`` runs :func:`checkpoint` after completed steps (once for
the steps that finished together) and may change the pending steps (never the finished
ones); ``every_step`` replans there. :func:`apply_decision` turns a decision into a new
plan version.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import BaseModel, PrivateAttr, field_validator

from core.base.copies import copied
from core.base.messages import Message, msg, render
from core.base.usage import Usage
from core.errors import LLMError, PlanError, PlanValidationError
from core.llm.client import ChatModel
from core.llm.engine import Engine
from core.llm.providers import weak_model_checks
from core.plan.identifiers import is_identifier
from core.plan.model import STEP_NAME, Plan, Step
from core.plan.versions import renumber
from core.planning.change_note import reason_in_request_language
from core.planning.checks import Pipeline, check_context
from core.planning.choices import CheckpointPolicy
from core.planning.planner import Replanner, planned
from core.prompts.adaptive import (
    CHECKPOINT_SYSTEM,
    CHECKPOINT_USER,
    fold,
    language_name,
    parse_reply,
)
from core.tools.registry import ToolRegistry

__all__ = [
    "CheckpointAction",
    "CheckpointDecision",
    "CheckpointResult",
    "apply_decision",
    "checkpoint",
    "checkpoint_action",
    "checkpoint_offline",
    "run_checkpoint",
    "steps_from_dicts",
]

logger = logging.getLogger(__name__)

CheckpointAction = Literal["none", "checkpoint", "replan"]


class CheckpointDecision(BaseModel):
    """What a checkpoint concluded; ``updated_pending_steps`` replaces every pending step."""

    needs_replan: bool = False
    can_finish_early: bool = False
    reason: str = ""
    updated_pending_steps: list[dict[str, Any]] | None = None
    # the reason as a code when the rules decided (a model's reply never sets it)
    _message: Message | None = PrivateAttr(default=None)

    @classmethod
    def ruled(cls, message: Message, language: str, **fields: Any) -> CheckpointDecision:
        """A decision of the rules, its reason ``message`` worded in ``language``."""
        decision = cls(reason=render(message, language), **fields)
        decision._message = message
        return decision

    @property
    def message(self) -> Message | None:
        """The reason as a code (None for a model's own words)."""
        return self._message

    @field_validator("updated_pending_steps", mode="before")
    @classmethod
    def _only_objects(cls, value: Any) -> Any:
        if isinstance(value, list):
            return [item for item in value if isinstance(item, dict)]
        return value

    @property
    def changes_plan(self) -> bool:
        """True when applying the decision may produce a new plan version."""
        return self.can_finish_early or (
            self.needs_replan and self.updated_pending_steps is not None
        )



def checkpoint_action(policy: CheckpointPolicy, plan: Plan, step: Step) -> CheckpointAction:
    """What the scheduler does after ``step`` finished under ``policy``.

    "checkpoint" (adaptive) and "replan" (every_step) only after a completed step that is
    not the synthesis, while a non-synthesis step is still pending; else "none".
    """
    if policy not in {"adaptive", "every_step"} or step.status != "completed":
        return "none"
    synthesis = plan.synthesis_step()
    if synthesis is not None and step.id == synthesis.id:
        return "none"
    if not _pending_work(plan):
        return "none"
    return "checkpoint" if policy == "adaptive" else "replan"


def _pending_work(plan: Plan) -> list[Step]:
    synthesis = plan.synthesis_step()
    return [s for s in plan.steps if s.status == "pending"
            and (synthesis is None or s.id != synthesis.id)]


# ---- deciding ------------------------------------------------------------------------------


def checkpoint(plan: Plan, finished: Sequence[Step], engine: Engine
               ) -> tuple[CheckpointDecision, Usage]:
    """Judge the pending steps after the steps that just ``finished`` (those that ended
    together): one plain LLM call, or rules.

    No call is made when nothing but the synthesis is pending. PlanParseError (keeping the
    raw reply) when the model's answer is unusable.
    """
    if not _pending_work(plan):
        return CheckpointDecision.ruled(msg("checkpoint.nothing_left"), plan.language), Usage()
    if engine.model is None:
        return _offline_for_all(plan, finished, engine.registry), Usage()
    lang = plan.language
    completed = [s for s in plan.steps if s.status == "completed"]
    pending = [entry for entry in plan.canonical()["steps"]
               if plan.step(entry["id"]).status == "pending"]
    messages = [
        {"role": "system", "content": CHECKPOINT_SYSTEM.substitute(
            next_id=plan.next_step_id(), language=language_name(lang))},
        {"role": "user", "content": CHECKPOINT_USER.substitute(
            goal=plan.goal,
            completed="\n".join(f"- {s.id}: {s.description} → {fold(s.result, 600)}"
                                for s in completed) or "(none)",
            just_finished=_just_finished(finished),
            pending=json.dumps(pending, ensure_ascii=False, indent=1))},
    ]
    reply = engine.model.chat(messages, role="planner", tools=None, json_mode=True)
    decision = parse_reply(reply.content or "", CheckpointDecision, what="checkpoint")
    return decision, reply.usage


def _just_finished(finished: Sequence[Step]) -> str:
    if len(finished) == 1:
        [step] = finished
        return (f"Step that just finished: {step.id}: {step.description}\n"
                f"Its result:\n{fold(step.result)}")
    return "Steps that just finished together:\n" + "\n".join(
        f"- {s.id}: {s.description}\n  Its result: {fold(s.result)}" for s in finished)


def _offline_for_all(plan: Plan, finished: Sequence[Step], registry: ToolRegistry
                     ) -> CheckpointDecision:
    """The rules' first decision that changes the plan among the finished steps, else the
    last one's."""
    decisions = [checkpoint_offline(plan, step, registry) for step in finished]
    return next((d for d in decisions if d.changes_plan), decisions[-1])


def checkpoint_offline(plan: Plan, just_finished_step: Step, registry: ToolRegistry
                       ) -> CheckpointDecision:
    """Rules: a pending side effect is dropped when the step that just finished looked up
    its target (the side effect reads that step, or names the same identifier) and shows
    it already in one of the statuses its tool declares as under way
    (``ToolHints.in_progress``): the looked-up record's ``status``, or that of a record it
    holds. Doing it again would at best repeat what is under way."""
    lang = plan.language
    result = just_finished_step.result if isinstance(just_finished_step.result, dict) else {}
    doomed: list[Step] = []
    shown: dict[str, Any] = {}
    for step in _pending_work(plan):
        tool = registry.get(step.tool) if step.tool in registry else None
        if tool is None or not tool.side_effect or not tool.hints.in_progress:
            continue
        target = _target(step, just_finished_step, result)
        record = _under_way(result, tool.hints.in_progress)
        if target is not None and record is not None:
            doomed.append(step)
            shown = shown or {"target": target, "record": record, "tool": tool.name}
    if not doomed:
        return CheckpointDecision.ruled(msg("checkpoint.unchanged"), lang)
    record = shown["record"]
    detail = ", ".join([*(str(value) for key, value in record.items()
                          if is_identifier(key) and value), str(record["status"])])
    reason = msg("checkpoint.under_way", source=just_finished_step.id, target=shown["target"],
                 detail=detail, tool=shown["tool"], steps=", ".join(s.id for s in doomed))
    dropped = {s.id for s in doomed}
    keep = [entry for entry in plan.canonical()["steps"]
            if plan.step(entry["id"]).status == "pending" and entry["id"] not in dropped]
    return CheckpointDecision.ruled(reason, lang, needs_replan=True,
                                    updated_pending_steps=keep)


def _target(step: Step, looked_up: Step, result: dict[str, Any]) -> str | None:
    """How ``looked_up``'s result names ``step``'s target ("ticket_id T-7"), or None when
    it does not look that target up."""
    for name, value in (step.args or {}).items():
        if is_identifier(name) and value is not None and str(result.get(name)) == str(value):
            return f"{name} {value}"
    if looked_up.id in step.depends_on:
        named = next(((k, v) for k, v in result.items() if is_identifier(k) and v), None)
        return f"{named[0]} {named[1]}" if named else looked_up.id
    return None


def _under_way(result: dict[str, Any], statuses: tuple[str, ...]) -> dict[str, Any] | None:
    """The record in ``result`` (one it holds first, then itself) whose ``status`` is one of
    ``statuses``, or None."""
    held = [value for value in result.values() if isinstance(value, dict)]
    return next((record for record in [*held, result]
                 if str(record.get("status")) in statuses), None)


@dataclass
class CheckpointResult:
    """What :func:`run_checkpoint` did: the new version (None: keep going), why (and why
    as a code, when PlanBoard worded it), the cost."""

    action: CheckpointAction
    plan: Plan | None = None
    reason: str = ""
    message: Message | None = None
    usage: Usage = field(default_factory=Usage)
    decision: CheckpointDecision | None = None
    warnings: list[str] = field(default_factory=list)


def run_checkpoint(policy: CheckpointPolicy, plan: Plan, finished: Sequence[Step],
                   engine: Engine, *, replanner: Replanner | None = None) -> CheckpointResult:
    """The whole hook for the scheduler after the steps that ``finished`` together (one
    checkpoint for them all); never raises for a bad model answer.

    adaptive: :func:`checkpoint` + :func:`apply_decision` (or ``replanner`` when the
    checkpoint asks for a replan without giving steps); every_step: ``replanner(plan,
    reason, engine)`` (e.g. core.planning.planner.replan); otherwise nothing. An unusable answer,
    an invalid new plan or an LLM error leaves the plan as it is, noted in ``warnings``.
    """
    action = checkpoint_action(policy, plan, finished[-1])
    result = CheckpointResult(action=action)
    if action == "none":
        return result
    lang = plan.language
    ids = ", ".join(s.id for s in finished)
    try:
        if action == "replan":
            if replanner is None or engine.model is None:
                return result  # without a model, every_step behaves like on_failure
            result.message = msg("checkpoint.every_step", steps=ids)
            result.reason = render(result.message, lang)
            _replan(replanner, plan, result.reason, engine, result)
            return result
        decision, result.usage = checkpoint(plan, finished, engine)
        result.decision, result.reason = decision, decision.reason
        result.message = decision.message
        result.plan = apply_decision(plan, decision, engine.registry, model=engine.model)
        if decision.needs_replan and decision.updated_pending_steps is None and replanner:
            _replan(replanner, plan, decision.reason or result.reason, engine, result)
        if result.message is None and weak_model_checks(engine.model):
            # a model's reason in another language is told again as what changed; the
            # rules' own reason is PlanBoard's words already, whatever it quotes
            result.reason = reason_in_request_language(result.reason, plan, result.plan)
    except (PlanError, LLMError) as exc:  # a checkpoint is optional: never end the run
        logger.warning("checkpoint after %s changed nothing: %s", ids, exc)
        result.plan = None
        result.warnings.append(render(msg("run.checkpoint_failed", after=ids, error=exc), lang))
    return result


def _replan(replanner: Replanner, plan: Plan, reason: str, engine: Engine,
            result: CheckpointResult) -> None:
    """Put the replanner's new version into ``result`` and add what it cost, even when
    it made none (then PlanError)."""
    made = replanner(plan, reason, engine)
    if not isinstance(made, Plan):
        result.usage = result.usage + made.usage
    result.plan = planned(made)[0]


# ---- applying ------------------------------------------------------------------------------


def apply_decision(plan: Plan, decision: CheckpointDecision, registry: ToolRegistry, *,
                   model: ChatModel | None = None) -> Plan | None:
    """A NEW plan (version + 1) in which only pending steps changed, or None if none did.

    Finished and running steps are copied untouched. A listed step keeps its id when it
    names a pending step; other new steps get fresh ids from ``plan.next_step_id()``.
    Steps that read a dropped step are dropped too; the synthesis step is kept last. The
    checks of the "checkpoint" stage run on it (core.planning.checks.Pipeline): its
    repairs, then its problems, which refuse the decision (what it may not drop), then its
    final repairs; those for weak models as the profile of ``model`` (the one that
    decided) says. Raises PlanValidationError when the new steps do not form a valid plan
    or a check refuses them.
    """
    if not decision.changes_plan:
        return None
    synthesis = plan.synthesis_step()
    fixed = [copied(s) for s in plan.steps if s.status != "pending"]
    pending_ids = {s.id for s in plan.steps if s.status == "pending"}
    if decision.can_finish_early:
        new_pending = [copied(s) for s in plan.steps
                       if synthesis is not None and s.id == synthesis.id
                       and s.status == "pending"]
    else:
        finished = {s.id for s in fixed}
        items = [item for item in decision.updated_pending_steps or []
                 if str(item.get("id")) not in finished]  # finished steps never change
        new_pending = steps_from_dicts(items, plan, reuse=pending_ids)
    new_pending = _keep_synthesis(plan, fixed, new_pending)
    steps = _prune([*fixed, *new_pending], {s.id for s in fixed})
    candidate = copied(plan, steps=steps, version=plan.version + 1)
    checks = Pipeline(check_context(plan.goal, registry, "checkpoint", language=plan.language,
                                    before=plan, model=model))
    checks.accept(candidate)
    if _same_steps(plan, candidate):
        return None
    refused = checks.review(candidate)
    if refused:
        raise PlanValidationError(refused)
    return checks.settle(candidate)


def steps_from_dicts(items: list[dict[str, Any]], plan: Plan, *, reuse: set[str] = frozenset()
                     ) -> list[Step]:
    """Steps read from loose dicts (canonical or seed keys), renumbered for ``plan``.

    An id in ``reuse`` is kept; every other id becomes a fresh one after the plan's ids.
    References to renamed ids (depends_on, {{sN...}}, conditions) follow the renaming.
    """
    next_number = int(plan.next_step_id()[1:])
    mapping: dict[str, str] = {}
    raw_steps: list[Step] = []
    for position, item in enumerate(items):
        raw_id = str(item.get("id") or item.get("step_id") or f"new{position}")
        if raw_id in reuse and raw_id not in mapping.values():
            mapping[raw_id] = raw_id
        else:
            mapping[raw_id] = f"s{next_number}"
            next_number += 1
        tool = item.get("tool")
        if tool in (None, "", "null", "none") and item.get("tools_needed"):
            tool = item["tools_needed"][0] if isinstance(item["tools_needed"], list) else None
        depends = item.get("depends_on") or []
        raw_steps.append(Step(
            id=raw_id, description=str(item.get("description") or raw_id),
            tool=str(tool) if tool not in (None, "", "null", "none") else None,
            args=item.get("args") if isinstance(item.get("args"), dict) else None,
            depends_on=[str(d) for d in depends] if isinstance(depends, list) else [],
            success_criteria=item.get("success_criteria") or None,
            condition=item.get("condition") or None,
            phase=str(item["phase"]) if item.get("phase") else None,
        ))
    return _in_phases(plan, [renumber(step, mapping) for step in raw_steps])


def _in_phases(plan: Plan, steps: list[Step]) -> list[Step]:
    """In a plan with phases, a step the reply gave no phase keeps the one of the step it
    replaces (same id), else takes that of its first dependency, else the phase of the
    plan's last finished step (the phase under way)."""
    if not plan.phases:
        return steps
    phase_of = {s.id: s.phase for s in plan.steps}
    under_way = next((s.phase for s in reversed(plan.steps) if s.status != "pending"), None)
    for step in steps:
        if not step.phase:
            step.phase = phase_of.get(step.id) or next(
                (phase_of[d] for d in step.depends_on if phase_of.get(d)), under_way)
            phase_of[step.id] = step.phase
    return steps


def _keep_synthesis(plan: Plan, fixed: list[Step], new_pending: list[Step]) -> list[Step]:
    synthesis = plan.synthesis_step()
    if synthesis is None or synthesis.status != "pending":
        return new_pending
    if new_pending and new_pending[-1].tool is None:
        return new_pending
    kept = [s for s in new_pending if s.id != synthesis.id]
    final = copied(synthesis)
    final.depends_on = list(dict.fromkeys(
        [*final.depends_on, *(s.id for s in kept)]))
    return [*kept, final]


def _prune(steps: list[Step], fixed_ids: set[str]) -> list[Step]:
    """Drop pending steps that read a step which is gone; unlink plain dependencies."""
    changed = True
    while changed:
        changed = False
        present = {s.id for s in steps}
        for step in list(steps):
            if step.id in fixed_ids:
                continue
            reads = _reads(step)
            if reads - present:
                steps.remove(step)
                changed = True
            else:
                step.depends_on = [d for d in step.depends_on if d in present]
    return steps


def _reads(step: Step) -> set[str]:
    from core.plan.model import references_in

    reads = set(references_in(step.args or {}))
    if step.condition:
        reads |= set(STEP_NAME.findall(step.condition))
    return reads


def _same_steps(old: Plan, new: Plan) -> bool:
    def by_id(plan: Plan) -> dict[str, Any]:
        return {entry["id"]: entry for entry in plan.canonical()["steps"]}

    return by_id(old) == by_id(new)

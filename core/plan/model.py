"""Plan and Step models: the canonical plan JSON, validation, and operations on the DAG."""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import Callable
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, Field, model_validator

from core.base.expressions import ExpressionError, condition_step_refs, is_expression_condition
from core.base.language import Language, detect_language
from core.base.messages import Message, msg
from core.base.step_id import STEP_ID, step_number
from core.base.text import preview
from core.errors import PlanValidationError, ToolArgumentError, UnknownToolError
from core.lifecycle import (
    CRASH_RESET,
    FINISHED_STEP_STATUSES,
    StepReset,
    StepStatus,
    step_may_become,
)
from core.plan.dag import critical_path as longest_chain
from core.plan.dag import dependency_cycles, topological_ids
from core.plan.phases import Phase, PhaseStatus, phase_order, phase_problems, phase_status

if TYPE_CHECKING:
    from core.tools.registry import ToolRegistry

__all__ = [
    "FINISHED",
    "REFERENCE",
    "STATUS_ICONS",
    "STEP_ID",
    "STEP_NAME",
    "WHOLE_REFERENCE",
    "CheckNote",
    "Phase",
    "Plan",
    "Step",
    "StepStatus",
    "references_in",
    "step_number",
    "substitute_references",
]

FINISHED: frozenset[str] = FINISHED_STEP_STATUSES
STATUS_ICONS = {
    "completed": "✓", "running": "▶", "pending": "○", "failed": "✗", "skipped": "⏭",
}
REFERENCE = re.compile(r"\{\{\s*(s\d+)((?:\.[\w\-]+|\[\d+\])*)\s*\}\}")
# a value that is one reference and nothing else (it passes the referenced value on as is)
WHOLE_REFERENCE = re.compile(r"^\s*" + REFERENCE.pattern + r"\s*$")
STEP_NAME = re.compile(r"(?<![\w.'\"])(s\d+)\b")  # as a condition names it: s2.status
_PREVIEW_CHARS = 80


def now() -> datetime:
    """The current time in UTC (one place, so that stored times agree)."""
    return datetime.now(UTC)


def _field_references(value: Any) -> set[tuple[str, str]]:
    """``(step id, path)`` of each ``{{sN.field...}}`` reference inside an argument value
    that reads into the step's result (``{{sN}}`` alone reads it whole)."""
    if isinstance(value, str):
        return {(m.group(1), m.group(2)) for m in REFERENCE.finditer(value) if m.group(2)}
    if isinstance(value, dict):
        value = list(value.values())
    if isinstance(value, list):
        return set().union(*(_field_references(v) for v in value)) if value else set()
    return set()


def references_in(value: Any) -> set[str]:
    """Step ids referenced as ``{{sN...}}`` anywhere inside an argument value."""
    if isinstance(value, str):
        return {match.group(1) for match in REFERENCE.finditer(value)}
    if isinstance(value, dict):
        return set().union(*(references_in(v) for v in value.values())) if value else set()
    if isinstance(value, list):
        return set().union(*(references_in(v) for v in value)) if value else set()
    return set()


def substitute_references(value: Any, replace: Callable[[re.Match[str]], str]) -> Any:
    """An argument value with every ``{{sN...}}`` reference inside it (strings, lists and
    dicts, recursively) replaced by ``replace(match)``."""
    if isinstance(value, str):
        return REFERENCE.sub(replace, value)
    if isinstance(value, dict):
        return {key: substitute_references(item, replace) for key, item in value.items()}
    if isinstance(value, list):
        return [substitute_references(item, replace) for item in value]
    return value


class Step(BaseModel):
    """One action of a plan: a tool call, a reasoning step, or the final synthesis."""

    id: str
    description: str
    tool: str | None = None
    args: dict[str, Any] | None = None
    depends_on: list[str] = Field(default_factory=list)
    success_criteria: str | None = None
    condition: str | None = None
    phase: str | None = None  # the id of the phase it belongs to, in a plan with phases
    status: StepStatus = "pending"
    resolved_args: dict[str, Any] | None = None
    result: Any = None
    error: str | None = None
    error_message: Message | None = None  # the error as a code, to word it in any language
    attempts: int = 0
    llm_calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    started_at: datetime | None = None
    finished_at: datetime | None = None

    def advance(self, status: StepStatus, *, reason: StepReset | None = None) -> None:
        """Change the status as :mod:`core.lifecycle` allows (the only code that changes it).

        Statuses move forward only (ValueError otherwise); staying put changes nothing.
        The one way back is named: ``advance("pending", reason="crash reset")`` puts a
        step whose process died while it was running back to pending.
        """
        if status == self.status and reason is None:
            return
        if not step_may_become(self.status, status, reason):
            how = f" ({reason})" if reason else ""
            raise ValueError(f"{self.id} cannot go from {self.status} to {status}{how}")
        self.status = status
        if reason == CRASH_RESET:
            self.started_at = None
            self.error = None
            self.error_message = None
        elif status == "running":
            self.started_at = now()
            self.attempts += 1
        elif status in FINISHED:
            self.finished_at = now()

    @property
    def duration_s(self) -> float | None:
        """Seconds between start and finish, when both are known."""
        if self.started_at and self.finished_at:
            return (self.finished_at - self.started_at).total_seconds()
        return None

    def add_usage(self, llm_calls: int, prompt_tokens: int, completion_tokens: int) -> None:
        """Add the usage of one or more LLM calls made for this step."""
        self.llm_calls += llm_calls
        self.prompt_tokens += prompt_tokens
        self.completion_tokens += completion_tokens


class CheckNote(BaseModel):
    """What one plan check (core.planning.checks) did to a version of the plan, so that every
    change and every warning a check made can be traced to it: it ``changed`` the plan, left
    a warning (``warned``), or sent a model's reply back (``sent_back``, which cost a call).
    ``detail`` says what, in the plan's language: the check's own note, else the fields it
    changed (``s4 depends_on: s1 → s1, s3``)."""

    check: str
    stage: str
    action: Literal["changed", "warned", "sent_back"]
    detail: str
    step: str | None = None
    version: int = 1


class Plan(BaseModel):
    """A goal, how to know it is done, and the steps that reach it.

    With ``phases`` the plan is hierarchical (core.plan.phases): each step names its
    phase, and a phase without steps yet is expanded into steps when it is reached.
    ``phases_version`` counts the versions of the phase plan: a new version of the steps
    (an expansion, a replan inside a phase) keeps it; a change of the phases bumps it.
    """

    id: str = Field(default_factory=lambda: uuid.uuid4().hex[:12])
    goal: str
    definition_of_done: str = ""
    constraints: list[str] = Field(default_factory=list)
    version: int = 1
    phases: list[Phase] = Field(default_factory=list)
    phases_version: int = 1
    steps: list[Step] = Field(default_factory=list)
    warnings: list[str] = Field(default_factory=list)
    check_notes: list[CheckNote] = Field(default_factory=list)  # what each check did to it
    language: Language  # the request's: what the plan's words and the run's answer are in

    @model_validator(mode="before")
    @classmethod
    def _decide_language(cls, data: Any) -> Any:
        """A plan given no language (built from a bare goal, or written before plans held
        one) has it decided here, once, from its goal; every later version keeps it."""
        if isinstance(data, dict) and not data.get("language"):
            data = {**data, "language": detect_language(str(data.get("goal") or ""))}
        return data

    # ---- lookup -------------------------------------------------------------------------

    def step(self, step_id: str) -> Step:
        """The step with ``step_id``; KeyError names the ids that exist."""
        for candidate in self.steps:
            if candidate.id == step_id:
                return candidate
        raise KeyError(f"no step {step_id!r}; steps are {', '.join(self.ids())}")

    def ids(self) -> list[str]:
        """Step ids in plan order."""
        return [s.id for s in self.steps]

    def next_step_id(self) -> str:
        """A new id after every id used so far (ids are never reused)."""
        numbers = [n for s in self.steps if (n := step_number(s.id)) is not None]
        return f"s{max(numbers, default=0) + 1}"

    def synthesis_step(self) -> Step | None:
        """The last tool-less step on which no other step depends, if the plan has one.

        A plan with a phase still to expand has none yet: its answer comes with its last
        phase.
        """
        if not self.steps or self.steps[-1].tool is not None:
            return None
        last = self.steps[-1]
        if any(last.id in s.depends_on for s in self.steps):
            return None
        if self.phases and self.unexpanded_phases():
            return None
        return last

    def depended_on(self, besides: Step | None = None) -> set[str]:
        """The ids of the steps some step other than ``besides`` depends on (with
        ``besides`` the answer step: the results another step reads, not only the answer)."""
        return {dep for step in self.steps if step is not besides for dep in step.depends_on}

    def results(self) -> dict[str, Any]:
        """Results of the completed steps by id (what conditions and references read)."""
        return {s.id: s.result for s in self.steps if s.status == "completed"}

    # ---- phases -------------------------------------------------------------------------

    def phase(self, phase_id: str) -> Phase:
        """The phase with ``phase_id``; KeyError names the phases that exist."""
        for candidate in self.phases:
            if candidate.id == phase_id:
                return candidate
        raise KeyError(f"no phase {phase_id!r}; phases are "
                       f"{', '.join(p.id for p in self.phases) or 'none'}")

    def steps_of(self, phase_id: str) -> list[Step]:
        """The steps of phase ``phase_id``, in plan order."""
        return [s for s in self.steps if s.phase == phase_id]

    def phase_status(self, phase_id: str) -> PhaseStatus:
        """The status of phase ``phase_id``, derived from its steps (core.plan.phases)."""
        if self.phase(phase_id).dropped:
            return "skipped"
        return phase_status(self.steps_of(phase_id))

    def phase_statuses(self) -> dict[str, PhaseStatus]:
        """Every phase's status, in phase order (one pass over the steps)."""
        grouped: dict[str, list[Step]] = {p.id: [] for p in self.phases}
        for step in self.steps:
            if step.phase in grouped:
                grouped[step.phase].append(step)
        dropped = {p.id for p in self.phases if p.dropped}
        return {phase_id: "skipped" if phase_id in dropped else phase_status(grouped[phase_id])
                for phase_id in self.phase_ids()}

    def phase_ids(self) -> list[str]:
        """Phase ids so that each comes after the phases it depends on (list order breaks
        ties)."""
        return phase_order(self.phases)

    def unexpanded_phases(self) -> list[Phase]:
        """The phases that have no steps yet (and were not dropped), in phase order."""
        expanded = {s.phase for s in self.steps}
        by_id = {p.id: p for p in self.phases}
        return [by_id[pid] for pid in self.phase_ids()
                if pid not in expanded and not by_id[pid].dropped]

    # ---- DAG ----------------------------------------------------------------------------

    def dependency_graph(self) -> dict[str, list[str]]:
        """``{step id: ids it depends on}`` in plan order."""
        return {s.id: list(s.depends_on) for s in self.steps}

    def topological_order(self) -> list[Step]:
        """Steps ordered so that each comes after its dependencies; plan order breaks ties.

        Raises PlanValidationError naming exactly the steps of each dependency cycle.
        """
        order = topological_ids(self.dependency_graph())
        if len(order) < len(self.steps):
            raise PlanValidationError([_cycle_problem(cycle) for cycle in self.cycles()])
        by_id = {s.id: s for s in self.steps}
        return [by_id[sid] for sid in order]

    def cycles(self) -> list[list[str]]:
        """Each dependency cycle as the ids on it, in plan order (a self-loop counts)."""
        return dependency_cycles(self.dependency_graph())

    def critical_path(self) -> list[str]:
        """The longest chain of dependent steps, as ids from first to last."""
        self.topological_order()  # a cycle has no longest chain: say which steps form it
        return longest_chain(self.dependency_graph())

    def critical_path_length(self) -> int:
        """Number of steps on the longest dependency chain (the least number of rounds)."""
        return len(self.critical_path())

    def progress(self) -> float:
        """Fraction of steps that have finished (completed, failed or skipped)."""
        if not self.steps:
            return 0.0
        return sum(s.status in FINISHED for s in self.steps) / len(self.steps)

    def is_finished(self) -> bool:
        """True when every step has finished."""
        return all(s.status in FINISHED for s in self.steps)

    # ---- validation ---------------------------------------------------------------------

    def validate(  # type: ignore[override]
        self, registry: ToolRegistry | None = None, *, can_infer: bool = True,
    ) -> list[Message]:
        """Every problem of the plan as a message that names the step (empty when fine);
        a face words them in its language, a model reads them in English (``str``).

        ``can_infer`` False (no model configured) makes a pending tool step that leaves a
        required argument out a problem: nothing could fill it in at run time.
        """
        if not self.steps and not self.phases:
            return [msg("plan.no_steps")]
        problems: list[Message] = []
        ids = set(self.ids())
        text_ids = self.text_results()
        texts = {step.id: "plan.field_of_text" if step.tool is None
                 else "plan.field_of_text_result" for step in self.steps if step.id in text_ids}
        seen: set[str] = set()
        for step in self.steps:
            if step.id in seen:
                problems.append(msg("plan.duplicate_id", step=step.id))
            seen.add(step.id)
            if step_number(step.id) is None:
                problems.append(msg("plan.bad_id", step=repr(step.id)))
            problems.extend(_step_problems(step, ids, texts, registry, can_infer))
        problems.extend(_cycle_problem(cycle) for cycle in self.cycles()
                        if len(cycle) > 1)  # a self-loop is already reported by its step
        problems.extend(phase_problems(self.phases, self.steps))
        return problems

    def text_results(self) -> set[str]:
        """The steps whose result is text, with no fields to read: those without a tool
        (reasoning, the answer), and tool steps that completed with text (a server's plain
        reply, such as a git log)."""
        return {step.id for step in self.steps if step.tool is None or (
            step.status == "completed" and isinstance(step.result, str))}

    def raise_if_invalid(self, registry: ToolRegistry | None = None, *,
                         can_infer: bool = True) -> None:
        """Raise PlanValidationError listing every problem, if there are any."""
        problems = self.validate(registry, can_infer=can_infer)
        if problems:
            raise PlanValidationError(problems)

    # ---- text and JSON ------------------------------------------------------------------

    def summary(self) -> str:
        """The seeds' one-line-per-step view: ✓ done, ▶ running, ○ pending, ✗ failed, ⏭ skipped.

        A plan with phases lists each phase (its status icon, id and title) with its steps
        under it; a phase still to expand shows no step.
        """
        lines = [f"Plan v{self.version}: {self.goal}"]
        if not self.phases:
            return "\n".join([*lines, *(_summary_line(s, "  ") for s in self.steps)])
        statuses = self.phase_statuses()
        for phase_id in statuses:
            phase = self.phase(phase_id)
            lines.append(f"  {STATUS_ICONS[statuses[phase_id]]} {phase.id}: {phase.title}")
            lines += [_summary_line(s, "      ") for s in self.steps_of(phase_id)]
        lines += [_summary_line(s, "  ") for s in self.steps if s.phase not in statuses]
        return "\n".join(lines)

    def to_json(self, *, indent: int | None = 2) -> str:
        """The full plan, runtime fields included, as JSON."""
        return self.model_dump_json(indent=indent)

    def canonical(self) -> dict[str, Any]:
        """The plan as the canonical JSON of DESIGN.md (no runtime fields, no empty extras)."""
        steps = []
        for s in self.steps:
            entry: dict[str, Any] = {
                "id": s.id, "description": s.description, "tool": s.tool,
            }
            if s.args is not None:
                entry["args"] = s.args
            entry["depends_on"] = list(s.depends_on)
            if s.success_criteria:
                entry["success_criteria"] = s.success_criteria
            if s.condition:
                entry["condition"] = s.condition
            if s.phase:
                entry["phase"] = s.phase
            steps.append(entry)
        data: dict[str, Any] = {
            "goal": self.goal,
            "language": self.language,
            "definition_of_done": self.definition_of_done,
            "constraints": list(self.constraints),
        }
        if self.phases:
            data["phases"] = [phase.canonical() for phase in self.phases]
        data["steps"] = steps
        if self.warnings:
            data["warnings"] = list(self.warnings)
        return data

    @classmethod
    def from_json(cls, text: str) -> Plan:
        """Read a plan written by :meth:`to_json` (or canonical JSON)."""
        return cls.model_validate(json.loads(text))


def _cycle_problem(cycle: list[str]) -> Message:
    return msg("plan.cycle", steps=", ".join(cycle))


def _summary_line(step: Step, indent: str) -> str:
    line = f"{indent}{STATUS_ICONS[step.status]} {step.id}: {step.description}"
    if step.status == "completed" and step.result is not None:
        line += f" → {_preview(step.result)}"
    elif step.status in {"failed", "skipped"} and step.error:
        line += f" → {_preview(step.error)}"
    return line


def _step_problems(step: Step, ids: set[str], texts: dict[str, str],
                   registry: ToolRegistry | None, can_infer: bool) -> list[Message]:
    """``texts``: the steps whose result is text (:meth:`Plan.text_results`), so that a
    reference to a field of one can never be resolved, each with the message that says so."""
    sid = step.id
    problems: list[Message] = []
    if not step.description.strip():
        problems.append(msg("plan.no_description", step=sid))
    for dep in step.depends_on:
        if dep == sid:
            problems.append(msg("plan.depends_on_itself", step=sid))
        elif dep not in ids:
            problems.append(msg("plan.unknown_dependency", step=sid, dependency=dep))
    deps = set(step.depends_on)
    for ref in sorted(references_in(step.args or {}) - deps):
        problems.append(msg("plan.reference_without_dependency", step=sid,
                            reference="{{" + ref + "...}}", dependency=ref))
    for ref, path in sorted(_field_references(step.args or {})):
        if ref in texts and step.status == "pending":  # what ran or failed is history
            problems.append(msg(texts[ref], step=sid, dependency=ref,
                                reference="{{" + ref + path + "}}", whole="{{" + ref + "}}"))
    if step.condition and is_expression_condition(step.condition):
        try:
            missing = condition_step_refs(step.condition) - deps
        except ExpressionError as exc:
            problems.append(msg("plan.condition_unparsable", step=sid, error=exc))
        else:
            problems.extend(msg("plan.condition_without_dependency", step=sid, dependency=ref)
                            for ref in sorted(missing & ids))
            problems.extend(msg("plan.condition_unknown_step", step=sid, dependency=ref)
                            for ref in sorted(missing - ids))
    if step.tool is not None and registry is not None:
        problems.extend(_tool_problems(step, registry, can_infer))
    return problems


def _tool_problems(step: Step, registry: ToolRegistry, can_infer: bool) -> list[Message]:
    try:
        target = registry.get(step.tool or "")
    except UnknownToolError as exc:
        return [msg("plan.unknown_tool", step=step.id, error=exc.message or str(exc))]
    left_out = [name for name in target.required if (step.args or {}).get(name) is None]
    if left_out and not can_infer and step.status == "pending":
        return [msg("step.args_need_llm", step=step.id, tool=target.name,
                    missing=", ".join(left_out))]
    if not step.args:
        return []
    literal = {k: v for k, v in step.args.items() if not references_in(v)}
    problems = []
    properties = target.parameters.get("properties", {})
    for key in step.args:
        if key not in properties:
            problems.append(msg("plan.unknown_argument", step=step.id, tool=step.tool,
                                argument=repr(key),
                                parameters=", ".join(properties) or msg("word.none")))
    try:
        found = target.value_problems(literal)
    except ToolArgumentError as exc:
        return [*problems, msg("step.prefixed", step=step.id, error=exc.message or str(exc))]
    for problem in found:
        problems.append(msg("plan.argument_value", step=step.id, tool=step.tool,
                            argument=repr(problem.params.get("field", "")),
                            detail=problem.params.get("detail", "")))
    return problems


def _preview(value: Any) -> str:
    return preview(value, _PREVIEW_CHARS)

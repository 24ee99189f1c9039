"""A rehearsal: a plan's steps simulated from their tools' declared results instead of run,
and what execution would meet, step by step.

Each tool step's result is a sample of its tool's ``output_schema`` (its first example
when it gives one; :mod:`core.tools.result_shape`). Against those the rehearsal reads the
plan as the executor would: a ``{{sN.field}}`` reference or a condition's ``sN.field``
that the dependency's declared result does not have; a comparison in a condition that can
never hold, or always holds, over the values a field declares; arguments that would not
fit their tool once references are filled, or that nothing can fill; and every side effect
the run would cause. It calls no tool and no model, and records nothing: a tool without an
output schema, or a reasoning step, has a result of unknown shape, and what reads it is
noted as not checked rather than judged.
"""

from __future__ import annotations

import ast
import copy
import itertools
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Literal

from core.base.expressions import (
    ExpressionError,
    evaluate_condition,
    is_expression_condition,
    parse_condition,
)
from core.base.language import Language
from core.base.messages import Message, msg, render
from core.base.step_id import STEP_ID
from core.errors import ToolArgumentError
from core.execution.context import reference_path, resolve_value
from core.execution.executor import predict_llm_calls, step_mode
from core.plan.approval import has_side_effect
from core.plan.model import REFERENCE, Plan, Step
from core.tools.registry import Tool, ToolRegistry
from core.tools.result_shape import (
    FieldFound,
    FieldMissing,
    FieldOpen,
    field_schema,
    possible_values,
    sample_value,
)

__all__ = ["Finding", "FindingKind", "Rehearsal", "rehearse"]

FindingKind = Literal["reference", "condition", "arguments", "side_effect", "not_checked",
                      "model_fills"]
PROBLEM_KINDS: frozenset[str] = frozenset({"reference", "condition", "arguments"})
_MAX_COMBINATIONS = 256  # values a comparison is tried with; past this it is not judged


@dataclass(frozen=True)
class Finding:
    """One thing the rehearsal met at a step: a problem, a side effect, or a note."""

    step_id: str
    kind: FindingKind
    message: Message

    @property
    def is_problem(self) -> bool:
        """True for what would go wrong when the plan runs (not a side effect or a note)."""
        return self.kind in PROBLEM_KINDS


@dataclass(frozen=True)
class Rehearsal:
    """What a rehearsal found, the results it simulated and the model calls a run expects."""

    findings: tuple[Finding, ...]
    simulated: dict[str, Any]
    llm_calls: int

    @property
    def problems(self) -> list[Finding]:
        """What would go wrong, in plan order."""
        return [f for f in self.findings if f.is_problem]

    @property
    def side_effects(self) -> list[Finding]:
        """The side-effecting calls the run would make (none was made)."""
        return [f for f in self.findings if f.kind == "side_effect"]

    @property
    def notes(self) -> list[Finding]:
        """What was not checked, and what a model would fill in."""
        return [f for f in self.findings if f.kind in {"not_checked", "model_fills"}]

    def report(self, language: Language) -> dict[str, Any]:
        """The rehearsal as JSON-ready data worded in ``language``."""
        def worded(found: list[Finding]) -> list[dict[str, str]]:
            return [{"step": f.step_id, "kind": f.kind, "text": render(f.message, language)}
                    for f in found]

        return {"executed": False, "problems": worded(self.problems),
                "side_effects": worded(self.side_effects), "notes": worded(self.notes),
                "llm_calls": self.llm_calls, "simulated": self.simulated}


def rehearse(plan: Plan, registry: ToolRegistry, *, model_available: bool) -> Rehearsal:
    """Simulate ``plan`` step by step and say what its execution would meet.

    ``model_available`` says whether a model would fill arguments the plan leaves out. The
    plan is read, never changed; no tool or model is called.
    """
    shapes = _Shapes(plan, registry)
    findings: list[Finding] = []
    for step in plan.steps:  # in plan order, as validation names its problems
        findings += _reference_findings(step, shapes)
        findings += _condition_findings(step, shapes)
        target = registry.get(step.tool) if step.tool and step.tool in registry else None
        if target is not None:
            findings += _argument_findings(plan, step, target, shapes, registry,
                                           model_available)
            if has_side_effect(step, registry):
                findings.append(Finding(step.id, "side_effect",
                                        msg("rehearsal.side_effect", step=step.id,
                                            tool=target.name)))
    return Rehearsal(findings=tuple(_unique(findings)), simulated=shapes.simulated,
                     llm_calls=predict_llm_calls(plan, registry, offline=not model_available))


class _Shapes:
    """Each step's declared result schema (None when unknown) and simulated result."""

    def __init__(self, plan: Plan, registry: ToolRegistry) -> None:
        self._tools: dict[str, Tool | None] = {}
        self.simulated: dict[str, Any] = {}
        for step in plan.steps:
            target = registry.get(step.tool) if step.tool and step.tool in registry else None
            self._tools[step.id] = target
            self.simulated[step.id] = _simulated_result(target)

    def look_up(self, step_id: str, path: list[str | int]
                ) -> FieldFound | FieldMissing | FieldOpen | None:
        """What the step's declared result holds at ``path``; None when its shape is unknown."""
        target = self._tools.get(step_id)
        if target is None or target.output_schema is None:
            return None
        return field_schema(target.output_schema, path, root=step_id)

    def not_checked(self, step: Step, source: str) -> Finding:
        """The note that what ``step`` reads from ``source`` is not judged, and why."""
        target = self._tools.get(source)
        why = (msg("rehearsal.why_no_schema", tool=target.name) if target is not None
               else msg("rehearsal.why_reasoning", source=source))
        return Finding(step.id, "not_checked",
                       msg("rehearsal.not_checked", step=step.id, source=source, why=why))

    def tool_name(self, step_id: str) -> str:
        target = self._tools.get(step_id)
        return target.name if target is not None else step_id


def _simulated_result(target: Tool | None) -> Any:
    if target is None:
        return None
    if target.output_examples:
        return copy.deepcopy(target.output_examples[0])
    return sample_value(target.output_schema) if target.output_schema is not None else None


# ---- references --------------------------------------------------------------------------


def _references(value: Any) -> Iterator[re.Match[str]]:
    """Every ``{{sN...}}`` reference inside an argument value, in order."""
    if isinstance(value, str):
        yield from REFERENCE.finditer(value)
    elif isinstance(value, dict):
        for item in value.values():
            yield from _references(item)
    elif isinstance(value, list):
        for item in value:
            yield from _references(item)


def _reference_findings(step: Step, shapes: _Shapes) -> list[Finding]:
    findings = []
    for match in _references(step.args or {}):
        source = match.group(1)
        found = shapes.look_up(source, reference_path(match.group(2)))
        if found is None:
            findings.append(shapes.not_checked(step, source))
        elif isinstance(found, FieldMissing):
            findings.append(_missing_field(step, match.group(0), found, shapes))
    return findings


def _missing_field(step: Step, reference: str, missing: FieldMissing, shapes: _Shapes
                   ) -> Finding:
    source = missing.walked.split(".")[0].split("[")[0]
    known = (msg("rehearsal.declares", fields=", ".join(missing.known)) if missing.known
             else msg("rehearsal.not_an_object"))
    return Finding(step.id, "reference", msg(
        "rehearsal.no_field", step=step.id, reference=reference, walked=missing.walked,
        field=repr(missing.field), tool=shapes.tool_name(source), known=known))


# ---- conditions --------------------------------------------------------------------------


def _condition_findings(step: Step, shapes: _Shapes) -> list[Finding]:
    if not step.condition or not is_expression_condition(step.condition):
        return []  # a condition in prose is the model's to judge
    try:
        tree = parse_condition(step.condition)
    except ExpressionError:
        return []  # validation names a condition that does not parse
    findings: list[Finding] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare):
            findings += _comparison_findings(step, node, shapes)
    return findings


def _comparison_findings(step: Step, node: ast.Compare, shapes: _Shapes) -> list[Finding]:
    """A comparison whose every field lists its values is tried with each of them."""
    domains: dict[int, list[Any]] = {}
    declared: list[Message] = []
    findings: list[Finding] = []
    for operand in (node.left, *node.comparators):
        reference = _field_reference(operand)
        if reference is None:
            if _reads_a_step(operand):
                return findings  # a computed operand: its values are not known
            continue
        source, path = reference
        found = shapes.look_up(source, path)
        if found is None:
            return [*findings, shapes.not_checked(step, source)]
        if isinstance(found, FieldMissing):
            findings.append(_missing_field(step, ast.unparse(operand), found, shapes))
            continue
        values = possible_values(found.schema) if isinstance(found, FieldFound) else None
        if values is None:
            continue
        domains[id(operand)] = values
        declared.append(msg("rehearsal.declared_values", field=ast.unparse(operand),
                            values=", ".join(map(repr, values))))
    if findings or not domains or any(
            _field_reference(o) is not None and id(o) not in domains
            for o in (node.left, *node.comparators)):
        return findings
    outcomes = _outcomes(node, domains)
    if outcomes in ({True}, {False}):
        code = "rehearsal.always_holds" if outcomes == {True} else "rehearsal.never_holds"
        findings.append(Finding(step.id, "condition", msg(
            code, step=step.id, comparison=ast.unparse(node), declared=declared)))
    return findings


def _outcomes(node: ast.Compare, domains: dict[int, list[Any]]) -> set[bool] | None:
    """The comparison's value for every combination of its fields' values (through the one
    condition evaluator), or None when there are too many combinations to try."""
    operands = [o for o in (node.left, *node.comparators) if id(o) in domains]
    combinations = 1
    for operand in operands:
        combinations *= len(domains[id(operand)])
    if combinations > _MAX_COMBINATIONS:
        return None
    outcomes = set()
    for values in itertools.product(*(domains[id(o)] for o in operands)):
        chosen = dict(zip((id(o) for o in operands), values, strict=True))
        trial = ast.Compare(left=_literal(node.left, chosen), ops=node.ops,
                            comparators=[_literal(c, chosen) for c in node.comparators])
        try:
            outcomes.add(evaluate_condition(ast.unparse(trial), {}))
        except ExpressionError:
            return None
    return outcomes


def _literal(operand: ast.expr, chosen: dict[int, Any]) -> ast.expr:
    return ast.Constant(chosen[id(operand)]) if id(operand) in chosen else operand


def _field_reference(node: ast.expr) -> tuple[str, list[str | int]] | None:
    """``s1.order.items[0]`` as ``("s1", ["order", "items", 0])``; None for anything else."""
    path: list[str | int] = []
    while True:
        if isinstance(node, ast.Attribute):
            path.insert(0, node.attr)
            node = node.value
        elif (isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant)
              and isinstance(node.slice.value, str | int)):
            path.insert(0, node.slice.value)
            node = node.value
        elif isinstance(node, ast.Name) and STEP_ID.match(node.id):
            return node.id, path
        else:
            return None


def _reads_a_step(node: ast.expr) -> bool:
    return any(isinstance(n, ast.Name) and STEP_ID.match(n.id) for n in ast.walk(node))


# ---- arguments ---------------------------------------------------------------------------


def _argument_findings(plan: Plan, step: Step, target: Tool, shapes: _Shapes,
                       registry: ToolRegistry, model_available: bool) -> list[Finding]:
    findings: list[Finding] = []
    if step_mode(plan, step, registry) == "forced_tool":
        missing = [name for name in target.required if name not in (step.args or {})]
        code, kind = (("rehearsal.model_fills", "model_fills") if model_available
                      else ("rehearsal.args_unfillable", "arguments"))
        findings.append(Finding(step.id, kind, msg(code, step=step.id, tool=target.name,
                                                   missing=missing)))
    filled = _filled_references(step, shapes)
    try:
        problems = target.value_problems(filled) if filled else []
    except ToolArgumentError as exc:
        problems = [exc.message or msg("tool.reported", text=str(exc))]
    if problems:
        findings.append(Finding(step.id, "arguments", msg(
            "rehearsal.arg_values", step=step.id, tool=target.name, problems=problems)))
    return findings


def _filled_references(step: Step, shapes: _Shapes) -> dict[str, Any]:
    """The arguments that hold references, filled from the simulated results, when every
    reference in them reads a declared field (literal arguments are validation's)."""
    filled = {}
    for name, value in (step.args or {}).items():
        references = list(_references(value))
        if not references or not all(
                isinstance(shapes.look_up(m.group(1), reference_path(m.group(2))), FieldFound)
                for m in references):
            continue
        try:
            filled[name] = resolve_value(value, shapes.simulated)
        except ToolArgumentError:
            continue  # a list position past the one simulated item: not a declared problem
    return filled


def _unique(findings: list[Finding]) -> Iterator[Finding]:
    seen: set[tuple[str, str, str]] = set()
    for finding in findings:
        key = (finding.step_id, finding.kind, finding.message.model_dump_json())
        if key not in seen:
            seen.add(key)
            yield finding

"""Final repair: a lookup left without the identifier it needs reads it from the step of the
tool whose result holds it.

A read-only step whose required identifier argument is missing (never written, or removed
as invented by core.planning.checks.clear_invented) is left as it is when a step it depends
on has a tool that declares a result field of that name (its output schema): the executor
fills it from that result when the step runs, and the plan is right as written. When no
dependency returns it, the step cannot be filled honestly when it runs: the
executor would take the nearest number in the request, an order's for a parcel's tracking
number. When exactly one other read-only tool declares a result field of that name, the
step reads it from a step of that tool: one the plan already has (and that does not
wait for it), else a new step inserted before it, when the request gives that step's
arguments: a pack's rule draft calls the tool with values the request holds, or the request
names each of its required identifiers ("customer 4711" for ``customer_no``). A request that
names none ("where is my parcel?") gets no new step: the missing value stays to be asked
for. A person sees the step before approving it.
"""

from __future__ import annotations

from typing import Any

from core.base.messages import msg, render
from core.plan.approval import has_side_effect
from core.plan.dag import descendants
from core.plan.identifiers import Grounds, is_identifier, value_named_in
from core.plan.model import Plan, Step, references_in
from core.planning.checks.shape import Check, CheckContext, Problem
from core.tools.registry import Tool, ToolRegistry
from core.tools.result_shape import FieldFound, field_schema

__all__ = ["CHECK", "add_id_sources", "read_from_dependency"]


def add_id_sources(plan: Plan, context: CheckContext) -> list[Problem]:
    """Point every lookup missing an identifier at the one tool step that returns it; one
    note per step so repaired."""
    registry = context.registry
    notes: list[Problem] = []
    for step in list(plan.steps):
        if (step.status != "pending" or step.tool not in registry
                or has_side_effect(step, registry)):
            continue
        for name in _missing_ids(step, registry):
            note = _repair(plan, step, name, context)
            if note is not None:
                notes.append(note)
    return notes


def read_from_dependency(plan: Plan, step: Step, name: str, context: CheckContext
                         ) -> Problem | None:
    """Make ``step`` read ``name`` from the one step it depends on whose tool returns it
    (for a value the model invented and the plan cleared: asked to fill it again when the
    step runs, it may invent it again); None when not exactly one does."""
    holding = [dep for dep in plan.steps
               if dep.id in step.depends_on and _returns(context.registry, dep.tool, name)]
    return _link(plan, step, name, holding[0], context) if len(holding) == 1 else None


def _repair(plan: Plan, step: Step, name: str, context: CheckContext) -> Problem | None:
    """Read ``name`` from a step of the one other read-only tool returning it; None when a
    dependency returns it already (the executor reads it there), or there is not exactly
    one such tool."""
    registry = context.registry
    if any(dep.id in step.depends_on and _returns(registry, dep.tool, name)
           for dep in plan.steps):
        return None
    sources = [tool for tool in registry if tool.name != step.tool
               and not tool.side_effect and _returns(registry, tool.name, name)]
    return _read_from(plan, step, name, sources[0], context) if len(sources) == 1 else None


def _missing_ids(step: Step, registry: ToolRegistry) -> list[str]:
    args = step.args or {}
    return [name for name in registry.get(step.tool or "").required
            if is_identifier(name) and args.get(name) is None]


def _returns(registry: ToolRegistry, tool_name: str | None, field: str) -> bool:
    """True when the tool's declared result has a top-level ``field``."""
    if not tool_name or tool_name not in registry:
        return False
    schema = registry.get(tool_name).output_schema
    return schema is not None and isinstance(
        field_schema(schema, [field], root=tool_name), FieldFound)


def _read_from(plan: Plan, step: Step, name: str, source: Tool, context: CheckContext
               ) -> Problem | None:
    """Make ``step`` read ``name`` from a step calling ``source``, added when the plan has
    none that can run before it; None when the request cannot fill such a step, or the plan
    would be worse for it."""
    problems = len(plan.validate(context.registry))
    downstream = set(descendants(plan.dependency_graph(), [step.id]))
    provider = next((candidate for candidate in plan.steps if candidate.tool == source.name
                     and candidate.id not in downstream
                     and candidate.status not in ("failed", "skipped")), None)
    if provider is not None:
        return _link(plan, step, name, provider, context, problems)
    given = _given_call(source, context)
    if given is None:
        return None
    args, description = given
    provider = Step(id=plan.next_step_id(), tool=source.name, phase=step.phase, args=args,
                    description=description or render(msg(
                        "check.id_source_step", tool=source.name, step=step.id),
                        context.language))
    plan.steps.insert(plan.steps.index(step), provider)
    note = _link(plan, step, name, provider, context, problems)
    if note is None:
        plan.steps.remove(provider)
        return None
    return Problem("check.id_source_added", note.params, step.id)


def _link(plan: Plan, step: Step, name: str, provider: Step, context: CheckContext,
          problems: int | None = None) -> Problem | None:
    """Make ``step`` read ``name`` from ``provider``'s result; None (and ``step`` unchanged)
    when the plan would have more than ``problems`` (default: its problems now)."""
    args, depends_on = step.args, list(step.depends_on)
    if problems is None:
        problems = len(plan.validate(context.registry))
    step.args = {**(step.args or {}), name: "{{" + f"{provider.id}.{name}" + "}}"}
    if provider.id not in step.depends_on:
        step.depends_on.append(provider.id)
    if len(plan.validate(context.registry)) > problems:  # never leave a plan worse than it was
        step.args, step.depends_on = args, depends_on
        return None
    return Problem("check.id_source_linked", {"step": step.id, "name": name,
                                              "source": provider.id, "tool": provider.tool},
                   step.id)


def _given_call(source: Tool, context: CheckContext
                ) -> tuple[dict[str, Any], str | None] | None:
    """Arguments (and a description) for a new call of ``source`` that the request gives: a
    pack's drafted call of it whose values the request holds, else each required identifier
    the request names; None when it gives them not."""
    grounds = Grounds([context.request])
    for draft in context.drafts:
        for drafted in draft.steps:
            if (drafted.tool == source.name and drafted.args
                    and not references_in(drafted.args)
                    and not list(grounds.invented(drafted.args))):
                return dict(drafted.args), drafted.description
    named = {parameter: value_named_in(context.request, parameter)
             for parameter in source.required}
    if not named or not all(is_identifier(p) and v for p, v in named.items()):
        return None
    return named, None


CHECK = Check(name="id_sources", kind="final",
              stages=frozenset({"draft", "replan", "follow_up"}), run=add_id_sources,
              weak_models_only=False)

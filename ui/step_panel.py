"""The step panel: the selected step of the plan as a form, beside the graph.

It draws the step named by ``st.session_state["step_pick"]`` (set by a click in the graph,
the table's step picker, or adding a step). The widgets have stable keys: step_description,
step_tool, step_phase (in a plan with phases), step_depends, step_arg_<name> and
step_ref_<name> (an argument and the result it may read instead), step_condition,
step_success. They are loaded from the canonical plan
whenever the picked step or any of its fields changed elsewhere (the table, Undo, another
step picked), and each change goes back through ``apply``: the plan editor's one path for
edits, which remembers the plan for Undo and rebuilds the table, so the graph and the table
show it on the same rerun. The condition and the success criteria are checked as they are
typed: they commit at each pause in typing (``live``), those commits make one undo step,
and the field typed into keeps what was typed since its commit. The form's logic (fields
from the tool's schema, values read back, references, the checks under each field) is
core.plan.arg_form; this module draws it.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any, Protocol

import streamlit as st

from core.base.expressions import ExpressionError, condition_step_refs, is_expression_condition
from core.base.messages import Message
from core.plan.arg_form import (
    OMIT,
    FieldSpec,
    arg_problems,
    condition_problems,
    criteria_problem,
    field_specs,
    is_reference,
    read_value,
    reference_options,
    set_arg,
    set_tool,
    shown_value,
)
from core.plan.edit import NO_TOOL, update_step
from core.plan.model import Plan, Step
from core.tools.registry import ToolRegistry
from core.tools.sources import server_of
from core.tools.tool_texts import tool_parameters
from ui.i18n import current_language, t
from ui.messages import said
from ui.safe_text import code, literal
from ui.switches import switch

__all__ = ["Apply", "Change", "render_step_panel"]

Change = Callable[[Plan], tuple[Plan, list[Message]]]
"""An edit of the canonical plan: the changed plan and notes on what else changed."""


class Apply(Protocol):
    """Applies a :data:`Change` to the canonical plan (the plan editor's ``apply_edit``);
    ``typing`` names a field committed as it is typed, whose commits one after another are
    one undo step."""

    def __call__(self, change: Change, *, typing: str | None = None) -> None: ...


_LOADED = "step_panel_loaded"
_READ_ERRORS = "step_panel_read_errors"
_TYPED = "step_panel_typed"  # the live field whose commit changed the plan in this rerun
_LIVE_FIELDS = {"condition", "success_criteria"}
_TEXT_FIELDS = {"description": "step_description", "condition": "step_condition",
                "success_criteria": "step_success"}


def render_step_panel(plan: Plan, registry: ToolRegistry, apply: Apply, *,
                      offline: bool = False) -> None:
    """Draw the picked step of ``plan`` as a form whose changes go through ``apply``.

    ``offline``: no model fills a required argument in at run time, so an empty one is a
    problem, said under its field.
    """
    step_id = st.session_state.get("step_pick")
    picked = step_id in plan.ids()
    st.subheader(t("panel_title", id=step_id) if picked else t("panel_title_none"))
    # as tall as its form: every field, Condition included, shows without a scroll inside it
    with st.container(key="step_panel", border=True):
        if not picked:
            st.caption(t("panel_none"))
            return
        step = plan.step(step_id)
        tool = registry.get(step.tool) if step.tool and step.tool in registry else None
        specs = field_specs(tool_parameters(tool, current_language()) if tool else {},
                            step.args)
        _load(step, specs)
        st.text_area(t("panel_description"), key="step_description",
                     on_change=_set_text, args=(apply, step.id, "description"))
        _render_tool(step, registry, apply)
        if plan.phases:
            _render_phase(plan, step, apply)
        _render_depends(plan, step, apply)
        _render_args(plan, step, specs, registry, apply, offline)
        _render_condition(plan, step, registry, apply)
        st.text_input(t("panel_success"), key="step_success", help=t("panel_success_help"),
                      live=True, on_change=_set_text, args=(apply, step.id, "success_criteria"))
        problem = criteria_problem(step.success_criteria)
        _note(problem) if problem else st.caption(t("panel_success_note"))


def _load(step: Step, specs: list[FieldSpec]) -> None:
    """Put the step's fields into the widgets, unless they already show exactly this step.

    Widgets lose their state when another page is drawn, and may when their labels change
    language: then they are loaded again too.
    """
    shown = json.dumps([step.id, step.description, step.tool, step.args, step.depends_on,
                        step.condition, step.success_criteria, step.phase, current_language()],
                       default=str, sort_keys=True)
    state = st.session_state
    keys = [*_TEXT_FIELDS.values(), "step_tool", "step_depends",
            *(f"step_arg_{spec.name}" for spec in specs)]
    if state.get(_LOADED) == shown and all(key in state for key in keys):
        return
    state[_LOADED] = shown
    state[_READ_ERRORS] = {}
    typed = state.pop(_TYPED, None)
    state["step_description"] = step.description
    state["step_tool"] = step.tool or NO_TOOL
    state["step_phase"] = step.phase
    state["step_depends"] = list(step.depends_on)
    for field in _LIVE_FIELDS:
        key, value = _TEXT_FIELDS[field], getattr(step, field) or ""
        # a value written back while the person types would replace what they typed since
        if key != typed or str(state.get(key) or "").strip() != value:
            state[key] = value
    for spec in specs:
        value = (step.args or {}).get(spec.name, OMIT)
        state[f"step_arg_{spec.name}"] = _widget_value(spec, value)
        state[f"step_ref_{spec.name}"] = value.strip() if is_reference(value) else None


def _widget_value(spec: FieldSpec, value: Any) -> Any:
    shown = shown_value(spec, value)
    # a number widget refuses an int where it expects a float (mixed numeric types)
    return float(shown) if spec.kind == "number" and shown is not None else shown


def _render_tool(step: Step, registry: ToolRegistry, apply: Apply) -> None:
    names = registry.names()
    options = [NO_TOOL, *names, *([step.tool] if step.tool and step.tool not in names else [])]
    st.selectbox(t("panel_tool"), options, key="step_tool", help=t("panel_tool_help"),
                 format_func=lambda name: t("tool_none_reasoning") if name == NO_TOOL else name,
                 on_change=_set_tool, args=(apply, step.id, registry))
    server = server_of(registry, step.tool)
    if server is not None:
        st.caption(t("panel_tool_server", server=literal(server)))


def _render_phase(plan: Plan, step: Step, apply: Apply) -> None:
    titles = {phase.id: f"{phase.id} · {phase.title}" for phase in plan.phases}
    options = [*titles, *([step.phase] if step.phase and step.phase not in titles else [])]
    st.selectbox(t("panel_phase"), options, key="step_phase", help=t("panel_phase_help"),
                 format_func=lambda phase: titles.get(phase, phase),
                 on_change=_set_phase, args=(apply, step.id))


def _render_depends(plan: Plan, step: Step, apply: Apply) -> None:
    others = [sid for sid in plan.ids() if sid != step.id]
    options = others + [dep for dep in step.depends_on if dep not in others]  # dangling ones
    st.multiselect(t("panel_depends"), options, key="step_depends",
                   help=t("panel_depends_help"), placeholder=t("panel_depends_none"),
                   on_change=_set_depends, args=(apply, step.id))


def _render_args(plan: Plan, step: Step, specs: list[FieldSpec], registry: ToolRegistry,
                 apply: Apply, offline: bool) -> None:
    st.markdown(f"**{t('panel_args')}**")
    if not specs:
        st.caption(t("panel_args_none", tool=step.tool) if step.tool
                   else t("panel_args_reasoning"))
        return
    for spec in specs:
        _render_arg(plan, step, spec, registry, apply, offline)


def _render_arg(plan: Plan, step: Step, spec: FieldSpec, registry: ToolRegistry,
                apply: Apply, offline: bool) -> None:
    """One argument: a widget for its type, the results it may read, its problems."""
    current = (step.args or {}).get(spec.name, OMIT)
    refs = reference_options(plan, step.id, spec.name)
    referenced = is_reference(current)
    if referenced and current.strip() not in refs:
        refs.append(current.strip())
    # the parameter's name is an id: the words beside it say, in the UI's language, whether
    # it must be given
    label = f"{code(spec.name)} · {t('panel_required' if spec.required else 'panel_optional')}"
    common: dict[str, Any] = {
        "key": f"step_arg_{spec.name}", "help": _arg_help(spec, refs),
        "on_change": _set_arg, "args": (apply, step.id, spec),
    }
    locked = referenced and spec.kind != "string"  # the reference shows in the box below
    placeholder = (t("panel_from_ref", ref=current.strip()) if locked else _placeholder(spec))
    if spec.kind in ("integer", "number"):
        st.number_input(label, value=None, step=1 if spec.kind == "integer" else None,
                        placeholder=placeholder, disabled=locked, **common)
    elif spec.kind == "boolean":
        switch(label, disabled=locked, **common)
    elif spec.kind == "enum":
        st.selectbox(label, list(spec.options), index=None, placeholder=placeholder,
                     disabled=locked, **common)
    else:
        st.text_input(label, placeholder=placeholder, **common)
    if refs:
        st.selectbox(t("panel_ref_label", name=spec.name), ["", *refs], index=None,
                     key=f"step_ref_{spec.name}", placeholder=t("panel_ref_placeholder"),
                     format_func=lambda ref: ref or t("panel_ref_value"),
                     label_visibility="collapsed", on_change=_set_ref,
                     args=(apply, step.id, spec.name))
    if not spec.known:
        st.caption(t("panel_unknown_arg", tool=step.tool))
    read_error = st.session_state.get(_READ_ERRORS, {}).get(spec.name)
    for problem in [read_error] if read_error else arg_problems(
            plan, registry, step.id, spec.name, can_infer=not offline):
        _note(problem)


def _arg_help(spec: FieldSpec, refs: list[str]) -> str:
    parts = [literal(spec.description)] if spec.description else []
    if spec.required:
        parts.append(t("panel_required_help"))
    if refs:
        parts.append(t("panel_refs_help", refs=", ".join(code(ref) for ref in refs)))
    return "\n\n".join(parts)


def _placeholder(spec: FieldSpec) -> str:
    if spec.has_default and spec.default is not None:
        return t("panel_default", value=json.dumps(spec.default, ensure_ascii=False))
    return ""  # the label already says whether the argument is required


def _render_condition(plan: Plan, step: Step, registry: ToolRegistry, apply: Apply) -> None:
    st.text_input(t("panel_condition"), key="step_condition", help=t("panel_condition_help"),
                  placeholder=t("panel_condition_none"), live=True,
                  on_change=_set_text, args=(apply, step.id, "condition"))
    if not step.condition:
        return
    problems = condition_problems(plan, registry, step.id)
    for problem in problems:
        _note(problem)
    if problems:
        return
    if not is_expression_condition(step.condition):
        st.caption(t("panel_condition_prose"))
        return
    try:
        ids = ", ".join(sorted(condition_step_refs(step.condition)))
    except ExpressionError:  # reported above already; nothing more to say
        return
    if ids:
        st.caption(t("panel_condition_expression", ids=ids))


def _note(problem: Message) -> None:
    """A field's problem, in one red line under it."""
    st.caption(f":red[:material/error: {literal(said(problem))}]")


# ---- callbacks (run before the next draw) ------------------------------------------------

def _on_step(step_id: str, edit: Change) -> Change:
    """``edit`` for the step ``step_id``, or no change when it is gone meanwhile."""
    return lambda plan: edit(plan) if step_id in plan.ids() else (plan, [])


def _set_text(apply: Apply, step_id: str, field: str) -> None:
    text = str(st.session_state.get(_TEXT_FIELDS[field]) or "").strip()
    value = text if field == "description" else text or None
    change = _on_step(step_id, lambda plan: (update_step(plan, step_id, **{field: value}), []))
    if field in _LIVE_FIELDS:
        st.session_state[_TYPED] = _TEXT_FIELDS[field]
        apply(change, typing=f"{step_id}.{field}")
    else:
        apply(change)


def _set_tool(apply: Apply, step_id: str, registry: ToolRegistry) -> None:
    chosen = st.session_state.get("step_tool")
    tool = None if chosen in (None, NO_TOOL) else str(chosen)
    apply(_on_step(step_id, lambda plan: set_tool(plan, step_id, tool, registry)))


def _set_phase(apply: Apply, step_id: str) -> None:
    phase = st.session_state.get("step_phase")
    apply(_on_step(step_id, lambda plan: (update_step(plan, step_id, phase=phase), [])))


def _set_depends(apply: Apply, step_id: str) -> None:
    depends = [str(dep) for dep in st.session_state.get("step_depends") or []]
    apply(_on_step(step_id, lambda plan: (update_step(plan, step_id, depends_on=depends), [])))


def _set_arg(apply: Apply, step_id: str, spec: FieldSpec) -> None:
    back = read_value(spec, st.session_state.get(f"step_arg_{spec.name}"))
    errors = {**st.session_state.get(_READ_ERRORS, {}), spec.name: back.error}
    st.session_state[_READ_ERRORS] = {name: e for name, e in errors.items() if e}
    if back.error is None:
        apply(_on_step(step_id, lambda plan: (set_arg(plan, step_id, spec.name, back.value),
                                              [])))


def _set_ref(apply: Apply, step_id: str, name: str) -> None:
    ref = st.session_state.get(f"step_ref_{name}")

    def edit(plan: Plan) -> tuple[Plan, list[Message]]:
        if ref:
            return set_arg(plan, step_id, name, ref), []
        current = (plan.step(step_id).args or {}).get(name)
        # "a value typed above": the reference goes, the box above takes the value
        return (set_arg(plan, step_id, name, OMIT) if is_reference(current) else plan), []

    apply(_on_step(step_id, edit))

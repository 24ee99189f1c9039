"""Re-running a finished run from one step: the step's edit form and what the re-run will do.

The form reads a person's changes to one step (description, tool, arguments, condition)
into a :class:`core.plan.rerun.StepEdit` that holds only what differs from the step; the
preview shows the diff, the steps that run again and those with a side effect, which the
person approves with the page's button.
"""

from __future__ import annotations

import json

import streamlit as st

from core.plan.model import Step
from core.plan.rerun import StepEdit
from core.runs.rerun import PreparedRerun
from ui.i18n import t
from ui.run_view import diff_lines
from ui.safe_text import code, literal

__all__ = ["render_rerun_form", "render_rerun_preview"]


def render_rerun_form(step: Step, tools: list[str]) -> StepEdit | str:
    """The step's fields to edit (keys ``rerun_<field>_<step id>``); the edit, or what is
    wrong with the arguments typed (not a JSON object) in the session's language."""
    st.subheader(t("rerun_title", step=step.id))
    st.caption(t("rerun_caption", step=step.id))
    description = st.text_input(t("rerun_description"), value=step.description,
                                key=f"rerun_description_{step.id}")
    choices = ["", *sorted(tools)]
    tool = st.selectbox(t("rerun_tool"), choices,
                        index=choices.index(step.tool) if step.tool in choices else 0,
                        format_func=lambda name: name or t("rerun_no_tool"),
                        key=f"rerun_tool_{step.id}")
    typed = st.text_area(t("rerun_args"), height=120, key=f"rerun_args_{step.id}",
                         value=json.dumps(step.args or {}, ensure_ascii=False, indent=2))
    condition = st.text_input(t("rerun_condition"), value=step.condition or "",
                              key=f"rerun_condition_{step.id}")
    try:
        args = json.loads(typed or "{}")
    except json.JSONDecodeError:
        args = None
    if not isinstance(args, dict):
        return t("rerun_args_not_object")
    changed = {"description": description, "tool": tool or None, "args": args,
               "condition": condition.strip() or None}
    before = {"description": step.description, "tool": step.tool, "args": step.args or {},
              "condition": step.condition}
    return StepEdit(**{name: value for name, value in changed.items()
                       if value != before[name]})


def render_rerun_preview(prepared: PreparedRerun) -> None:
    """What the re-run changes and does: the diff, the steps run again and kept, and each
    step with a side effect that approving it runs again."""
    lines = diff_lines(prepared.diff)
    st.markdown("\n".join(lines) if lines else t("replan_same"))
    kept = [step.id for step in prepared.plan.steps if step.id not in prepared.again]
    st.caption(t("rerun_again", steps=", ".join(prepared.again), kept=", ".join(kept) or "—"))
    for step_id in prepared.side_effects:
        st.warning(t("rerun_side_effect", step=literal(step_id),
                     tool=code(prepared.plan.step(step_id).tool or "")),
                   icon=":material/warning:")

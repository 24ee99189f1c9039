"""Widgets of the run page: step cards, replan history, usage, answer and the event log."""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable, Iterable
from typing import Any

import streamlit as st

from core.plan import STATUS_ICONS, Plan, Step
from core.plan_edit import diff_plans
from core.usage import Usage
from ui.i18n import t

__all__ = [
    "render_answer",
    "render_events",
    "render_replans",
    "render_step_card",
    "render_usage",
    "step_usage",
    "waiting_steps",
]

_CLEARS_WAITING = {"paused", "cancelled", "interrupted", "run_finished"}
_ENDS_WAITING = {"confirmed", "rejected", "step_completed", "step_failed", "step_skipped"}


def waiting_steps(events: Iterable[Any]) -> set[str]:
    """Steps waiting for a person's confirmation, according to the run's event log."""
    waiting: set[str] = set()
    for event in events:
        if event.kind == "waiting_confirmation" and event.step_id:
            waiting.add(event.step_id)
        elif event.kind in _ENDS_WAITING and event.step_id:
            waiting.discard(event.step_id)
        elif event.kind in _CLEARS_WAITING:
            waiting.clear()
    return waiting


def step_usage(plan: Plan | None) -> Usage:
    """The LLM usage recorded on the plan's steps."""
    total = Usage()
    for step in plan.steps if plan else []:
        total = total + Usage(llm_calls=step.llm_calls, prompt_tokens=step.prompt_tokens,
                              completion_tokens=step.completion_tokens)
    return total


def render_step_card(
    step: Step,
    *,
    side_effect: bool,
    waiting: bool,
    on_decide: Callable[[str, bool], None],
) -> None:
    """One step: status, tool, arguments, result, error, duration and usage."""
    with st.container(border=True, key=f"step_card_{step.id}"):
        head, meta = st.columns([3, 2])
        tool = f"`{step.tool}`" if step.tool else t("no_tool")
        warn = " ⚠" if side_effect else ""
        head.markdown(f"**{STATUS_ICONS.get(step.status, '')} {step.id}** · {tool}{warn}  \n"
                      f"{step.description}")
        meta.caption(" · ".join(_meta(step)))
        if step.condition:
            st.caption(t("card_condition", condition=step.condition))
        if waiting:
            st.warning(t("card_waiting"), icon=":material/front_hand:")
            confirm, reject = st.columns(2)
            confirm.button(t("confirm"), key=f"confirm_step_{step.id}", type="primary",
                           icon=":material/check:",
                           on_click=on_decide, args=(step.id, True), width="stretch")
            reject.button(t("reject"), key=f"reject_step_{step.id}", icon=":material/close:",
                          on_click=on_decide, args=(step.id, False), width="stretch")
        args = step.resolved_args if step.resolved_args is not None else step.args
        if args:
            with st.expander(t("card_args")):
                st.json(args, expanded=True)
        if step.result is not None:
            with st.expander(t("card_result")):
                _show_value(step.result)
        if step.error:
            st.error(step.error)


def _meta(step: Step) -> list[str]:
    parts = [t(f"status_{step.status}")]
    if step.duration_s is not None:
        parts.append(t("card_duration", seconds=f"{step.duration_s:.2f}"))
    parts.append(t("card_usage", calls=step.llm_calls,
                   tokens=step.prompt_tokens + step.completion_tokens))
    return parts


def _show_value(value: Any) -> None:
    if isinstance(value, dict | list):
        st.json(value, expanded=True)
    else:
        st.markdown(str(value))


def render_replans(versions: list[Any]) -> None:
    """Every replan: from which version to which, why, and the step diff."""
    st.subheader(t("replans"))
    if len(versions) < 2:
        st.caption(t("replans_none"))
        return
    for old, new in itertools.pairwise(versions):
        diff = diff_plans(old.plan, new.plan)
        title = t("replan_title", old=old.version, new=new.version)
        with st.expander(title, expanded=True):
            if new.reason:
                st.caption(t("replan_reason", reason=new.reason))
            lines = [f"- :material/add: **{s.id}** {s.description}" for s in diff.added]
            lines += [f"- :material/remove: ~~{s.id} {s.description}~~" for s in diff.removed]
            lines += [
                f"- :material/edit: **{sid}**: {', '.join(fields)}"
                for sid, fields in diff.changed.items()
            ]
            st.markdown("\n".join(lines) if lines else t("replan_same"))


def render_usage(usage: Usage, wall_s: float) -> None:
    """Total LLM calls, tokens and wall time of the run."""
    calls, prompt, completion, wall = st.columns(4)
    calls.metric(t("usage_calls"), usage.llm_calls)
    prompt.metric(t("usage_prompt"), usage.prompt_tokens)
    completion.metric(t("usage_completion"), usage.completion_tokens)
    wall.metric(t("usage_wall"), f"{wall_s:.1f} s")


def render_answer(answer: str | None, finished: bool) -> None:
    """The final answer, in the container tests and the browser journey look for."""
    with st.container(key="run_answer", border=True):
        st.subheader(t("answer"))
        if answer:
            st.markdown(answer)
        else:
            st.caption(t("answer_none") if finished else t("answer_pending"))


def render_events(events: list[Any]) -> None:
    """The run's event log, newest last."""
    with st.expander(t("events", count=len(events))):
        rows = [
            {
                "#": e.seq,
                t("event_time"): e.at.strftime("%H:%M:%S"),
                t("event_kind"): e.kind,
                t("event_step"): e.step_id or "",
                t("event_data"): json.dumps(e.data, ensure_ascii=False, default=str)[:200],
            }
            for e in events
        ]
        st.dataframe(rows, hide_index=True, width="stretch")

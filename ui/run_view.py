"""Widgets of the run page: step cards, replan history, usage, answer and the event log."""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable, Iterable
from typing import Any

import streamlit as st

from core.base.text import preview
from core.base.usage import Usage
from core.plan.diff import PlanDiff, diff_plans
from core.plan.model import STATUS_ICONS, Plan, Step
from ui.i18n import t

__all__ = [
    "render_answer",
    "render_events",
    "render_reflections",
    "render_replans",
    "render_step_card",
    "render_usage",
    "step_checks",
    "step_usage",
    "version_sources",
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


def step_checks(events: Iterable[Any]) -> dict[str, dict[str, Any]]:
    """Per step, the latest success verdict and failure class from the event log.

    A step that starts again (a later version, a retry) drops what an earlier try recorded.
    """
    checks: dict[str, dict[str, Any]] = {}
    for event in events:
        if not event.step_id:
            continue
        if event.kind == "step_started":
            checks.pop(event.step_id, None)
        elif event.kind == "step_completed" and isinstance(event.data.get("success"), dict):
            checks[event.step_id] = {"success": event.data["success"]}
        elif event.kind == "step_failed" and event.data.get("failure_class"):
            checks[event.step_id] = {"failure_class": event.data["failure_class"]}
    return checks


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
    check: dict[str, Any] | None = None,
) -> None:
    """One step: status, tool, arguments, result, error, duration, usage and its checks.

    ``check`` (from :func:`step_checks`) holds the success verdict or the failure class.
    """
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
        _render_check(check or {})


def _render_check(check: dict[str, Any]) -> None:
    verdict = check.get("success")
    if isinstance(verdict, dict):
        reason = str(verdict.get("reason") or "—")
        if verdict.get("met", True):
            st.caption(":material/task_alt: " + t("card_success_met", reason=reason))
        else:
            st.warning(t("card_success_missed", reason=reason), icon=":material/rule:")
    failure = check.get("failure_class")
    if failure == "fatal":
        st.caption(":material/block: " + t("card_failure_fatal"))
    elif failure == "ignorable":
        st.caption(":material/low_priority: " + t("card_failure_ignorable"))


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


def version_sources(events: Iterable[Any]) -> dict[int, tuple[str, str]]:
    """Per plan version, what made it (failure, checkpoint, retry, follow-up) and why."""
    sources: dict[int, tuple[str, str]] = {}
    for event in events:
        if event.kind != "replanned":
            continue
        version = event.data.get("to_version") or event.plan_version
        if version is not None:
            sources[int(version)] = (str(event.data.get("source") or "failure"),
                                     str(event.data.get("reason") or ""))
    return sources


def _source_of(version: Any, sources: dict[int, tuple[str, str]]) -> tuple[str, str]:
    if version.version in sources:
        source, reason = sources[version.version]
        return source, reason or (version.reason or "")
    reason = version.reason or ""
    lowered = reason.lower()
    if lowered.startswith("follow-up"):
        return "follow-up", reason
    if "edit" in lowered or "编辑" in reason:
        return "manual", reason
    return "failure", reason


def render_replans(versions: list[Any], events: Iterable[Any] = ()) -> None:
    """Every version change: what made it, why, and the steps added, removed and changed."""
    st.subheader(t("replans"))
    if len(versions) < 2:
        st.caption(t("replans_none"))
        return
    sources = version_sources(events)
    for old, new in itertools.pairwise(versions):
        source, reason = _source_of(new, sources)
        label = t(f"source_{source}") if f"source_{source}" in _SOURCES else source
        title = t("replan_title", old=old.version, new=new.version) + f" · {label}"
        with st.expander(title, expanded=True):
            if reason:
                st.caption(t("replan_reason", reason=reason))
            lines = diff_lines(diff_plans(old.plan, new.plan))
            st.markdown("\n".join(lines) if lines else t("replan_same"))


_SOURCES = {"source_failure", "source_checkpoint", "source_retry", "source_follow-up",
            "source_manual"}


def diff_lines(diff: PlanDiff) -> list[str]:
    """Markdown lines: added, removed (struck through) and changed steps (old → new)."""
    lines = [f"- :material/add: **{s.id}** {s.description}" for s in diff.added]
    lines += [f"- :material/remove: ~~{s.id} {s.description}~~" for s in diff.removed]
    for change in diff.changed:
        details = "; ".join(
            f"{name}: {_short(getattr(change.old, name))} → {_short(getattr(change.new, name))}"
            for name in change.fields
        )
        lines.append(f"- :material/edit: **{change.new.id}** "
                      + t("diff_changed", fields=details))
    return lines


def _short(value: Any, limit: int = 60) -> str:
    if value in (None, "", [], {}):
        return "—"
    text = preview(value, limit).replace("~", "\\~")  # ~ would strike text through
    return f"`{text}`"


def render_reflections(events: Iterable[Any]) -> None:
    """What the run learned after a failed attempt: root cause, lesson, whether to retry."""
    found = [e for e in events if e.kind == "reflected"]
    if not found:
        return
    st.subheader(t("reflections"))
    for event in found:
        data = event.data
        with st.container(border=True, key=f"reflection_{event.seq}"):
            st.markdown(f"**{t('reflection_title', attempt=data.get('attempt') or 1)}**")
            st.markdown(t("reflection_root_cause", text=data.get("root_cause") or "—"))
            st.markdown(t("reflection_lesson", text=data.get("lesson") or "—"))
            if data.get("should_retry"):
                st.caption(t("reflection_retry_yes", hint=data.get("retry_hint") or "—"))
            else:
                st.caption(t("reflection_retry_no"))


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
                t("event_kind"): t(f"kind_{e.kind}"),
                t("event_step"): e.step_id or "",
                t("event_data"): json.dumps(e.data, ensure_ascii=False, default=str)[:200],
            }
            for e in events
        ]
        st.dataframe(rows, hide_index=True, width="stretch")

"""Widgets of the run page: progress, step cards, replan history, usage, answer, event log.

They draw the facts of a :class:`core.runs.view.RunView`; nothing here reads the log.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable
from typing import Any

import streamlit as st

from core.base.text import preview
from core.base.usage import Usage
from core.execution.context import ArgumentSent
from core.plan.diff import PlanDiff, diff_plans
from core.plan.model import STATUS_ICONS, Plan, Step
from core.runs.view import (
    Progress,
    Reflected,
    RunView,
    SkipReason,
    StepCheck,
    StoredEvent,
    VersionView,
    VersionWait,
)
from ui.i18n import t
from ui.live_marks import step_head
from ui.messages import said
from ui.safe_text import code, literal, markdown

__all__ = [
    "EVENTS_KEY",
    "phase_strip_text",
    "progress_text",
    "render_answer",
    "render_decision",
    "render_events",
    "render_phase_strip",
    "render_progress",
    "render_reflections",
    "render_replans",
    "render_step_card",
    "render_usage",
    "render_version_wait",
    "skip_text",
    "table_of",
]


def progress_text(progress: Progress) -> str:
    """E.g. "3 done · 2 skipped · 1 failed · 6 steps"; a cancelled run says so first."""
    counts = {"done": progress.done, "skipped": progress.skipped, "failed": progress.failed,
              "running": progress.running}
    if progress.cancelled:
        counts["not_run"] = progress.not_run
    else:
        counts["pending"] = progress.total - sum(counts.values())
    parts = " · ".join(t(f"progress_{name}", n=n) for name, n in counts.items()
                       if n or name == "done")
    key = "run_progress_cancelled" if progress.cancelled else "run_progress"
    return t(key, parts=parts, total=progress.total)


def render_progress(progress: Progress) -> None:
    """The progress bar with its counts (a cancelled run's bar stops where it stopped)."""
    st.progress(progress.fraction, text=progress_text(progress))


def skip_text(reason: SkipReason) -> str:
    """Why a step was skipped, in the session's language (a detail without a message code
    as written)."""
    detail = said(reason.message) if reason.message is not None else reason.detail
    return t(f"skip_{reason.kind}", detail=literal(detail or "—"))


def render_step_card(
    step: Step,
    view: RunView,
    *,
    side_effect: bool,
    waiting: bool,
    check: StepCheck | None = None,
    skip: SkipReason | None = None,
    server: str | None = None,
    in_doubt: bool = False,
    read_ahead: bool = False,
    rerun: bool = False,
) -> bool:
    """One step of ``view``'s run: status, tool, arguments, result, error, duration, usage
    and its checks; the status mark follows the run as it is recorded (ui.live_marks).

    ``waiting``: the step waits for a person, whose decision is drawn at the top of the
    page (:func:`render_decision`); the card says so. ``check`` holds the step's latest
    success verdict or failure class; ``skip`` why a skipped step was skipped (shown as a
    neutral note: skipping is not an error); ``server`` the MCP server of its tool;
    ``in_doubt``: the step waits because its call began before the run stopped and may
    already have happened. ``read_ahead``: its result is the call made while the plan was
    written. ``rerun``: the run has finished, and the card offers "Edit and
    re-run from here" (key ``rerun_from_<step id>``); True when it was clicked.
    """
    with st.container(border=True, key=f"step_card_{step.id}"):
        step_head(step, view, side_effect=side_effect, server=server,
                  meta=" · ".join(_meta(step)))
        if step.condition:
            st.caption(t("card_condition", condition=literal(step.condition)))
        if waiting:
            st.caption(":material/front_hand: " + t("card_waiting_above"))
        if read_ahead and step.status == "completed":
            st.caption(":material/bolt: " + t("card_read_ahead"))
        # arguments and result are drawn only while their expander is open: a followed
        # run redraws its cards at every change, and the browser's work grows with them
        args = step.resolved_args if step.resolved_args is not None else step.args
        if args:
            shown = st.expander(t("card_args"), key=f"card_args_{step.id}", on_change="rerun")
            if shown.open:
                with shown:
                    st.json(args, expanded=True)
        if step.result is not None:
            shown = st.expander(t("card_result"), expanded=table_of(step.result) is not None,
                                key=f"card_result_{step.id}", on_change="rerun")
            if shown.open:
                with shown:
                    _show_value(step.result)
        if step.status == "skipped" and skip is not None:
            st.caption(":material/skip_next: " + skip_text(skip))
        elif step.error:
            st.error(literal(said(step.error_message or step.error)))
        if check is not None:
            _render_check(check)
        return rerun and st.button(t("rerun_from_here"), key=f"rerun_from_{step.id}",
                                   icon=":material/replay:", type="tertiary")


def render_decision(step: Step, *, arguments: list[ArgumentSent], side_effect: bool,
                    shortcuts: bool, on_decide: Callable[[str, bool], None],
                    server: str | None = None, in_doubt: bool = False,
                    refused: str | None = None) -> None:
    """A step waiting for a person: what it will do, each of its ``arguments`` as the tool
    will get them (:func:`core.execution.context.arguments_sent`), and Confirm or Reject.

    Confirm waits while an argument cannot be resolved: what is confirmed is what runs.
    ``shortcuts``: Y confirms and N rejects (one waiting step holds them at a time);
    ``server`` the MCP server of its tool; ``in_doubt``: its call began before the run
    stopped and may already have happened; ``refused``: why this person may not decide
    (the buttons are disabled, and core refuses a decision sent all the same).
    """
    with st.container(border=True, key=f"decision_{step.id}"):
        tool = code(step.tool) if step.tool else t("no_tool")
        if server is not None:
            tool += " · " + t("card_server", server=literal(server))
        warn = " ⚠" if side_effect else ""
        st.warning(t("card_in_doubt" if in_doubt else "card_waiting"),
                   icon=":material/front_hand:")
        st.markdown(f"**{literal(step.id)}** · {tool}{warn}  \n{literal(step.description)}")
        with st.container(key=f"decision_args_{step.id}"):
            for argument in arguments:
                _render_argument(argument)
        unresolved = any(argument.problem is not None for argument in arguments)
        if unresolved:
            st.caption(":material/hourglass_top: " + t("card_confirm_waits"))
        confirm, reject = st.columns(2)
        confirm.button(t("confirm"), key=f"confirm_step_{step.id}", type="primary",
                       icon=":material/check:", shortcut="Y" if shortcuts else None,
                       on_click=on_decide, args=(step.id, True), width="stretch",
                       disabled=unresolved or refused is not None, help=refused)
        reject.button(t("reject"), key=f"reject_step_{step.id}", icon=":material/close:",
                      shortcut="N" if shortcuts else None,
                      on_click=on_decide, args=(step.id, False), width="stretch",
                      disabled=refused is not None, help=refused)


_ARGUMENT_INLINE = 120  # characters of a value shown on its argument's line; longer: a block


def _render_argument(argument: ArgumentSent) -> None:
    """One argument in body type: ``user_id`` **42** ← s1.user_id."""
    name = code(argument.name)
    if argument.by_model:
        st.markdown(f"{name} :orange[{t('card_arg_by_model')}]")
        return
    if argument.problem is not None:
        st.markdown(f"{name} :red[:material/link_off: "
                    f"{t('card_arg_unresolved', reason=literal(said(argument.problem)))}]")
        return
    value = argument.value
    # text as it is; anything else (and an empty text) as JSON, so that it shows
    text = value if isinstance(value, str) and value else json.dumps(
        value, ensure_ascii=False, default=str)
    source = f" ← {literal(', '.join(argument.sources))}" if argument.sources else ""
    if len(text) <= _ARGUMENT_INLINE and "\n" not in text:
        st.markdown(f"{name} **{literal(text)}**{source}")
        return
    st.markdown(f"{name}{source}")
    st.code(text, language=None, wrap_lines=True)


def _render_check(check: StepCheck) -> None:
    verdict = check.success
    if verdict is not None:
        reason = literal(said(verdict.message) if verdict.message else verdict.reason or "—")
        if verdict.met:
            st.caption(":material/task_alt: " + t("card_success_met", reason=reason))
        else:
            st.warning(t("card_success_missed", reason=reason), icon=":material/rule:")
    failure = check.failure_class
    if failure == "fatal":
        st.caption(":material/block: " + t("card_failure_fatal"))
    elif failure == "ignorable":
        st.caption(":material/low_priority: " + t("card_failure_ignorable"))


def _meta(step: Step) -> list[str]:
    """Duration and usage (the status is the head line's, which follows the run's stream)."""
    parts = []
    if step.duration_s is not None:
        parts.append(t("card_duration", seconds=f"{step.duration_s:.2f}"))
    parts.append(t("card_usage", calls=step.llm_calls,
                   tokens=step.prompt_tokens + step.completion_tokens))
    return parts


def table_of(value: Any) -> dict[str, list[str]] | None:
    """A ``columns``/``rows`` result (a query's shape) as text columns, else None.

    Every cell becomes text (a data frame shows text as written) and repeated column
    names are numbered, so any rows can be drawn.
    """
    if not isinstance(value, dict):
        return None
    columns, rows = value.get("columns"), value.get("rows")
    if not (isinstance(columns, list) and isinstance(rows, list)
            and all(isinstance(row, list | dict) for row in rows)):
        return None
    table: dict[str, list[str]] = {}
    for index, column in enumerate(columns):
        name, number = str(column), 2
        while name in table:
            name, number = f"{column} ({number})", number + 1
        table[name] = [_cell(row, index, column) for row in rows]
    return table


def _cell(row: list[Any] | dict[str, Any], index: int, column: Any) -> str:
    if isinstance(row, dict):
        value = row.get(str(column))
    else:
        value = row[index] if index < len(row) else None
    if value is None:
        return ""
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def _show_value(value: Any) -> None:
    table = table_of(value)
    if table is not None:
        rows = len(value["rows"])
        st.dataframe(table, hide_index=True, width="stretch")
        note = value.get("note")
        st.caption(t("card_table_rows", rows=rows) + (f" · {literal(note)}" if note else ""))
    elif isinstance(value, dict | list):
        st.json(value, expanded=True)
    else:
        st.markdown(markdown(value))


def render_version_wait(wait: VersionWait, on_decide: Callable[[bool], None],
                        refused: str | None = None) -> None:
    """A new version beyond the approved plan: its diff, and approve or reject it
    (``refused``: why this person may not, the buttons disabled)."""
    with st.container(border=True, key="version_wait"):
        st.warning(t("version_wait", version=wait.version, approved=wait.approved_version or 1,
                     steps=literal(", ".join(wait.steps))), icon=":material/front_hand:")
        lines = diff_lines(wait.diff) if wait.diff is not None else []
        if lines:
            st.markdown("\n".join(lines))
        approve, reject = st.columns(2)
        approve.button(t("approve_version"), key="approve_version", type="primary",
                       icon=":material/check:", on_click=on_decide, args=(True,),
                       width="stretch", disabled=refused is not None, help=refused)
        reject.button(t("reject_version"), key="reject_version", icon=":material/close:",
                      on_click=on_decide, args=(False,), width="stretch",
                      disabled=refused is not None, help=refused)


def render_replans(versions: list[VersionView]) -> None:
    """Every version change: what made it, why, and the steps added, removed and changed."""
    st.subheader(t("replans"))
    if len(versions) < 2:
        st.caption(t("replans_none"))
        return
    for old, new in itertools.pairwise(versions):
        title = t("replan_title", old=old.version, new=new.version) + (
            f" · {t(f'source_{new.source}')}")
        with st.expander(title, expanded=True):
            reason = said(new.message) if new.message else new.reason
            if reason:
                st.caption(t("replan_reason", reason=literal(reason)))
            lines = diff_lines(diff_plans(old.plan, new.plan))
            st.markdown("\n".join(lines) if lines else t("replan_same"))


def diff_lines(diff: PlanDiff) -> list[str]:
    """Markdown lines: phases added, removed and changed (a change of the phase plan),
    then added, removed (struck through) and changed steps (old → new)."""
    lines = [f"- :material/add_box: **{literal(p.id)}** · {literal(p.title)}"
             for p in diff.phases_added]
    lines += [f"- :material/indeterminate_check_box: ~~{literal(p.id)} · {literal(p.title)}~~"
              for p in diff.phases_removed]
    for phase_change in diff.phases_changed:
        details = "; ".join(f"{name}: {_short(getattr(phase_change.old, name))} → "
                            f"{_short(getattr(phase_change.new, name))}"
                            for name in phase_change.fields)
        lines.append(f"- :material/edit_note: **{literal(phase_change.new.id)}** "
                     + t("diff_changed", fields=details))
    lines += [f"- :material/add: **{literal(s.id)}** {literal(s.description)}" for s in diff.added]
    lines += [f"- :material/remove: ~~{literal(s.id)} {literal(s.description)}~~"
              for s in diff.removed]
    for change in diff.changed:
        details = "; ".join(
            f"{t(_FIELD_LABELS[name]) if name in _FIELD_LABELS else name}: "
            f"{_short(getattr(change.old, name))} → "
            f"{_short(getattr(change.new, name))}"
            for name in change.fields
        )
        lines.append(f"- :material/edit: **{literal(change.new.id)}** "
                      + t("diff_changed", fields=details))
    return lines


# a step's fields by the names of the plan table's columns
_FIELD_LABELS = {"description": "col_description", "tool": "col_tool", "args": "col_args",
                 "depends_on": "col_depends", "condition": "col_condition",
                 "success_criteria": "col_success", "phase": "col_phase"}


def phase_strip_text(plan: Plan) -> str:
    """The phases at a glance: "p1 ✓ · p2 running 3/7 · p3 pending" (in the session's
    language); "" for a plan without phases."""
    parts = []
    for phase_id, status in plan.phase_statuses().items():
        steps = plan.steps_of(phase_id)
        if status == "completed":
            parts.append(f"{phase_id} {STATUS_ICONS['completed']}")
        elif status == "running":
            done = sum(step.status in {"completed", "skipped"} for step in steps)
            parts.append(t("phase_strip_running", phase=phase_id, done=done, total=len(steps)))
        else:
            parts.append(t("phase_strip_status", phase=phase_id, status=t(f"status_{status}")))
    return " · ".join(parts)


def render_phase_strip(plan: Plan | None) -> None:
    """The phase strip under the progress bar (nothing for a plan without phases)."""
    if plan is not None and plan.phases:
        st.markdown(f"**{t('phase_strip')}:** {phase_strip_text(plan)}",
                    help="; ".join(f"{p.id} · {p.title}" for p in plan.phases))


def _short(value: Any, limit: int = 60) -> str:
    if value in (None, "", [], {}):
        return "—"
    return code(preview(value, limit))


def render_reflections(reflections: list[Reflected]) -> None:
    """What the run learned after a failed attempt: root cause, lesson, whether to retry."""
    if not reflections:
        return
    st.subheader(t("reflections"))
    for found in reflections:
        with st.container(border=True, key=f"reflection_{found.seq}"):
            st.markdown(f"**{t('reflection_title', attempt=found.attempt or 1)}**")
            st.markdown(t("reflection_root_cause", text=literal(found.root_cause or "—")))
            st.markdown(t("reflection_lesson", text=literal(found.lesson or "—")))
            if found.should_retry:
                st.caption(t("reflection_retry_yes", hint=literal(found.retry_hint or "—")))
            else:
                st.caption(t("reflection_retry_no"))


def render_usage(usage: Usage, wall_s: float) -> None:
    """Total LLM calls, tokens and wall time of the run."""
    with st.container(horizontal=True, key="run_usage"):  # one row, not four columns
        st.metric(t("usage_calls"), usage.llm_calls)
        st.metric(t("usage_prompt"), usage.prompt_tokens)
        st.metric(t("usage_completion"), usage.completion_tokens)
        st.metric(t("usage_wall"), t("card_duration", seconds=f"{wall_s:.1f}"))


def render_answer(answer: str | None, finished: bool) -> None:
    """The final answer, in the container tests and the browser journey look for."""
    with st.container(key="run_answer", border=True):
        st.subheader(t("answer"))
        if answer:
            st.markdown(markdown(answer))
        else:
            st.caption(t("answer_none") if finished else t("answer_pending"))


EVENTS_KEY = "run_events"  # the event log's expander: its session state says whether it is open


def render_events(events: list[StoredEvent]) -> None:
    """The run's event log as a table, newest last (shown as it is, nothing derived);
    built only while its expander is open."""
    log = st.expander(t("events"), key=EVENTS_KEY, on_change="rerun")
    if not log.open:
        return
    with log:
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

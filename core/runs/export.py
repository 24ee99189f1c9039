"""Export a stored run as JSON (full record), a Markdown report, Graphviz DOT or SVG.

The Markdown report carries the run's timeline as a Mermaid ``gantt`` block
(:func:`core.runs.timeline.timeline_mermaid`), which GitHub and most Markdown viewers draw.

Nothing secret can leak: a run's settings were scrubbed when stored, and exports are built
only from the store. Nothing in a report can make its reader's viewer fetch anything: the
request, descriptions, errors and reasons are shown as written (no markup forms), the
answer keeps its Markdown without images or HTML, and step results sit in code blocks that
they cannot close (see core.base.markup).
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from collections import Counter
from typing import Any, Literal

from core.access.audit import Act, act_text, acts, owner_text
from core.base.language import Language
from core.base.markup import literal_text, markdown_text
from core.base.messages import TEXTS, msg, render
from core.base.text import preview
from core.errors import PlanBoardError
from core.plan.model import STATUS_ICONS, Plan, Step
from core.runs.timeline import meter_text, run_timeline, timeline_mermaid
from core.runs.view import skip_reason
from core.store.run_store import PlanVersion, RunRecord, RunStore, StoredEvent

__all__ = ["FORMATS", "ExportError", "GraphvizMissingError", "export_run", "run_to_dict"]

ExportFormat = Literal["json", "md", "dot", "svg"]
FORMATS: tuple[str, ...] = ("json", "md", "dot", "svg")
_CELL = 60


class ExportError(PlanBoardError):
    """Raised when a run cannot be exported in the asked format."""


class GraphvizMissingError(ExportError):
    """Raised when SVG is asked for but the Graphviz ``dot`` program is not installed."""


def export_run(store: RunStore, run_id: str, fmt: str, *,
               language: Language | None = None) -> str | bytes:
    """The run ``run_id`` as text (json, md, dot) or SVG bytes (svg); the Markdown report is
    worded in ``language`` (the reader's), else in the request's language."""
    if fmt not in FORMATS:
        raise ExportError(msg("export.unknown_format", fmt=repr(fmt), formats=", ".join(FORMATS)))
    record = store.get_run(run_id)
    if fmt == "dot":
        return _dot(record)
    if fmt == "svg":
        return render_svg(_dot(record))
    versions = store.plan_versions(run_id)
    events = store.events(run_id)
    done = acts(store, run_id=run_id)
    if fmt == "json":
        data = run_to_dict(record, versions, events, done)
        return json.dumps(data, ensure_ascii=False, indent=2, default=str)
    return run_to_markdown(record, versions, language=language, events=events, acts=done)


def run_to_dict(record: RunRecord, versions: list[PlanVersion],
                events: list[StoredEvent], done: list[Act] | None = None) -> dict[str, Any]:
    """The full record: run fields, latest plan, every plan version, every event and who
    did what on it (``audit``: each approval, edit, confirmation, cancel, re-run with the
    person).

    Secrets never reach the store (:func:`core.store.schema.scrub_settings`), so none
    reaches an export; a worker's steps name the worker, as ``show`` does.
    """
    data = record.model_dump(mode="json")
    data["plan_versions"] = [v.model_dump(mode="json") for v in versions]
    data["events"] = [e.model_dump(mode="json") for e in events]
    data["audit"] = [act.model_dump(mode="json", exclude={"run_id"}) for act in done or []]
    return data


def _dot(record: RunRecord) -> str:
    from core.plan.graph import plan_to_dot, side_effect_tool_names
    from core.tools.toolsets import default_registry

    if record.plan is None:
        raise ExportError(msg("export.no_plan", run_id=record.run_id))
    risky = side_effect_tool_names(default_registry())
    return plan_to_dot(record.plan, side_effect_tools=risky, folded=())  # every phase open


def render_svg(dot_text: str) -> bytes:
    """Render DOT text to SVG with the Graphviz ``dot`` program."""
    binary = shutil.which("dot")
    if binary is None:
        raise GraphvizMissingError(msg("export.no_graphviz"))
    try:
        done = subprocess.run([binary, "-Tsvg"], input=dot_text.encode("utf-8"),
                              capture_output=True, timeout=60, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise ExportError(msg("export.dot_failed", error=str(exc))) from None
    if done.returncode != 0:
        message = done.stderr.decode("utf-8", "replace").strip().splitlines()
        raise ExportError(msg("export.dot_error",
                              error=message[-1] if message else done.returncode))
    return done.stdout


# ---- Markdown ---------------------------------------------------------------------------

_LABELS = {
    "en": {"run": "Run", "request": "Request", "status": "Status", "created": "Created",
           "finished": "Finished", "plan": "Plan", "results": "Step results",
           "answer": "Answer", "usage": "Usage", "versions": "Plan versions",
           "version": "Version", "reason": "reason", "none": "(none)",
           "llm_calls": "LLM calls", "prompt": "prompt tokens", "completion": "completion tokens",
           "cols": ("Step", "Status", "Description", "Tool", "Depends on", "Result"),
           "settings": "Settings", "error": "Error", "skipped": "Skipped", "phase": "Phase",
           "phase_cols": ("Phase", "Status", "Title", "After", "Steps")},
    "zh": {"run": "运行", "request": "请求", "status": "状态", "created": "创建时间",
           "finished": "结束时间", "plan": "计划", "results": "各步骤结果",
           "answer": "答案", "usage": "用量", "versions": "计划版本历史",
           "version": "版本", "reason": "原因", "none": "（无）",
           "llm_calls": "大模型调用次数", "prompt": "提示词元数", "completion": "生成词元数",
           "cols": ("步骤", "状态", "描述", "工具", "依赖", "结果"),
           "settings": "设置", "error": "错误", "skipped": "跳过原因", "phase": "阶段",
           "phase_cols": ("阶段", "状态", "标题", "前置阶段", "步骤")},
}
# reasons the store writes itself, worded in the report's language; others are shown as written
_FIXED_REASONS = {"initial plan": "version.initial_plan", "manual edit": "version.manual_edit"}


def run_to_markdown(record: RunRecord, versions: list[PlanVersion], *,
                    language: Language | None = None,
                    events: list[StoredEvent] | None = None,
                    acts: list[Act] | None = None) -> str:
    """A readable report: request, who started it, plan table, step results, answer,
    usage, the timeline (a Mermaid ``gantt`` block, when ``events`` are given), who did
    what (``acts``: each approval and confirmation names the person), every version,
    worded in ``language`` (else the request's, which its plan holds); what people, models
    and tools wrote is shown as written."""
    lang = language or _request_language(record)
    t = {**_LABELS[lang], "lang": lang}
    lines = [
        f"# {t['run']} {record.run_id}",
        "",
        f"- **{t['request']}:** {_inline(record.request)}",
        f"- **{t['status']}:** {render(msg(f'run_status.{record.status}'), lang)}",
        f"- **{t['created']}:** {record.created_at.isoformat(timespec='seconds')}",
    ]
    if record.finished_at:
        lines.append(f"- **{t['finished']}:** {record.finished_at.isoformat(timespec='seconds')}")
    if record.settings:
        lines.append(f"- **{t['settings']}:** {_inline(_settings(record.settings, lang))}")
    if owner := owner_text(record, lang):
        lines.append(f"- {_inline(owner)}")
    lines.append("")
    if record.plan is not None:
        lines += [f"## {t['plan']} (v{record.plan.version})", "", *_phase_table(record.plan, t),
                  *_plan_table(record.plan, t),
                  "", f"## {t['results']}", "", *_step_results(record.plan, t)]
    lines += [f"## {t['answer']}", "", markdown_text(record.answer or t["none"]), "",
              f"## {t['usage']}", "",
              f"- {t['llm_calls']}: {record.usage.llm_calls}",
              f"- {t['prompt']}: {record.usage.prompt_tokens}",
              f"- {t['completion']}: {record.usage.completion_tokens}", ""]
    if events is not None and record.plan is not None:
        timeline = run_timeline(record, events)
        lines += [f"## {render(msg('timeline.heading'), lang)}", "",
                  *timeline_mermaid(timeline, lang), "",
                  f"_{_inline(meter_text(timeline.meter, lang))}_", ""]
    if acts:
        lines += [f"## {render(msg('audit.heading'), lang)}", "",
                  *(f"- {_inline(act_text(act, lang))}" for act in acts), ""]
    lines += [f"## {t['versions']}", ""]
    for version in versions:
        title = f"### {t['version']} {version.version}"
        if version.reason:
            fixed = _FIXED_REASONS.get(version.reason)
            reason = render(msg(fixed), lang) if fixed else version.reason
            title += f" — {t['reason']}: {_inline(reason)}"
        lines += [title, "", f"_{version.created_at.isoformat(timespec='seconds')}_", "",
                  *_plan_table(version.plan, t), ""]
    return "\n".join(lines).rstrip() + "\n"


def _settings(settings: dict[str, Any], lang: Language) -> str:
    """``key=value`` pairs; in Chinese the known keys and yes/no are worded too."""
    pairs = []
    for key, value in sorted(settings.items()):
        name = render(msg(f"setting.{key}"), lang) if f"setting.{key}" in TEXTS else key
        if isinstance(value, bool):
            value = render(msg("word.yes" if value else "word.no"), lang)
        pairs.append(f"{name}={value}")
    return ", ".join(pairs)


def _status(step: Step, lang: str) -> str:
    return render(msg(f"step_status.{step.status}"), lang)


def _phase_table(plan: Plan, t: dict[str, Any]) -> list[str]:
    """The phases (a plan with phases): status, title, the phases before, steps by status."""
    if not plan.phases:
        return []
    lang = t["lang"]
    rows = ["| " + " | ".join(t["phase_cols"]) + " |", "|" + "---|" * len(t["phase_cols"])]
    for phase_id, status in plan.phase_statuses().items():
        phase = plan.phase(phase_id)
        steps = plan.steps_of(phase_id)
        counts = ", ".join(f"{STATUS_ICONS[s]} {n}" for s, n in Counter(
            step.status for step in steps).items()) or "—"
        cells = [phase.id, f"{STATUS_ICONS[status]} {render(msg(f'step_status.{status}'), lang)}",
                 phase.title, ", ".join(phase.depends_on) or "—", counts]
        rows.append("| " + " | ".join(_cell(c) for c in cells) + " |")
    return [*rows, ""]


def _plan_table(plan: Plan, t: dict[str, Any]) -> list[str]:
    columns = [*t["cols"][:1], t["phase"], *t["cols"][1:]] if plan.phases else list(t["cols"])
    rows = ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    for step in plan.steps:
        result = step.result if step.status == "completed" else _why(step, t["lang"])
        cells = [
            step.id, f"{STATUS_ICONS.get(step.status, '')} {_status(step, t['lang'])}",
            step.description, step.tool or "—", ", ".join(step.depends_on) or "—",
            _preview(result) if result is not None else "",
        ]
        if plan.phases:
            cells.insert(1, step.phase or "—")
        rows.append("| " + " | ".join(_cell(c) for c in cells) + " |")
    return rows


def _why(step: Step, lang: str) -> str | None:
    """Why a step failed or was skipped, worded in ``lang`` when it carries a message code."""
    if step.status == "skipped":
        reason = skip_reason(step)
        detail = render(reason.message, lang) if reason.message else reason.detail
        return render(msg(f"skip.{reason.kind}", detail=detail or "—"), lang)
    if step.error_message is not None or step.error:
        return render(step.error_message or step.error, lang)
    return None


def _step_results(plan: Plan, t: dict[str, Any]) -> list[str]:
    lines: list[str] = []
    for step in plan.steps:
        lines += [f"### {_inline(step.id)} · {_status(step, t['lang'])} — "
                  f"{_inline(step.description)}", ""]
        if step.started_at or step.finished_at:
            span = " → ".join(x.isoformat(timespec="seconds")
                              for x in (step.started_at, step.finished_at) if x)
            lines += [f"_{span}_", ""]
        why = _why(step, t["lang"])
        if why:
            label = t["skipped"] if step.status == "skipped" else t["error"]
            lines += [f"**{label}:** {_inline(why)}", ""]
        if step.result is not None:
            body = step.result if isinstance(step.result, str) else json.dumps(
                step.result, ensure_ascii=False, indent=2, default=str)
            lines += _code_block(body, "" if isinstance(step.result, str) else "json")
    return lines


def _preview(value: Any) -> str:
    return preview(value, _CELL)


def _code_block(body: str, language: str) -> list[str]:
    """``body`` fenced by more backticks than any run inside it, so it cannot close early.

    Inside a code block nothing renders, but the body still goes through ``markdown_text``
    so that no report holds the makings of an image or a tag anywhere.
    """
    longest = max((len(run) for run in re.findall("`+", body)), default=0)
    fence = "`" * max(3, longest + 1)
    return [fence + language, markdown_text(body), fence, ""]


def _cell(text: str) -> str:
    return _inline(text)  # | is escaped with the rest of the markup


def _inline(text: str) -> str:
    """Untrusted text on one line, shown as written (no link, image, tag or emphasis)."""
    return literal_text(" ".join(str(text).split()))


def _request_language(record: RunRecord) -> Language:
    """The language its plan holds (a run recorded before it had a plan: its request's)."""
    return (record.plan or Plan(goal=record.request)).language

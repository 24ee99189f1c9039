"""Command-line commands for stored runs: runs, show, pause, resume, cancel, export."""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

from core.access.audit import act_text, acts, owner_text
from core.cli.output import ask, bounded_int, print_json, print_progress, short
from core.cli.text import cli_language, say
from core.errors import PlanBoardError
from core.lifecycle import RUN_STATUSES
from core.store.run_store import RunRecord

_RUN_WORDS = {"completed", "failed", "cancelled", "paused"}  # how a pass ends, said in words

__all__ = [
    "add_approve_replans",
    "add_run_commands",
    "cmd_cancel",
    "cmd_export",
    "cmd_pause",
    "cmd_resume",
    "cmd_runs",
    "cmd_show",
    "new_versions_policy",
    "report_run",
    "run_summary_json",
    "step_workers",
    "wait_answering",
]


def run_summary_json(record: RunRecord) -> dict[str, Any]:
    """The object ``run --json`` prints: id, status, answer, plan, versions, usage, wall_s;
    ``warnings`` when the run has some (its engine's record was lost while it ran); for a
    plan with phases also ``phases``: each one's id, title and status (derived from its
    steps) and how many steps it has."""
    summary = {
        "run_id": record.run_id,
        "status": record.status,
        "answer": record.answer,
        "plan": record.plan.model_dump(mode="json") if record.plan else None,
        "versions": record.versions,
        "usage": {
            "llm_calls": record.usage.llm_calls,
            "prompt_tokens": record.usage.prompt_tokens,
            "completion_tokens": record.usage.completion_tokens,
        },
        "wall_s": record.wall_s,
    }
    if record.options.get("warnings"):  # its engine's record was lost while it ran, say
        summary["warnings"] = list(record.options["warnings"])
    if record.plan is not None and record.plan.phases:
        summary["phases"] = [
            {"id": phase_id, "title": record.plan.phase(phase_id).title, "status": status,
             "steps": len(record.plan.steps_of(phase_id))}
            for phase_id, status in record.plan.phase_statuses().items()]
    return summary


def add_run_commands(subparsers: Any) -> None:
    """Add runs, show, pause, resume, cancel and export to the ``python -m core`` parser."""
    runs = subparsers.add_parser("runs", help="list the stored runs, newest first")
    runs.add_argument("--json", action="store_true", help="print JSON")
    runs.add_argument("--status", choices=RUN_STATUSES, help="only runs with this status")
    runs.add_argument("--limit", type=bounded_int(1, 10_000), default=100)
    runs.set_defaults(handler=cmd_runs)

    show = subparsers.add_parser("show", help="show one run with its plan and events")
    show.add_argument("run_id")
    show.add_argument("--json", action="store_true", help="print JSON")
    show.set_defaults(handler=cmd_show)

    pause = subparsers.add_parser("pause", help="pause a run (running steps finish)")
    pause.add_argument("run_id")
    pause.set_defaults(handler=cmd_pause)

    resume = subparsers.add_parser("resume", help="continue a paused or interrupted run")
    resume.add_argument("run_id")
    resume.add_argument("--yes", action="store_true",
                        help="do not ask; approve side-effecting steps of this run's "
                             "approved plan version (a step whose call may already have "
                             "happened before the run stopped is still asked)")
    add_approve_replans(resume)
    resume.add_argument("--json", action="store_true", help="print the result as JSON")
    resume.set_defaults(handler=cmd_resume)

    cancel = subparsers.add_parser("cancel", help="cancel a run")
    cancel.add_argument("run_id")
    cancel.set_defaults(handler=cmd_cancel)

    export = subparsers.add_parser("export", help="export a run as json, md, dot or svg")
    export.add_argument("run_id")
    export.add_argument("--format", dest="fmt", required=True,
                        choices=["json", "md", "dot", "svg"])
    export.add_argument("--out", type=Path, help="write to this file instead of stdout")
    export.set_defaults(handler=cmd_export)


def add_approve_replans(parser: argparse.ArgumentParser) -> None:
    """The opt-in for side effects that a later plan version adds or changes."""
    parser.add_argument(
        "--approve-replans", action="store_true",
        help="also run side-effecting steps that a later plan version (a replan, checkpoint, "
             "retry) adds or changes; without it --yes ends them as failed (needs approval) "
             "and an interactive run asks \"Approve the new version?\"; resume --yes "
             "rejects such a version, and the steps it adds do not run")


def new_versions_policy(args: argparse.Namespace) -> str:
    """What a new version that widens the approved plan meets: approve, refuse or ask."""
    if args.approve_replans:
        return "approve"
    return "refuse" if args.yes else "ask"


def _runner(args: argparse.Namespace) -> Any:
    """The command's runner (runs whose process has died are recorded as interrupted)."""
    return args.runner()


def cmd_runs(args: argparse.Namespace) -> int:
    """List run summaries (run_id, status, request, created_at), newest first; a run
    executed by workers also names them (``workers``, a column when any run has one)."""
    store = _runner(args).store
    access = _runner(args).access(None)
    records = [record for record in store.list_runs(status=args.status, limit=args.limit)
               if access.sees(record)]
    rows: list[dict[str, Any]] = []
    for r in records:
        rows.append({"run_id": r.run_id, "status": r.status, "request": r.request,
                     "created_at": r.created_at.isoformat()})
        if r.workflow_id and (workers := step_workers(store.events(r.run_id))):
            rows[-1]["workers"] = workers
    if args.json:
        print_json(rows)
        return 0
    if not rows:
        print(say("no_runs"))
    width = max((len(", ".join(row.get("workers", []))) for row in rows), default=0)
    for row in rows:
        created = row["created_at"][:19].replace("T", " ")
        workers = f"{', '.join(row.get('workers', [])):<{width}}  " if width else ""
        print(f"{row['run_id']}  {row['status']:<21} {created}  {workers}"
              f"{short(row['request'])}")
    return 0


def step_workers(events: list[Any]) -> list[str]:
    """The workers that ran the steps of a run, in the order they first appear."""
    names = (event.data.get("worker") for event in events if event.kind.startswith("step_"))
    return list(dict.fromkeys(name for name in names if name))


def cmd_show(args: argparse.Namespace) -> int:
    """Show a run: the summary object, a compact text timeline, and its events."""
    store = _runner(args).store
    record = store.get_run(args.run_id)
    _runner(args).access(None).require("read", record)
    events = store.events(args.run_id)
    done = acts(store, run_id=args.run_id)
    if args.json:
        summary = run_summary_json(record)
        summary["request"] = record.request
        summary["owner"] = record.options.get("owner")
        summary["events"] = [e.model_dump(mode="json", exclude={"run_id"}) for e in events]
        summary["audit"] = [act.model_dump(mode="json", exclude={"run_id"}) for act in done]
        print_json(summary)
        return 0
    print(f"run {record.run_id} · {record.status} · {record.request}")
    if owner := owner_text(record, cli_language()):
        print(owner)
    if record.plan is not None:
        print(record.plan.summary())
        for note in record.plan.check_notes:  # every check that changed it or warned
            print(say(f"check_{note.action}", **note.model_dump(include={
                "check", "version", "stage", "detail"})))
    print(f"answer: {record.answer or '(none)'}")
    u = record.usage
    print(f"usage: {u.llm_calls} LLM calls, {u.prompt_tokens}+{u.completion_tokens} tokens, "
          f"{record.wall_s:.1f} s")
    if record.plan is not None:
        from core.runs.timeline import run_timeline, timeline_text

        print("\n".join(timeline_text(run_timeline(record, events), cli_language())))
    for act in done:
        print(f"  {act_text(act, cli_language())}")
    for event in events:
        step = f" {event.step_id}" if event.step_id else ""
        worker = event.data.get("worker") if event.kind.startswith("step_") else None
        where = f" ({say('on_worker', name=worker)})" if worker else ""
        print(f"  {event.seq:>3} {event.at.isoformat(timespec='seconds')} "
              f"{event.kind}{step}{where}")
    return 0


def cmd_pause(args: argparse.Namespace) -> int:
    """Ask a run to pause."""
    _runner(args).pause(args.run_id)
    print(say("pause_requested", run_id=args.run_id))
    return 0


def cmd_cancel(args: argparse.Namespace) -> int:
    """Cancel a run and report once the cancellation is recorded."""
    record = _runner(args).cancel(args.run_id)
    print(f"run {record.run_id}: {record.status}")
    return 0


def cmd_resume(args: argparse.Namespace) -> int:
    """Continue a paused or interrupted run here and report how it ended."""
    runner = _runner(args)
    record = runner.store.get_run(args.run_id)
    out = sys.stderr if args.json else sys.stdout
    if record.plan is not None:
        print(record.plan.summary(), file=out)
    if not args.yes and not ask(say("resume_ask", run_id=args.run_id)):
        print(say("not_resumed"), file=out)
        return 1
    runner.resume(args.run_id, on_event=lambda event: print_progress(event, out))
    print(f"run {args.run_id}", file=out)
    # the run goes on with the options it started with; what it asks is answered as the
    # options of this command say (--yes: run its side effects; new versions: see --yes)
    record = wait_answering(runner, args.run_id, out, confirm=args.yes or None,
                            new_versions=new_versions_policy(args))
    if args.json:
        print_json(run_summary_json(record))
    else:
        print(f"\n{record.status}: {record.answer or say('no_answer')}", file=out)
    return 0 if record.status == "completed" else 1


def wait_answering(runner: Any, run_id: str, out: Any, *, confirm: bool | None = None,
                   new_versions: str = "ask", registry: Any = None) -> RunRecord:
    """Wait for the run; ask on the terminal whenever it waits for a person's decision:
    a new plan version beyond the approved one, or a side-effecting step (its tool, and
    its arguments as they will be sent, before "y/N"). ``confirm`` answers the
    side-effecting steps without asking, except a step whose call may already have
    happened before the run stopped (always asked); ``new_versions`` (approve, refuse or
    ask) the new versions. ``registry`` (the run's tools, when at hand) also names the
    arguments the model writes when the step runs."""
    from core.runs.view import load_run_view

    while True:
        record = runner.wait(run_id, until_confirmation=True)
        if record.status != "waiting_confirmation":
            return record
        view = load_run_view(runner.store, run_id)
        if view.version_wait is not None:
            _ask_version(runner, run_id, view.version_wait, out, new_versions)
        elif view.waiting:
            step_id = view.waiting[-1]
            if _ask_step(view, step_id, out, confirm, registry):
                runner.confirm(run_id, step_id)
            else:
                runner.reject(run_id, step_id)
        else:
            return record
        runner.wait(run_id, timeout=5)  # let the decision land before asking again


def _ask_step(view: Any, step_id: str, out: Any, confirm: bool | None, registry: Any) -> bool:
    """Show the waiting step's tool and its arguments as they will be sent, and ask. A
    step whose argument cannot be resolved is not confirmed: what is confirmed is what
    runs."""
    from core.execution.context import arguments_sent

    step = view.plan.step(step_id)
    arguments = arguments_sent(view.plan, step, registry)
    in_doubt = step_id in view.in_doubt
    if in_doubt:  # --yes approved the plan, not a second call
        print(say("in_doubt", step_id=step_id), file=out)
    print(say("side_effect_step", step_id=step_id, tool=step.tool), file=out)
    for line in _argument_lines(arguments):
        print(line, file=out)
    if any(argument.problem is not None for argument in arguments):
        print(say("cannot_confirm", step_id=step_id), file=out)
        return False
    if in_doubt:
        return ask(say("run_again", step_id=step_id))
    return confirm if confirm is not None else ask(say("run_step", step_id=step_id))


def _argument_lines(arguments: list[Any]) -> list[str]:
    """Each argument on a line of its own, as it will be sent (``user_id: 42 ←
    s1.user_id``), or why it has no value yet."""
    from core.base.messages import render
    from core.cli.text import cli_language

    if not arguments:
        return [say("no_arguments")]
    lines = []
    for argument in arguments:
        if argument.by_model:
            lines.append(say("argument_by_model", name=argument.name))
        elif argument.problem is not None:
            lines.append(say("argument_unresolved", name=argument.name,
                             reason=render(argument.problem, cli_language())))
        else:
            value = argument.value
            text = value if isinstance(value, str) and value else json.dumps(
                value, ensure_ascii=False, default=str)
            source = f" ← {', '.join(argument.sources)}" if argument.sources else ""
            lines.append(say("argument", name=argument.name, value=text, source=source))
    return lines


def _ask_version(runner: Any, run_id: str, wait: Any, out: Any, policy: str) -> None:
    """Show the new version's widening steps and its diff; approve the version as
    ``policy`` says (approve, refuse), or ask."""
    from core.cli.text import cli_language
    from core.plan.diff import format_diff

    print(say("new_version", version=wait.version, approved=wait.approved_version,
              steps=", ".join(wait.steps)), file=out)
    if wait.diff is not None:
        print(format_diff(wait.diff, cli_language()), file=out)
    approved = policy == "approve" or (policy == "ask" and ask(say("approve_version")))
    runner.decide_version(run_id, wait.version, approved)


def cmd_export(args: argparse.Namespace) -> int:
    """Export a run; write to --out or stdout."""
    from core.runs.export import export_run

    runner = _runner(args)
    runner.access(None).require("read", runner.store.get_run(args.run_id))
    content = export_run(runner.store, args.run_id, args.fmt)
    data = content.encode("utf-8") if isinstance(content, str) else content
    if args.out is not None:
        try:
            args.out.write_bytes(data)
        except OSError as exc:
            raise PlanBoardError(
                f"cannot write {args.out}: {exc.strerror}; choose another --out path"
            ) from None
        print(say("wrote", path=args.out), file=sys.stderr)
        return 0
    sys.stdout.flush()
    sys.stdout.buffer.write(data)
    sys.stdout.buffer.flush()
    return 0


def report_run(record: Any, as_json: bool, started: float, out: Any, route: Any) -> int:
    """Print how a run ended (JSON or the answer); exit code 0 only when it completed."""
    summary = run_summary_json(record)
    summary["wall_s"] = round(time.monotonic() - started, 3)
    if route is not None:
        summary["mode"], summary["route_reason"] = route.mode, route.reason
    if as_json:
        print_json(summary)
    else:
        status = summary["status"]
        # a status the command line has no word for is shown as stored rather than hidden
        word = say(f"run_{status}") if status in _RUN_WORDS else status
        print("\n" + say("run_ended", status=word, answer=summary["answer"] or say("no_answer")),
              file=out)
        for warning in summary.get("warnings", []):
            print(say("warning", text=warning), file=out)
    return 0 if summary["status"] == "completed" else 1

"""``python -m core rerun``: run a finished run again from one step, optionally edited."""

from __future__ import annotations

import argparse
import json
import sys
import time
from typing import Any

from core.base.messages import json_error, render
from core.cli.output import ask
from core.cli.runs import add_approve_replans, new_versions_policy, report_run, wait_answering
from core.cli.text import cli_language, say
from core.cli.workers import following_continued_run
from core.errors import ConfigError

__all__ = ["add_rerun_command"]


def add_rerun_command(subparsers: Any) -> None:
    """Add ``rerun`` to the ``python -m core`` parser."""
    rerun = subparsers.add_parser(
        "rerun", help="run a finished run again from one step (optionally edited); the steps "
                      "before it keep their results and are not run again")
    rerun.add_argument("run_id")
    rerun.add_argument("--from", dest="step_id", required=True, metavar="STEP",
                       help="the step to run again, with every step that depends on it")
    rerun.add_argument("--args", help="the step's new arguments, a JSON object (all of them)")
    rerun.add_argument("--tool", help="the step's new tool")
    rerun.add_argument("--description", help="the step's new description")
    rerun.add_argument("--condition", help="the step's new condition (\"\" clears it)")
    rerun.add_argument("--yes", action="store_true",
                       help="approve the re-run shown, its side effects included, without "
                            "asking (only that version: see --approve-replans)")
    add_approve_replans(rerun)
    rerun.add_argument("--json", action="store_true", help="print the result as JSON")
    rerun.set_defaults(handler=cmd_rerun)


def cmd_rerun(args: argparse.Namespace) -> int:
    """Prepare the re-run, show its diff and what runs again, ask (unless --yes), run it."""
    from core.plan.diff import format_diff
    from core.runs.recovery import engine_for_record
    from core.runs.rerun import prepare_rerun

    runner = args.runner()
    out = sys.stderr if args.json else sys.stdout
    edit = _edit(args)
    record = runner.store.get_run(args.run_id)
    engine = engine_for_record(record)  # the run's own tools and model
    prepared = prepare_rerun(record, args.step_id, edit, engine.registry,
                             can_infer=engine.model is not None)
    print(prepared.plan.summary(), file=out)
    print(format_diff(prepared.diff, cli_language()), file=out)
    kept = [step.id for step in prepared.plan.steps if step.id not in prepared.again]
    print(say("rerun_again", steps=", ".join(prepared.again), kept=", ".join(kept) or "—"),
          file=out)
    for step_id in prepared.side_effects:
        print(say("rerun_side_effect", step_id=step_id,
                  tool=prepared.plan.step(step_id).tool), file=out)
    if not args.yes and not ask(say("rerun_ask", step_id=args.step_id)):
        print(say("not_rerun"), file=out)
        return 1
    started = time.monotonic()
    following, on_event = following_continued_run(runner.store, record.run_id, out)
    runner.rerun(prepared, engine=engine, on_event=on_event)
    print(f"run {record.run_id}", file=out)
    with following:
        finished = wait_answering(runner, record.run_id, out, confirm=args.yes or None,
                                  new_versions=new_versions_policy(args))
    return report_run(finished, args.json, started, out, None)


def _edit(args: argparse.Namespace) -> Any:
    """The person's edit of the step (a StepEdit) from the options given."""
    from core.plan.rerun import StepEdit

    given: dict[str, Any] = {name: getattr(args, name) for name in ("tool", "description",
                             "condition") if getattr(args, name) is not None}
    if args.args is not None:
        try:
            given["args"] = json.loads(args.args)
        except json.JSONDecodeError as exc:
            raise ConfigError(say("args_not_json", option="--args",
                                   error=render(json_error(exc), cli_language()))) from None
        if not isinstance(given["args"], dict):
            raise ConfigError(say("args_not_object", option="--args"))
    return StepEdit(**given)

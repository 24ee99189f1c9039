"""``refine RUN_ID "…"`` and ``plan --refine FILE "…"``: revise a plan with a sentence.

The planner revises the plan (core.planning.refine); the command prints what changed (the
diff) before anything runs. ``refine`` then asks, as ``run`` does, whether to execute the
refined plan: a new run whose first version is the refined run's plan and whose second,
the approved one, is the refinement. A run that a process still executes is refused, and
so is every bad input, before anything is recorded.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

from core.base.messages import msg
from core.cli.output import print_json, print_progress
from core.cli.plans import approved_to_run, load_plan_file
from core.cli.runs import add_approve_replans
from core.cli.text import cli_language, say
from core.errors import ConfigError, StoreError
from core.llm.engine import Engine
from core.plan.diff import diff_plans, format_diff
from core.plan.model import Plan

__all__ = ["add_refine_command", "refine_plan_file"]


def add_refine_command(subparsers: Any) -> None:
    """Add ``refine`` to the ``python -m core`` parser."""
    refine = subparsers.add_parser(
        "refine", help="revise a run's plan with a sentence, show the diff, run it if approved")
    refine.add_argument("run_id")
    refine.add_argument("sentence", help="what the planner should change")
    refine.add_argument("--yes", action="store_true",
                        help="run the refined plan and its side effects without asking")
    add_approve_replans(refine)
    refine.add_argument("--json", action="store_true", help="print the result as JSON")
    refine.set_defaults(handler=cmd_refine)


def cmd_refine(args: argparse.Namespace) -> int:
    """Refine the current plan of a stopped run; on approval run it as a new run."""
    from core.cli.runs import new_versions_policy, report_run, wait_answering
    from core.execution.options import RunOptions
    from core.lifecycle import UNFINISHED_STATUSES
    from core.planning.refine import refine_plan
    from core.runs.dispatch import is_executing
    from core.runs.session import public_settings

    _require_sentence(args.sentence)
    runner = args.runner()
    record = runner.store.get_run(args.run_id)
    if record.plan is None:
        raise ConfigError(msg("refine.no_plan", run_id=args.run_id))
    if record.status in UNFINISHED_STATUSES and is_executing(record):
        raise StoreError(msg("refine.run_executing", run_id=args.run_id,
                             status=msg(f"run_status.{record.status}")))
    out = sys.stderr if args.json else sys.stdout
    engine = _refining_engine()
    current = _definition(record.plan)
    refined, usage = refine_plan(current, args.sentence, engine)
    print(say("refining_run", run_id=args.run_id, version=record.plan.version), file=out)
    print(format_diff(diff_plans(current, refined), cli_language()), file=out)
    if not approved_to_run(refined, engine, args.yes, out):
        return 1
    started = time.monotonic()
    options = RunOptions(confirm_side_effects=not args.yes,  # as run's: core.cli.main
                         new_versions=new_versions_policy(args))
    run_id = runner.start(record.request, refined, engine=engine, options=options,
                          settings_public=public_settings(offline=False), planning_usage=usage,
                          drafted=current, on_event=lambda event: print_progress(event, out))
    print(f"run {run_id}", file=out)
    return report_run(wait_answering(runner, run_id, out, registry=engine.registry), args.json,
                      started, out, None)


def refine_plan_file(path: Path, sentence: str, *, as_json: bool) -> int:
    """``plan --refine FILE "…"``: print the diff, then the refined plan (JSON with
    ``as_json``, the diff then going to stderr)."""
    from core.planning.refine import refine_plan

    _require_sentence(sentence)
    current = load_plan_file(path)
    refined, _ = refine_plan(current, sentence, _refining_engine())
    print(format_diff(diff_plans(current, refined), cli_language()),
          file=sys.stderr if as_json else sys.stdout)
    if as_json:
        print_json(refined.canonical())
        return 0
    print(refined.summary())
    for warning in refined.warnings:
        print(say("warning", text=warning), file=sys.stderr)
    return 0


def _require_sentence(sentence: str) -> None:
    if not sentence.strip():
        raise ConfigError(msg("refine.empty"))


def _refining_engine() -> Engine:
    """The engine with the configured model; without one, the offline engine, which
    :func:`core.planning.refine.refine_plan` refuses saying that refining needs a model."""
    from core.llm.settings import LLMSettings
    from core.runs.session import build_engine

    return build_engine(offline=not LLMSettings.from_env().configured)


def _definition(plan: Plan) -> Plan:
    """The plan's steps as defined, without what a run recorded on them (a new run starts
    from pending steps), as version 1 of the new run."""
    return Plan.model_validate({**plan.canonical(), "id": plan.id, "warnings": []})

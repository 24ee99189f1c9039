"""``run --dry-run`` and ``plan --rehearse``: a plan rehearsed instead of run.

The plan is drafted (or read from ``--plan FILE``) and validated as for a run, then each
step is simulated from its tool's declared results (core.execution.rehearsal): no tool is
called and no run is recorded. The command exits 1 when the rehearsal finds a problem, so
that a script can stop before running a plan that would meet one.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from typing import Any

from core.cli.output import print_json
from core.cli.plans import load_plan_file
from core.cli.text import cli_language, say
from core.errors import ConfigError
from core.plan.model import Plan

__all__ = ["add_rehearsal_options"]

Handler = Callable[[argparse.Namespace], int]
Drafter = Callable[..., tuple[Plan, Any]]


def add_rehearsal_options(run: argparse.ArgumentParser, plan: argparse.ArgumentParser, *,
                          draft: Drafter) -> None:
    """Give ``run`` its ``--dry-run`` and ``plan`` its ``--rehearse``; either flag turns the
    command into a rehearsal of the plan it would run or print (``draft`` drafts a plan for
    a request, answering the planner's questions, as the commands themselves do)."""
    run.add_argument("--dry-run", action="store_true",
                     help="rehearse instead of running: simulate each step from its tool's "
                          "declared results, call no tool, record no run")
    plan.add_argument("--rehearse", action="store_true",
                      help="rehearse the plan: simulate each step and report what its run "
                           "would meet (calls no tool)")

    def rehearsing(flag: str, command: Handler) -> Handler:
        def handler(args: argparse.Namespace) -> int:
            if not getattr(args, flag):
                return command(args)
            return _rehearse(args, draft=draft)
        return handler

    run.set_defaults(handler=rehearsing("dry_run", run.get_default("handler")))
    plan.set_defaults(handler=rehearsing("rehearse", plan.get_default("handler")))


def _rehearse(args: argparse.Namespace, *, draft: Drafter) -> int:
    from core.execution.rehearsal import rehearse
    from core.runs.session import build_engine

    if args.mode != "plan":
        raise ConfigError(say("rehearsal_plan_only", mode=args.mode))
    if getattr(args, "refine", None):
        raise ConfigError(say("rehearsal_not_refined"))
    plan_file = getattr(args, "plan", None)
    if not args.request and not plan_file:
        raise ConfigError(say("rehearsal_needs_plan"))
    engine = build_engine(offline=args.offline)
    if plan_file:
        plan = load_plan_file(plan_file, args.request)
    else:
        from core.store.run_store import RunStore

        plan, _ = draft(args.request, engine, ask_questions=not getattr(args, "yes", False),
                        store=RunStore())
    plan.raise_if_invalid(engine.registry)
    rehearsal = rehearse(plan, engine.registry, model_available=not engine.offline)
    language = cli_language()
    report = rehearsal.report(language)
    if args.json:
        print_json({"plan": plan.canonical(), "rehearsal": report})
    else:
        _print_report(plan, report)
    return 1 if rehearsal.problems else 0


def _print_report(plan: Plan, report: dict[str, Any]) -> None:
    out = sys.stdout
    print(plan.summary(), file=out)
    print(say("rehearsal", problems=len(report["problems"]),
              effects=len(report["side_effects"]), calls=report["llm_calls"]), file=out)
    for key, line in (("problems", "rehearsal_problem"), ("side_effects", "rehearsal_side_effect"),
                      ("notes", "rehearsal_note")):
        for finding in report[key]:
            print(say(line, text=finding["text"]), file=out)

"""Command-line verbs of adaptive planning: route, lessons and follow-up."""

from __future__ import annotations

import argparse
import sys
import time
from typing import Any

from core.cli.output import ask, print_json, short
from core.cli.text import cli_language, say
from core.cli.workers import following_continued_run
from core.errors import ConfigError

__all__ = ["add_adaptive_commands"]


def add_adaptive_commands(subparsers: Any) -> None:
    """Add ``route``, ``lessons`` and ``followup`` to the ``python -m core`` parser."""
    route = subparsers.add_parser("route", help="say how a request would be handled")
    route.add_argument("request")
    route.add_argument("--offline", action="store_true", help="use the rule-based router")
    route.add_argument("--json", action="store_true", help="print {mode, reason}")
    route.set_defaults(handler=cmd_route)

    lessons = subparsers.add_parser("lessons", help="list the lessons learnt from runs")
    lessons.add_argument("--json", action="store_true", help="print JSON")
    lessons.set_defaults(handler=cmd_lessons)

    followup = subparsers.add_parser("followup", help="extend a finished run and run the new steps")
    followup.add_argument("run_id")
    followup.add_argument("request", help="what to do in addition")
    followup.add_argument("--offline", action="store_true", help="plan the new steps offline")
    followup.add_argument("--yes", action="store_true", help="run without asking")
    followup.add_argument("--json", action="store_true", help="print the result as JSON")
    followup.set_defaults(handler=cmd_followup)


def cmd_route(args: argparse.Namespace) -> int:
    from core.runs.session import build_engine, choose_route

    route, _ = choose_route(args.request, build_engine(offline=args.offline), "auto")
    if args.json:
        print_json({"mode": route.mode, "reason": route.reason})
    else:
        print(f"{route.mode}: {route.reason_in(cli_language())}")
    return 0


def cmd_lessons(args: argparse.Namespace) -> int:
    from core.learning.lessons import LessonBook

    lessons = LessonBook(args.runner().store).list_lessons()
    if args.json:
        print_json([lesson.model_dump(mode="json") for lesson in lessons])
        return 0
    if not lessons:
        print(say("no_lessons"))
    for lesson in lessons:
        state = "" if lesson.enabled else " (disabled)"
        print(f"#{lesson.id}{state} from run {lesson.run_id or '-'}: {short(lesson.text, 100)}")
    return 0


def cmd_followup(args: argparse.Namespace) -> int:
    from core.cli.runs import report_run
    from core.planning.followup import extend_plan_request
    from core.runs.followable import require_followable
    from core.runs.session import build_engine

    runner = args.runner()
    out = sys.stderr if args.json else sys.stdout
    record = runner.store.get_run(args.run_id)
    if record.plan is None:
        raise ConfigError(f"run {args.run_id} has no plan to extend; start a new request")
    require_followable(record)  # before a model plans the new steps
    engine = build_engine(offline=args.offline)
    plan, usage = extend_plan_request(record.plan, args.request, engine)
    plan.raise_if_invalid(engine.registry, can_infer=engine.model is not None)
    print(plan.summary(), file=out)
    if not args.yes and not ask(say("execute_new")):
        print(say("not_executed"), file=out)
        return 1
    started = time.monotonic()
    following, on_event = following_continued_run(runner.store, record.run_id, out)
    runner.follow_up(record.run_id, args.request, engine=engine, prepared=(plan, usage),
                     on_event=on_event)
    with following:
        finished = runner.wait(record.run_id)
    return report_run(finished, args.json, started, out, None)

"""The ``python -m core`` command line: tools, plans, runs and demo data from a terminal."""

from __future__ import annotations

import argparse
import json
import logging
import sys
import time
from pathlib import Path
from typing import Any

from core.errors import ConfigError, PlanBoardError
from core.events import RunEvent
from core.plan import STATUS_ICONS, Plan
from core.usage import Usage

__all__ = ["main"]

log = logging.getLogger(__name__)


def main(argv: list[str] | None = None) -> int:
    """Parse arguments, run one command, and turn every PlanBoardError into exit code 1."""
    from dotenv import load_dotenv

    load_dotenv()
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    args = build_parser().parse_args(argv)
    try:
        return int(args.handler(args) or 0)
    except PlanBoardError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130


def build_parser() -> argparse.ArgumentParser:
    """The argument parser with every sub-command."""
    from core.cli_runs import add_run_commands

    parser = argparse.ArgumentParser(
        prog="python -m core", description="PlanBoard: plan, review and run LLM agent tasks."
    )
    commands = parser.add_subparsers(dest="command", required=True)

    tools = commands.add_parser("tools", help="list the tools and their schemas")
    tools.add_argument("--json", action="store_true", help="print JSON")
    tools.set_defaults(handler=cmd_tools)

    call = commands.add_parser("call", help="run one tool directly")
    call.add_argument("tool")
    call.add_argument("--args", default="{}", help="arguments as a JSON object")
    call.add_argument("--json", action="store_true", help="print only the result object")
    call.set_defaults(handler=cmd_call)

    plan = commands.add_parser("plan", help="make a plan for a request and print it")
    plan.add_argument("request")
    _add_planning_options(plan)
    plan.set_defaults(handler=cmd_plan)

    run = commands.add_parser("run", help="plan a request (or load --plan FILE) and run it")
    run.add_argument("request", nargs="?", default="")
    run.add_argument("--plan", type=Path, help="run this plan file instead of planning")
    run.add_argument("--yes", action="store_true", help="run without asking for approval")
    run.add_argument("--max-parallel", type=_positive_int, default=4)
    run.add_argument("--max-replans", type=_non_negative_int, default=2)
    _add_planning_options(run)
    run.set_defaults(handler=cmd_run)

    scenarios = commands.add_parser("scenarios", help="list the example requests")
    scenarios.add_argument("--json", action="store_true")
    scenarios.set_defaults(handler=cmd_scenarios)

    demo = commands.add_parser("demo", help="manage the demo data")
    demo_commands = demo.add_subparsers(dest="demo_command", required=True)
    demo_commands.add_parser("reset", help="recreate the demo databases").set_defaults(
        handler=cmd_demo_reset
    )

    add_run_commands(commands)
    return parser


def _add_planning_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", action="store_true", help="print JSON")
    parser.add_argument(
        "--offline", action="store_true", help="use the rule-based planner, no LLM"
    )


def _positive_int(text: str) -> int:
    value = _non_negative_int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {text}")
    return value


def _non_negative_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a whole number, got {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"must not be negative, got {text}")
    return value


# ---- commands ---------------------------------------------------------------------------


def cmd_tools(args: argparse.Namespace) -> int:
    from core.tools.catalog import default_registry

    registry = default_registry()
    if args.json:
        _print_json(registry.catalogue())
        return 0
    for entry in registry:
        flag = "  [side effect]" if entry.side_effect else ""
        params = ", ".join(entry.parameters.get("properties", {}))
        print(f"{entry.name}({params}){flag}\n    {entry.description}")
    return 0


def cmd_call(args: argparse.Namespace) -> int:
    from core.tools.catalog import default_registry

    arguments = _parse_json_object(args.args, "--args")
    result = default_registry().call(args.tool, arguments)
    _print_json(result)
    return 0


def cmd_plan(args: argparse.Namespace) -> int:
    from core.session import build_engine, plan_for_request

    engine = build_engine(offline=args.offline)
    plan, _usage = plan_for_request(args.request, engine)
    if args.json:
        _print_json(plan.canonical())
    else:
        print(plan.summary())
        for warning in plan.warnings:
            print(f"warning: {warning}", file=sys.stderr)
    return 0


def cmd_run(args: argparse.Namespace) -> int:
    from core.executor import predict_llm_calls
    from core.runner import get_runner
    from core.scheduler import RunOptions
    from core.session import build_engine, plan_for_request, public_settings

    if not args.request and not args.plan:
        raise ConfigError("Give a request to plan, or a plan file with --plan FILE.")
    engine = build_engine(offline=args.offline)
    if args.plan:
        plan, planning_usage = _load_plan_file(args.plan, args.request), Usage()
    else:
        plan, planning_usage = plan_for_request(args.request, engine)
    plan.raise_if_invalid(engine.registry)
    out = sys.stderr if args.json else sys.stdout
    print(plan.summary(), file=out)
    print(
        f"{len(plan.steps)} steps, critical path {plan.critical_path_length()}, "
        f"about {predict_llm_calls(plan, engine.registry, offline=engine.offline)} LLM calls",
        file=out,
    )
    if not args.yes and not _ask("Execute? [y/N] "):
        print("Not executed.", file=out)
        return 1
    options = RunOptions(max_parallel=args.max_parallel, max_replans=args.max_replans)
    started = time.monotonic()
    runner = get_runner()
    run_id = runner.start(
        plan.goal, plan, engine=engine, options=options,
        settings_public=public_settings(offline=engine.offline),
        on_event=lambda event: _print_progress(event, out), planning_usage=planning_usage,
    )
    print(f"run {run_id}", file=out)
    record = runner.wait(run_id)
    return _report_run(record, args.json, time.monotonic() - started, out)


def cmd_scenarios(args: argparse.Namespace) -> int:
    from core.scenarios import SCENARIOS

    if args.json:
        _print_json([scenario.model_dump() for scenario in SCENARIOS])
        return 0
    for scenario in SCENARIOS:
        print(f"{scenario.id}: {scenario.title_en} / {scenario.title_zh}")
        print(f"    en: {scenario.request_en}\n    zh: {scenario.request_zh}")
    return 0


def cmd_demo_reset(args: argparse.Namespace) -> int:
    from core.demo import reset_demo_data

    location = reset_demo_data()
    print(f"Demo data recreated in {location}")
    return 0


# ---- helpers ----------------------------------------------------------------------------


def _report_run(record: Any, as_json: bool, wall_s: float, out: Any) -> int:
    from core.cli_runs import run_summary_json

    summary = run_summary_json(record)
    summary["wall_s"] = round(wall_s, 3)
    if as_json:
        _print_json(summary)
    else:
        print(f"\n{summary['status']}: {summary['answer'] or '(no answer)'}", file=out)
    return 0 if summary["status"] == "completed" else 1


def _print_progress(event: RunEvent, out: Any) -> None:
    if event.step_id is None or not event.kind.startswith("step_"):
        if event.kind in {"replanned", "waiting_confirmation", "paused", "cancelled"}:
            print(f"  [{event.kind}] {event.data.get('reason', '')}".rstrip(), file=out)
        return
    status = event.kind.removeprefix("step_")
    icon = STATUS_ICONS.get("running" if status == "started" else status, "·")
    detail = event.data.get("error") or event.data.get("mode") or ""
    print(f"  {icon} {event.step_id} {status} {detail}".rstrip(), file=out, flush=True)


def _load_plan_file(path: Path, request: str) -> Plan:
    from core.plan_parser import parse_plan

    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"Cannot read plan file {path}: {exc.strerror}.") from None
    plan = parse_plan(text, goal=request or path.stem)
    if request:
        plan.goal = request
    return plan


def _parse_json_object(text: str, option: str) -> dict[str, Any]:
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ConfigError(f"{option} is not valid JSON ({exc.msg}); pass an object like "
                          "'{\"order_id\": \"88231\"}'.") from None
    if not isinstance(value, dict):
        raise ConfigError(f"{option} must be a JSON object like '{{\"key\": \"value\"}}'.")
    return value


def _ask(question: str) -> bool:
    try:
        return input(question).strip().lower() in {"y", "yes"}
    except EOFError:  # no terminal and nothing piped in: treat as "no"
        print("\nNo answer read; pass --yes to run without asking.", file=sys.stderr)
        return False


def _print_json(value: Any) -> None:
    print(json.dumps(value, ensure_ascii=False, indent=2, default=str))

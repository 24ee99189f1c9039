"""The ``python -m core`` command line: tools, plans, runs and demo data from a terminal."""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from core.base.messages import json_error, render
from core.base.usage import Usage
from core.cli.output import (
    ask_text,
    bounded_float,
    bounded_int,
    print_error,
    print_json,
    print_progress,
)
from core.cli.people import add_people_commands, require_for_command
from core.cli.plans import approved_to_run, load_plan_file
from core.cli.runs import add_approve_replans, new_versions_policy, report_run, wait_answering
from core.cli.text import cli_language, say
from core.errors import ConfigError, PlanBoardError
from core.plan.model import Plan
from core.planning.choices import (
    CHECKPOINT_POLICIES,
    DEFAULT_POLICY,
    PLANNED_MODES,
    REQUEST_MODES,
)

if TYPE_CHECKING:
    from core.runs.runner import Runner

__all__ = ["build_parser", "main"]

logger = logging.getLogger(__name__)



def main(argv: list[str] | None = None) -> int:
    """Parse arguments, run one command, and turn every PlanBoardError into exit code 1."""
    from dotenv import find_dotenv, load_dotenv

    load_dotenv(find_dotenv(usecwd=True))  # the .env of the directory you run from
    args = build_parser().parse_args(argv)
    args.runner = _CommandRunner()
    # what a user needs is printed by the commands; the log is for --verbose
    logging.basicConfig(level=logging.INFO if args.verbose else logging.ERROR,
                        format="%(levelname)s %(name)s: %(message)s")
    # a database away for a moment is said in two lines (away, back), and a lost engine
    # record in one, verbose or not
    for said in ("core.store.database", "core.runs.durable"):
        logging.getLogger(said).setLevel(logging.WARNING)
    try:
        _require_utf8(sys.argv[1:] if argv is None else argv)
        require_for_command(args)
        code = int(args.handler(args) or 0)
        args.runner.warn_record_lost()
        sys.stdout.flush()  # a reader that went away (``| head``) shows here, not at exit
        return code
    except BrokenPipeError:
        _drop_stdout()
        return 0
    except PlanBoardError as exc:
        print_error(exc, render(exc, cli_language()), as_json=getattr(args, "json", False))
        return 1
    except OSError as exc:  # a file or database the OS refused: say which, no traceback
        where = f" ({exc.filename})" if exc.filename else ""
        print_error(exc, f"{exc.strerror or exc}{where}; check the path and its permissions.",
                    as_json=getattr(args, "json", False))
        return 1
    except KeyboardInterrupt:
        paused = args.runner.close()
        print(say("interrupted_paused", run_id=paused[0]) if paused else say("interrupted"),
              file=sys.stderr)
        return 130
    finally:
        args.runner.close()


class _CommandRunner:
    """The runner of one command: opened on first use, closed when the command ends."""

    def __init__(self) -> None:
        self._runner: Runner | None = None

    def __call__(self) -> Runner:
        """The runner (crashed runs are recorded as interrupted when it opens)."""
        if self._runner is None:
            from core.runs.runner import open_runner

            self._runner = open_runner()
        return self._runner

    def warn_record_lost(self) -> None:
        """After a command that needed only the run store: say that the engine's record is
        lost (a command that needed it said so instead, as its error)."""
        if self._runner is not None and self._runner.record_lost is not None:
            print(say("warning", text=render(self._runner.record_lost, cli_language())),
                  file=sys.stderr)

    def close(self) -> list[str]:
        """Pause the runs still going, close the runner; return the paused runs' ids."""
        runner, self._runner = self._runner, None
        if runner is None:
            return []
        paused = runner.pause_all(timeout=30)
        runner.close()
        return paused


def _drop_stdout() -> None:
    """Point stdout at /dev/null so the interpreter's final flush cannot fail again.

    The reader of a pipe stopped reading (``runs | head -1``): that is its choice, not an
    error, so the command ends quietly (the way the Python docs recommend for SIGPIPE).
    """
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):  # stdout without a file descriptor (captured in tests)
        pass


def _require_utf8(arguments: list[str]) -> None:
    for argument in arguments:
        try:
            argument.encode("utf-8")
        except UnicodeEncodeError:
            raise ConfigError("An argument is not valid UTF-8 text; set a UTF-8 locale "
                              "(for example LANG=C.UTF-8) and type it again.") from None


def build_parser() -> argparse.ArgumentParser:
    """The argument parser with every sub-command."""
    from core.cli.adaptive import add_adaptive_commands
    from core.cli.refine import add_refine_command
    from core.cli.rehearse import add_rehearsal_options
    from core.cli.rerun import add_rerun_command
    from core.cli.review_hook import add_review_hook_command
    from core.cli.runs import add_run_commands
    from core.cli.templates import add_template_commands, add_template_options
    from core.cli.variants import add_variants_option
    from core.cli.workers import add_worker_commands

    parser = argparse.ArgumentParser(
        prog="python -m core", description="PlanBoard: plan, review and run LLM agent tasks."
    )
    parser.add_argument("-v", "--verbose", action="store_true",
                        help="log what the engine does (to stderr)")
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
    plan.add_argument("request", help="the request (with --refine: what to change)")
    plan.add_argument("--refine", type=Path, metavar="FILE",
                      help="revise the plan in FILE as the request says; print the new plan")
    _add_planning_options(plan)
    plan.set_defaults(handler=cmd_plan)

    run = commands.add_parser("run", help="plan a request (or load --plan FILE) and run it")
    run.add_argument("request", nargs="?", default="")
    run.add_argument("--plan", type=Path, help="run this plan file instead of planning")
    run.add_argument("--yes", action="store_true",
                     help="approve the plan shown and run its side effects without asking "
                          "(only that plan: see --approve-replans); without it, each "
                          "side-effecting step asks again before it runs, showing what it "
                          "will send")
    add_approve_replans(run)
    run.add_argument("--max-parallel", type=bounded_int(1, 64), default=4)
    run.add_argument("--max-replans", type=bounded_int(0, 10), default=2)
    run.add_argument("--max-attempts", type=bounded_int(1, 5), default=2,
                     help="attempts when a failed run's reflection advises a retry")
    run.add_argument("--checkpoint", choices=CHECKPOINT_POLICIES, default=DEFAULT_POLICY,
                     help="when to revise the plan while it runs")
    run.add_argument("--pace", type=bounded_float(0, 10), default=0, metavar="SECONDS",
                     help="demo pace: wait this long before each step")
    run.add_argument("--read-ahead", action="store_true",
                     help="start the read-only steps that need no other step's result while "
                          "the planner writes the plan (side effects still wait for approval)")
    run.add_argument("--detach", action="store_true",
                     help="submit the approved plan to the workers (python -m core worker), "
                          "print the run id and exit; with --yes and a request, the workers "
                          "draft the plan too and the command returns once it is queued")
    _add_planning_options(run)
    add_template_options(run)
    run.set_defaults(handler=cmd_run)
    add_rehearsal_options(run, plan, draft=_draft)
    add_variants_option(plan)

    scenarios = commands.add_parser("scenarios", help="list the example requests")
    scenarios.add_argument("--json", action="store_true")
    scenarios.set_defaults(handler=cmd_scenarios)

    demo = commands.add_parser("demo", help="manage the demo data")
    demo_commands = demo.add_subparsers(dest="demo_command", required=True)
    demo_commands.add_parser("reset", help="recreate the demo databases").set_defaults(
        handler=cmd_demo_reset
    )

    add_run_commands(commands)
    add_adaptive_commands(commands)
    add_refine_command(commands)
    add_rerun_command(commands)
    add_worker_commands(commands)
    add_template_commands(commands)
    add_people_commands(commands)
    add_review_hook_command(commands)
    return parser


def _add_planning_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", action="store_true", help="print JSON")
    parser.add_argument(
        "--offline", action="store_true", help="use the rule-based planner, no LLM"
    )
    parser.add_argument(
        "--mode", choices=REQUEST_MODES, default="plan",
        help="plan (default), hierarchical (phases first, each expanded into steps when "
             "reached), a knowledge or direct answer, or auto (let the router decide)",
    )


# ---- commands ---------------------------------------------------------------------------


def cmd_tools(args: argparse.Namespace) -> int:
    """List every tool with its source and side effect; what failed to load goes to stderr."""
    from core.tools.toolsets import default_registry

    registry = default_registry()
    for problem in registry.problems:
        print(say("warning", text=render(problem, cli_language())), file=sys.stderr)
    if args.json:
        print_json([{**tool.catalogue_entry(), "source": tool.source,
                     "idempotent": tool.idempotent} for tool in registry])
        return 0
    for entry in registry:
        flag = "  [side effect]" if entry.side_effect else ""
        params = ", ".join(entry.parameters.get("properties", {}))
        print(f"{entry.name}({params}){flag}  <{entry.source}>\n    {entry.description}")
    return 0


def cmd_call(args: argparse.Namespace) -> int:
    """Call one tool; a text result prints as text (unless --json), anything else as JSON."""
    from core.access.policy import call_action
    from core.tools.toolsets import default_registry

    arguments = _parse_json_object(args.args, "--args")
    registry = default_registry()
    args.runner().access(None).require(call_action(args.tool, registry))
    result = registry.call(args.tool, arguments)
    if isinstance(result, str) and not args.json:
        print(result)
    else:
        print_json(result)
    return 0


def cmd_plan(args: argparse.Namespace) -> int:
    from core.runs.session import build_engine, choose_route

    if args.refine:
        from core.cli.refine import refine_plan_file

        return refine_plan_file(args.refine, args.request, as_json=args.json)
    engine = build_engine(offline=args.offline)
    route, _ = choose_route(args.request, engine, args.mode)
    if route.mode not in PLANNED_MODES:
        note = {"mode": route.mode, "route_reason": route.reason, "plan": None}
        if args.json:
            print_json(note)
        else:
            print(say("no_plan_needed", mode=route.mode, reason=route.reason_in(cli_language())))
        return 0
    from core.cli.plan_progress import StepPrinter
    from core.cli.templates import offer_template
    from core.store.run_store import RunStore

    store = RunStore()
    offer_template(args.request, store)
    plan, _ = _draft(args.request, engine, ask_questions=True, store=store,
                     hierarchical=route.mode == "hierarchical",
                     on_steps=None if args.json else StepPrinter(sys.stderr))
    if args.json:
        print_json(plan.canonical())
    else:
        from core.cli.plans import plan_text

        print(plan_text(plan, engine.registry))
        for warning in plan.warnings:
            print(say("warning", text=warning), file=sys.stderr)
    return 0


def cmd_run(args: argparse.Namespace) -> int:
    from core.runs.dispatch import execution_mode
    from core.runs.session import build_engine, choose_route, public_settings

    by_workers = execution_mode() == "workers" or args.detach
    if not args.request and not args.plan and not args.template:
        raise ConfigError("Give a request to plan, a plan file with --plan FILE, or a saved "
                          "plan with --template NAME.")
    if args.plan and args.mode != "plan":
        raise ConfigError(f"--mode {args.mode} routes a request; a plan file is run as it is. "
                          "Drop --mode or --plan.")
    # a plan file is read (and a plan no run takes refused) before anything is started
    loaded = load_plan_file(args.plan, args.request) if args.plan else None
    out = sys.stderr if args.json else sys.stdout
    if args.detach and args.yes and args.request and not args.plan and args.mode == "plan":
        from core.cli.workers import submit_request

        # approved beforehand: the worker drafts the plan; this only records and enqueues
        return submit_request(args.request, _run_options(args), offline=args.offline,
                              as_json=args.json, out=out)
    engine = build_engine(offline=args.offline)
    started = time.monotonic()
    runner = args.runner()
    settings = public_settings(offline=engine.offline)
    read_ahead = _read_ahead(args, engine, planned=not args.template and loaded is None)
    try:
        if args.template:
            from core.cli.templates import template_plan

            plan, usage, route = template_plan(args, runner.store), Usage(), None
        elif loaded is not None:
            plan, usage, route = loaded, Usage(), None
        else:
            route, usage = choose_route(args.request, engine, args.mode)
            if route.mode not in PLANNED_MODES:
                print(f"{route.mode}: {route.reason_in(cli_language())}", file=out)
                return _answer(runner, args, route, engine=engine, settings=settings,
                               usage=usage, queued=by_workers, out=out, started=started)
            from core.cli.plan_progress import StepPrinter
            from core.cli.templates import offer_template

            offer_template(args.request, runner.store)
            listeners = [] if args.json else [StepPrinter(sys.stderr)]
            if read_ahead is not None:
                listeners.append(read_ahead.offer)
            plan, planning = _draft(args.request, engine, ask_questions=not args.yes,
                                    store=runner.store,
                                    hierarchical=route.mode == "hierarchical",
                                    on_steps=_each(listeners))
            usage += planning
        if not approved_to_run(plan, engine, args.yes, out):
            return 1
        options = _run_options(args)
        if read_ahead is not None:
            from core.execution.read_ahead import APPROVAL_WAIT_S

            options.read_ahead = read_ahead.results(wait_s=APPROVAL_WAIT_S)
    finally:
        if read_ahead is not None:
            read_ahead.close()
    if by_workers:
        from core.cli.workers import run_on_workers

        return run_on_workers(runner, plan, engine=engine, options=options, settings=settings,
                              usage=usage, detach=args.detach, as_json=args.json, out=out,
                              started=started, route=route)
    run_id = runner.start(plan.goal, plan, engine=engine, options=options,
                          settings_public=settings, planning_usage=usage,
                          on_event=lambda event: print_progress(event, out))
    print(f"run {run_id}", file=out)
    return report_run(wait_answering(runner, run_id, out, registry=engine.registry), args.json,
                      started, out, route)


def _read_ahead(args: argparse.Namespace, engine: Any, *, planned: bool) -> Any:
    """The ReadAhead of ``run --read-ahead`` when the planner writes the plan (None when
    not asked for, or when the plan comes from a file or a template)."""
    if not (args.read_ahead and planned):
        return None
    from core.execution.read_ahead import ReadAhead

    return ReadAhead(engine.registry)


def _each(listeners: list[Any]) -> Any:
    """One step listener telling each of ``listeners`` (None for none)."""
    if not listeners:
        return None

    def heard(steps: list[Any]) -> None:
        for listener in listeners:
            listener(steps)

    return heard


def _run_options(args: argparse.Namespace) -> Any:
    """The options ``run`` gives its run (a RunOptions)."""
    from core.execution.options import RunOptions

    # --yes approved every side effect of the plan; without it each asks before it runs,
    # showing its arguments as they will be sent (a reference's value is known only then)
    return RunOptions(confirm_side_effects=not args.yes,
                      new_versions=new_versions_policy(args),  # not later versions
                      max_parallel=args.max_parallel, max_replans=args.max_replans,
                      checkpoint=args.checkpoint, max_attempts=args.max_attempts,
                      step_delay_s=args.pace)


def _answer(runner: Runner, args: argparse.Namespace, route: Any, *, engine: Any,
            settings: dict[str, Any], usage: Usage, queued: bool, out: Any,
            started: float) -> int:
    """Answer without a plan: a run like the others, here or on the workers' queue."""
    if queued:
        from core.cli.workers import follow_submitted

        run_id = runner.answer(args.request, route, engine=engine, settings_public=settings,
                               routing_usage=usage, queued=True)
        return follow_submitted(runner, run_id, detach=args.detach, as_json=args.json,
                                out=out, started=started, route=route)
    run_id = runner.answer(args.request, route, engine=engine, settings_public=settings,
                           routing_usage=usage, on_event=lambda event: print_progress(event, out))
    print(f"run {run_id}", file=out)
    return report_run(runner.wait(run_id), args.json, started, out, route)


def cmd_scenarios(args: argparse.Namespace) -> int:
    from core.planning.packs import scenarios
    from core.tools.toolsets import default_registry

    gallery = scenarios(default_registry())
    if args.json:
        print_json([scenario.model_dump() for scenario in gallery])
        return 0
    if not gallery:
        print(say("no_scenarios"))
    for scenario in gallery:
        print(f"{scenario.id}: {scenario.title_en} / {scenario.title_zh}")
        print(f"    en: {scenario.request_en}\n    zh: {scenario.request_zh}")
    return 0


def cmd_demo_reset(args: argparse.Namespace) -> int:
    from core.runs.admin import reset_data
    from core.tools.toolsets import default_registry

    written = reset_data(default_registry(), args.runner().store, None)
    if not written:
        print(say("no_reset"))
    for path in written:
        print(say("demo_reset", path=path))
    return 0


# ---- helpers ----------------------------------------------------------------------------


def _draft(request: str, engine: Any, *, ask_questions: bool, store: Any = None,
           hierarchical: bool = False, on_steps: Any = None) -> tuple[Plan, Usage]:
    """Draft a plan (in phases when ``hierarchical``); answer the planner's clarifying
    questions on the terminal first; ``on_steps`` hears the steps while the planner writes
    them."""
    from core.planning.clarify import merge_answers
    from core.runs.session import draft_plan

    draft = draft_plan(request, engine, store=store, hierarchical=hierarchical,
                       on_steps=on_steps)
    usage = draft.usage
    if draft.questions:
        if not ask_questions:
            raise ConfigError("The request needs more detail before planning: "
                              + " / ".join(q.rstrip("。.") for q in draft.questions)
                              + ". Add it to the request and try again.")
        answers = [ask_text(f"{question} ") for question in draft.questions]
        merged = merge_answers(request, draft.questions, answers, draft.language)
        draft = draft_plan(merged, engine, store=store, allow_questions=False,
                           language=draft.language, hierarchical=hierarchical,
                           on_steps=on_steps)
        usage += draft.usage
    assert draft.plan is not None  # without questions a draft always holds a plan
    return draft.plan, usage


def _parse_json_object(text: str, option: str) -> dict[str, Any]:
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ConfigError(say("args_not_json", option=option,
                              error=render(json_error(exc), cli_language()))) from None
    if not isinstance(value, dict):
        raise ConfigError(f"{option} must be a JSON object like '{{\"key\": \"value\"}}'.")
    return value

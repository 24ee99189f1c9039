"""The plan-quality benchmark: the suite of bench/quality_tasks.py against the configured model.

Each task runs in a fresh PLANBOARD_HOME (a temporary folder: new demo data, no lessons,
no earlier runs) through the path ``python -m core run --yes`` takes: route, plan, approve
(side-effecting steps of the approved plan run; later versions that widen it are refused),
execute. It runs once per checkpoint policy; the scorer then checks the facts. The table
gives per policy the success rate, LLM calls, prompt+completion tokens, the prompt tokens
re-read per task (what the server's prefix cache did not serve: reported by the server, or
estimated as llama.cpp's one slot keeps it) and wall time, and per task which policies
passed. A task's plan spends at most ``--max-model-calls`` model calls. ``--offline`` runs
the offline rules as a baseline. ``--compare-modes`` runs the multi-stage tasks (or those of
``--tasks``) as one flat plan and in phases (``--mode plan`` against ``--mode hierarchical``)
under the first policy, and compares them instead of the policies; ``--scripted`` serves
the model from bench/scripted.py (the demo's rules behind the fake endpoint: the engine's
own cost of each way, no model's skill). Ctrl-C prints the table of the task runs that
finished and leaves at once: the run in flight is cancelled, not waited for.
``--markdown`` prints the tables as GitHub Markdown, headed by the model, the machine and
the date (what docs/benchmarks.md keeps).

    python -m bench.quality [--offline] [--policies rigid,adaptive] [--tasks a,b] [--timeout 600]
                            [--max-model-calls N]
    python -m bench.quality --compare-modes [--scripted]
"""

from __future__ import annotations

import argparse
import datetime
import logging
import os
import shutil
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bench.quality_tasks import MULTI_STAGE, Outcome, Task, get_tasks
from bench.tables import machine, markdown_table
from core.base.usage import Usage
from core.errors import PlanBoardError
from core.lifecycle import TERMINAL_STATUSES
from core.llm.client import ChatModel, ChatReply
from core.llm.engine import Engine
from core.llm.prompt_cache import PromptCache
from core.planning.choices import (
    CHECKPOINT_POLICIES,
    PLANNED_MODES,
    REQUEST_MODES,
    CheckpointPolicy,
)

__all__ = ["COMPARED_MODES", "DEFAULT_POLICIES", "MeteredModel", "TaskResult", "compare_modes",
           "format_markdown", "format_table", "main", "metered", "run_suite", "run_task"]

if TYPE_CHECKING:
    from core.runs.runner import Runner

logger = logging.getLogger(__name__)

DEFAULT_POLICIES = ("rigid", "on_failure", "adaptive")
COMPARED_MODES = {"plan": "flat", "hierarchical": "hierarchical"}  # mode → its column
INTERRUPTED = 130  # the exit code of a run cut short with Ctrl-C
CANCEL_WAIT_S = 2.0  # how long Ctrl-C waits for the run in flight to record its cancellation


@dataclass
class TaskResult:
    """One task under one policy: the outcome, what the scorer found, and what it cost."""

    task_id: str
    policy: str
    outcome: Outcome
    problems: list[str] = field(default_factory=list)
    usage: Usage = field(default_factory=Usage)
    wall_s: float = 0.0
    reread_tokens: int = 0  # prompt tokens the server read again (its prefix cache aside)

    @property
    def passed(self) -> bool:
        """Whether the scorer found no problem."""
        return not self.problems


_ANSWER_PREVIEW = 400  # characters of a failed task's answer in the verbose log


@contextmanager
def fresh_home() -> Iterator[str]:
    """A temporary PLANBOARD_HOME (the default SQLite store in it) for one task. The run
    engine that served it is stopped before the home is deleted: its queue pollers keep
    writing the home's database files while they run."""
    from core.runs import durable

    with tempfile.TemporaryDirectory(prefix="planboard-quality-") as home, _environ(
            {"PLANBOARD_HOME": home, "PLANBOARD_DB_URL": None}):
        try:
            yield home
        finally:
            durable.shutdown()


@contextmanager
def _environ(values: dict[str, str | None]) -> Iterator[None]:
    """The environment with ``values`` set (None: unset) inside the block, as it was after."""
    saved = {key: os.environ.get(key) for key in values}
    try:
        for key, value in values.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
        yield
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


class MeteredModel:
    """The engine's model, with what each call re-read: the prompt tokens a one-slot prefix
    cache (llama.cpp's server) did not serve, as the server reports it or as
    :class:`core.llm.prompt_cache.PromptCache` estimates it; the cache lives as long as
    the model (the server's slot outlives a task)."""

    def __init__(self, model: ChatModel) -> None:
        self.model = model
        self.cache = PromptCache()
        self.reread = 0
        self._lock = threading.Lock()

    def __getattr__(self, name: str) -> Any:
        return getattr(self.model, name)

    def chat(self, messages: list[dict[str, Any]], **kwargs: Any) -> ChatReply:
        """The wrapped model's reply; what its prompt re-read is added up."""
        reply = self.model.chat(messages, **kwargs)
        used = self.cache.use(messages, kwargs.get("tools"), reply)
        with self._lock:
            self.reread += used.reread_tokens
        return reply

    def take(self) -> int:
        """The tokens re-read since the last ``take``."""
        with self._lock:
            taken, self.reread = self.reread, 0
        return taken


def metered(engine: Engine) -> Engine:
    """``engine`` whose model counts the prompt tokens re-read (offline: as it is)."""
    if engine.model is None or isinstance(engine.model, MeteredModel):
        return engine
    return Engine(registry=engine.registry, model=MeteredModel(engine.model))


def run_task(task: Task, engine: Engine, policy: CheckpointPolicy, *, mode: str = "auto",
             timeout_s: float = 600.0, keep_failed: Path | None = None,
             max_model_calls: int | None = None) -> TaskResult:
    """Run ``task`` once under ``policy`` in a fresh home and score it.

    With ``keep_failed``, the home of a failed task is copied to
    ``keep_failed/<task>-<policy>`` so that ``python -m core show`` can replay why.
    ``max_model_calls``: the run's model-call budget (default: the environment's)."""
    from core.runs.runner import open_runner

    engine = metered(engine)
    if isinstance(engine.model, MeteredModel):
        engine.model.take()  # what an earlier, interrupted task left
    with fresh_home() as home:
        started = time.monotonic()
        runner = open_runner()
        try:
            status, answer, usage = _run_request(task.request, engine, runner, policy, mode,
                                                 started + timeout_s, max_model_calls)
            outcome = Outcome(status=status, answer=answer)
            wall = time.monotonic() - started
            problems = task.score(outcome)
        except KeyboardInterrupt:
            raise  # left open: closing would wait for the model call in flight (see main)
        except BaseException:
            runner.close()
            raise
        runner.close()
        if problems and keep_failed is not None:
            kept = keep_failed / f"{task.id}-{policy}"
            shutil.rmtree(kept, ignore_errors=True)
            shutil.copytree(home, kept)
            logger.info("kept %s: PLANBOARD_HOME=%s python -m core runs", task.id, kept)
    reread = engine.model.take() if isinstance(engine.model, MeteredModel) else 0
    return TaskResult(task.id, policy, outcome, problems, usage, round(wall, 2), reread)


def _run_request(request: str, engine: Engine, runner: Runner, policy: CheckpointPolicy,
                 mode: str, deadline: float, max_model_calls: int | None = None
                 ) -> tuple[str, str, Usage]:
    """Route ``request``, then answer it or plan, approve and execute it; return status,
    answer and usage."""
    from core.execution.scheduler import RunOptions
    from core.runs.session import choose_route, draft_plan, public_settings

    settings = public_settings(offline=engine.offline)
    usage = Usage()
    try:
        route, usage = choose_route(request, engine, mode)
        if route.mode not in PLANNED_MODES:
            run_id = runner.answer(request, route, engine=engine, settings_public=settings,
                                   routing_usage=usage)
        else:
            draft = draft_plan(request, engine, store=runner.store,
                               hierarchical=route.mode == "hierarchical")
            usage += draft.usage
            if draft.plan is None:  # `run --yes` stops here too: nobody is there to answer
                return "asked", " / ".join(draft.questions), usage
            draft.plan.raise_if_invalid(engine.registry)
            budget = {} if max_model_calls is None else {"max_model_calls": max_model_calls}
            options = RunOptions(confirm_side_effects=False,  # approved up front (--yes)
                                 new_versions="refuse", checkpoint=policy, **budget)
            run_id = runner.start(draft.plan.goal, draft.plan, engine=engine, options=options,
                                  settings_public=settings, planning_usage=usage)
    except PlanBoardError as exc:
        logger.info("task not run: %s", exc)
        return f"error: {type(exc).__name__}", str(exc), usage
    try:
        record = runner.wait(run_id, timeout=max(1.0, deadline - time.monotonic()))
    except KeyboardInterrupt:  # ask the run to stop; its model call may go on for minutes
        try:
            runner.cancel(run_id, timeout=CANCEL_WAIT_S)
        except PlanBoardError as exc:  # it ended meanwhile
            logger.info("run %s not cancelled: %s", run_id, exc)
        raise
    if record.status in TERMINAL_STATUSES:
        return record.status, record.answer or "", record.usage
    record = runner.cancel(run_id)
    return f"timeout ({record.status})", record.answer or "", record.usage


def run_suite(tasks: list[Task], engine: Engine, policies: list[CheckpointPolicy], *,
              mode: str = "auto", timeout_s: float = 600.0,
              keep_failed: Path | None = None,
              max_model_calls: int | None = None) -> list[TaskResult]:
    """Every task under every policy (see :func:`iter_suite`), as a list."""
    return list(iter_suite(tasks, engine, policies, mode=mode, timeout_s=timeout_s,
                           keep_failed=keep_failed, max_model_calls=max_model_calls))


def iter_suite(tasks: list[Task], engine: Engine, policies: list[CheckpointPolicy], *,
               mode: str = "auto", timeout_s: float = 600.0,
               keep_failed: Path | None = None,
               max_model_calls: int | None = None) -> Iterator[TaskResult]:
    """Every task under every policy, one after another; each result is logged as it ends.

    Task by task (each policy in turn), so that a long run cut short still compares the
    policies on the tasks it reached."""
    engine = metered(engine)  # one prefix cache for the whole suite, as on the server
    for task in tasks:
        for policy in policies:
            result = run_task(task, engine, policy, mode=mode, timeout_s=timeout_s,
                              keep_failed=keep_failed, max_model_calls=max_model_calls)
            logger.info("%s %s: %s %s", policy, task.id, "pass" if result.passed else "FAIL",
                        "; ".join(result.problems))
            if not result.passed:  # what the model said, to tell a wrong fact from a miss
                logger.info("  %s answer: %r", result.outcome.status,
                            result.outcome.answer[:_ANSWER_PREVIEW])
            yield result


def compare_modes(tasks: list[Task], engine: Engine, policy: CheckpointPolicy, *,
                  timeout_s: float = 600.0, keep_failed: Path | None = None,
                  max_model_calls: int | None = None) -> Iterator[TaskResult]:
    """Each task as one flat plan and in phases (:data:`COMPARED_MODES`) under ``policy``,
    task by task; a result's ``policy`` names the way it was planned ("flat",
    "hierarchical")."""
    engine = metered(engine)  # one prefix cache for the whole comparison, as on the server
    for task in tasks:
        for mode, label in COMPARED_MODES.items():
            result = run_task(task, engine, policy, mode=mode, timeout_s=timeout_s,
                              keep_failed=keep_failed, max_model_calls=max_model_calls)
            result.policy = label
            logger.info("%s %s: %s %s", label, task.id, "pass" if result.passed else "FAIL",
                        "; ".join(result.problems))
            yield result


def format_table(results: list[TaskResult], title: str, column: str = "policy") -> str:
    """The policy table (``column``: what its rows are), the per-task table and the
    problems of every failure, as text."""
    policies = list(dict.fromkeys(r.policy for r in results))
    task_ids = list(dict.fromkeys(r.task_id for r in results))
    lines = [f"## Plan quality: {title}", "",
             f"{column:<12} | {'success':>8} | {'LLM calls':>9} | {'tokens (p+c)':>16} | "
             f"{'re-read/task':>12} | {'wall s':>8}"]
    for policy in policies:
        mine = [r for r in results if r.policy == policy]
        usage = sum((r.usage for r in mine), Usage())
        tokens = f"{usage.prompt_tokens}+{usage.completion_tokens}"
        success = f"{sum(r.passed for r in mine)}/{len(mine)}"
        wall = sum(r.wall_s for r in mine)
        lines.append(f"{policy:<12} | {success:>8} | {usage.llm_calls:>9} | {tokens:>16} | "
                     f"{_reread_per_task(mine):>12} | {wall:8.1f}")
    lines += ["", f"{'task':<22} | " + " | ".join(f"{p:<34}" for p in policies)]
    by_key = {(r.task_id, r.policy): r for r in results}
    for task_id in task_ids:
        cells = [_cell(by_key[task_id, p]) if (task_id, p) in by_key else "-"
                 for p in policies]
        lines.append(f"{task_id:<22} | " + " | ".join(f"{c:<34}" for c in cells))
    failures = [r for r in results if not r.passed]
    if failures:
        lines += ["", "Failures:"]
        lines += [f"- {r.task_id} [{r.policy}] {r.outcome.status}: {'; '.join(r.problems)}"
                  for r in failures]
    return "\n".join(lines)


def format_markdown(results: list[TaskResult], title: str, command: str,
                    date: datetime.date | None = None, column: str = "policy") -> str:
    """The tables of :func:`format_table` as GitHub Markdown, headed by what was measured,
    on what machine and when, with the command that measured it."""
    policies = list(dict.fromkeys(r.policy for r in results))
    task_ids = list(dict.fromkeys(r.task_id for r in results))
    day = (date or datetime.date.today()).isoformat()
    rows = []
    for policy in policies:
        mine = [r for r in results if r.policy == policy]
        usage = sum((r.usage for r in mine), Usage())
        rows.append([policy, f"{sum(r.passed for r in mine)}/{len(mine)}", str(usage.llm_calls),
                     f"{usage.prompt_tokens:,} + {usage.completion_tokens:,}",
                     _reread_per_task(mine), f"{sum(r.wall_s for r in mine):,.0f}"])
    by_key = {(r.task_id, r.policy): r for r in results}
    tasks = [[task_id, *(_cell(by_key[task_id, p]) if (task_id, p) in by_key else "-"
                         for p in policies)] for task_id in task_ids]
    parts = [f"### Plan quality: {title} — {machine()}, {day}", f"`{command}`.",
             markdown_table([column, "success", "LLM calls", "tokens (prompt + completion)",
                             "prompt tokens re-read per task", "wall s"], rows),
             markdown_table(["task", *policies], tasks, "l" * (len(policies) + 1))]
    failures = [f"- {r.task_id} [{r.policy}] {r.outcome.status}: {'; '.join(r.problems)}"
                for r in results if not r.passed]
    if failures:
        parts.append("Failures:\n\n" + "\n".join(failures))
    return "\n\n".join(parts) + "\n"


def _cell(result: TaskResult) -> str:
    """pass or FAIL, with the task's wall time, LLM calls and the prompt tokens it re-read
    (what a policy costs per task)."""
    verdict = "pass" if result.passed else "FAIL"
    return (f"{verdict}, {result.wall_s:.0f} s, {result.usage.llm_calls} calls, "
            f"{result.reread_tokens:,} re-read")


def _reread_per_task(results: list[TaskResult]) -> str:
    """The mean prompt tokens re-read per task run, and the share of all prompt tokens."""
    prompt = sum(r.usage.prompt_tokens for r in results)
    reread = sum(r.reread_tokens for r in results)
    share = f" ({reread / prompt:.0%})" if prompt else ""
    return f"{reread // max(1, len(results)):,}{share}"


def _names(text: str) -> list[str]:
    return [name.strip() for name in text.split(",") if name.strip()]


def _policies(text: str) -> list[CheckpointPolicy]:
    chosen = _names(text)
    unknown = [p for p in chosen if p not in CHECKPOINT_POLICIES]
    if unknown or not chosen:
        raise argparse.ArgumentTypeError(
            f"unknown policy {', '.join(unknown) or '(none)'}; choose from "
            f"{', '.join(CHECKPOINT_POLICIES)}")
    return chosen  # type: ignore[return-value]  # each one checked above


def build_parser() -> argparse.ArgumentParser:
    """The benchmark's options."""
    parser = argparse.ArgumentParser(prog="python -m bench.quality", description=__doc__)
    parser.add_argument("--offline", action="store_true",
                        help="the offline rules instead of the configured model (a baseline)")
    parser.add_argument("--policies", type=_policies, default=list(DEFAULT_POLICIES),
                        help="comma-separated checkpoint policies (default: "
                             f"{','.join(DEFAULT_POLICIES)})")
    parser.add_argument("--tasks", type=_names, default=None,
                        help="comma-separated task ids (default: all)")
    parser.add_argument("--mode", choices=REQUEST_MODES, default="auto",
                        help="how requests are routed (default auto: the router decides)")
    parser.add_argument("--timeout", type=float, default=600.0,
                        help="seconds per task run (planning included) before it is cancelled")
    parser.add_argument("--max-model-calls", type=int, default=None, metavar="N",
                        help="the model calls a task's plan may spend, its planning included "
                             "(default: PLANBOARD_MAX_MODEL_CALLS, else 50)")
    parser.add_argument("--keep-failed", type=Path, default=None, metavar="DIR",
                        help="copy the home of each failed task run to DIR/<task>-<policy> "
                             "(its runs, events and plan versions) to inspect afterwards")
    parser.add_argument("-v", "--verbose", action="store_true", help="log each task's result")
    parser.add_argument("--markdown", action="store_true",
                        help="print GitHub Markdown tables headed by what, on what and when")
    parser.add_argument("--compare-modes", action="store_true",
                        help="run the multi-stage tasks (or --tasks) flat and in phases under "
                             "the first policy, and compare the two")
    parser.add_argument("--scripted", action="store_true",
                        help="serve the model from bench/scripted.py (the demo's rules behind "
                             "the fake endpoint) instead of the configured one")
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run the suite and print its tables; exit code 1 when the endpoint is not usable."""
    from dotenv import find_dotenv, load_dotenv

    from core.runs.session import build_engine

    load_dotenv(find_dotenv(usecwd=True))  # the same settings `python -m core run` reads
    args = build_parser().parse_args(argv)
    logging.basicConfig(level=logging.ERROR, format="%(levelname)s %(name)s: %(message)s")
    if args.verbose:  # each task's result as it ends, without the engine's own log
        logger.setLevel(logging.INFO)
    with _scripted(args.scripted):
        try:
            tasks = get_tasks(args.tasks or (MULTI_STAGE if args.compare_modes else None))
            engine = build_engine(offline=args.offline)
        except (KeyError, PlanBoardError) as exc:
            print(f"error: {exc.args[0] if isinstance(exc, KeyError) else exc}")
            return 1
        title = "scripted planner (the demo's rules)" if args.scripted else _endpoint(engine)
        if args.compare_modes:
            title += f", flat against hierarchical, {args.policies[0]}"
            runs = compare_modes(tasks, engine, args.policies[0], timeout_s=args.timeout,
                                 keep_failed=args.keep_failed,
                                 max_model_calls=args.max_model_calls)
        else:
            runs = iter_suite(tasks, engine, args.policies, mode=args.mode,
                              timeout_s=args.timeout, keep_failed=args.keep_failed,
                              max_model_calls=args.max_model_calls)
        results: list[TaskResult] = []
        try:
            for result in runs:
                results.append(result)
        except KeyboardInterrupt:  # hours on a small local model: keep what was measured
            if not results:
                print("interrupted before any task finished")
                return INTERRUPTED
            _print_tables(results, f"{title} (interrupted: {len(results)} task runs)", args,
                          argv)
            return INTERRUPTED
    _print_tables(results, title, args, argv)
    return 0


@contextmanager
def _scripted(on: bool) -> Iterator[None]:
    """The environment pointing the engine at bench/scripted.py's endpoint, while ``on``."""
    if not on:
        yield
        return
    from bench.scripted import scripted_endpoint
    from core.tools.toolsets import default_registry

    with scripted_endpoint(default_registry()) as environment, _environ(dict(environment)):
        yield


def _print_tables(results: list[TaskResult], title: str, args: argparse.Namespace,
                  argv: list[str] | None) -> None:
    column = "planned" if args.compare_modes else "policy"
    if not args.markdown:
        print(format_table(results, title, column))
        return
    words = [w for w in (sys.argv[1:] if argv is None else argv) if w != "--markdown"]
    print(format_markdown(results, title, " ".join(["python -m bench.quality", *words]),
                          column=column))


def _endpoint(engine: Engine) -> str:
    """The model and endpoint the engine talks to, as runs record them (never the key)."""
    from core.runs.session import public_settings

    if engine.offline:
        return "offline rules"
    settings = public_settings(offline=False)
    return f"{settings.get('planner_model')} @ {settings.get('base_url')}"


if __name__ == "__main__":
    code = main()
    if code == INTERRUPTED:  # leave at once: a normal exit joins the threads of the run cut
        sys.stdout.flush()  # short, still waiting for a model call (minutes on a small model)
        sys.stderr.flush()
        os._exit(code)
    raise SystemExit(code)

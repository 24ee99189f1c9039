"""``python -m bench.bfcl``: BFCL v4 multi_turn_base through PlanBoard or a plain loop, scored
with BFCL's own checker.

    python -m bench.bfcl [--ids 0,17 | --sample N --seed S] [--mode planboard|loop]
                         [--weak-checks on|off] [--constrained on|off]
                         [--out FILE [--resume]] [--home DIR] [--replay] [--markdown]
    python -m bench.bfcl --table FILE [FILE ...] [--markdown]

Each entry's line is appended to ``--out`` as soon as the entry ends (BFCL's result format,
with each turn's cost beside it), so ``--resume`` gathers a long measurement over several
sittings: it skips the entries the file holds and runs the rest. The model is the one the
environment names (``OPENAI_BASE_URL``, ``OPENAI_MODEL``, ``.env``), as for ``python -m core``;
``--replay`` serves instead the scripted endpoint that answers every turn with its ground
truth (offline). In PlanBoard mode each entry's runs are recorded in a PlanBoard home of
its own, ``--home DIR/<entry id>`` (default DIR: the ``--out`` file's name with ``.homes``),
which the dashboard opens like any other home. ``--table`` scores result files side by side
on the entries they all hold and, where they hold different entries, each on every entry
it ran. Ctrl-C keeps every finished entry and prints the table.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from bench.bfcl.data import Entry, entries, pick_ids
from bench.bfcl.loop import run_loop
from bench.bfcl.planboard import RecordedTurns, run_planboard
from bench.bfcl.records import EntryRun, append_line, read_lines
from bench.bfcl.report import different_entries, own_table, table
from bench.bfcl.score import score_result

INTERRUPTED = 130
_SWITCH = ("on", "off")


def build_parser() -> argparse.ArgumentParser:
    """The benchmark's options."""
    parser = argparse.ArgumentParser(prog="python -m bench.bfcl", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    chosen = parser.add_mutually_exclusive_group()
    chosen.add_argument("--ids", type=lambda text: [i.strip() for i in text.split(",")
                                                    if i.strip()],
                        help="comma-separated entries (17 or multi_turn_base_17)")
    chosen.add_argument("--sample", type=int, metavar="N", help="a seeded sample of N entries")
    parser.add_argument("--seed", type=int, default=45, help="the sample's seed (default 45)")
    parser.add_argument("--mode", choices=("planboard", "loop"), default="planboard")
    parser.add_argument("--weak-checks", choices=_SWITCH, default="on",
                        help="PlanBoard's checks for weak models (default on)")
    parser.add_argument("--constrained", choices=_SWITCH, default="off",
                        help="ask the endpoint for plans constrained to the tools' schemas, "
                             "where it can be told (default off)")
    parser.add_argument("--out", type=Path, help="append each entry's result line here")
    parser.add_argument("--resume", action="store_true",
                        help="skip the entries --out holds already")
    parser.add_argument("--home", type=Path,
                        help="where the runs' homes go, one per entry (PlanBoard mode)")
    parser.add_argument("--replay", action="store_true",
                        help="answer every turn with its ground truth (offline)")
    parser.add_argument("--table", type=Path, nargs="+", metavar="FILE",
                        help="score these result files side by side and stop")
    parser.add_argument("--markdown", action="store_true", help="print the table as Markdown")
    return parser


def _chosen(args: argparse.Namespace) -> list[Entry]:
    if args.sample is not None:
        return entries(pick_ids(args.sample, args.seed))
    return entries(args.ids)


def _settings(args: argparse.Namespace) -> dict[str, Any]:
    return {"mode": args.mode, "weak_checks": args.weak_checks,
            "constrained": args.constrained, "replay": args.replay}


@contextmanager
def _endpoint(args: argparse.Namespace) -> Iterator[tuple[Any, dict[str, str]]]:
    """The responder of the replay and its environment, or nothing and the process's."""
    if not args.replay:
        yield None, dict(os.environ)
        return
    from bench.bfcl.replay import replay_endpoint

    with replay_endpoint() as (responder, environment):
        yield responder, {**os.environ, **environment}


def _model(args: argparse.Namespace, environ: dict[str, str]) -> tuple[Any, dict[str, Any]]:
    """The chat model the environment names, with the chosen switches; what runs record."""
    from core.llm.client import OpenAIChatModel
    from core.llm.settings import LLMSettings, run_settings

    settings = LLMSettings.from_env(environ).updated(
        weak_model_checks=args.weak_checks == "on",
        constrained_output=args.constrained == "on")
    if not settings.configured:
        raise SystemExit("error: no model is configured: set OPENAI_BASE_URL (and "
                         "OPENAI_API_KEY, OPENAI_MODEL), or use --replay")
    return OpenAIChatModel(settings), run_settings(settings)


def _home(args: argparse.Namespace) -> Path:
    if args.home is not None:
        return args.home
    if args.out is not None:
        return args.out.with_suffix(".homes")
    return Path(tempfile.mkdtemp(prefix="planboard-bfcl-"))


def run_entry(entry: Entry, args: argparse.Namespace, model: Any, responder: Any,
              public: dict[str, Any]) -> EntryRun:
    """One entry in the chosen mode."""
    if args.mode == "loop":
        return run_loop(entry, model)
    home = _home(args) / entry.id
    return run_planboard(entry, model, lambda engine: RecordedTurns(engine, home, public),
                         on_backends=(lambda backends: responder.play(entry, backends))
                         if responder is not None else None)


def _progress(run: EntryRun, entry: Entry) -> str:
    score = score_result(entry, [turn.steps for turn in run.turns])
    calls = sum(turn.model_calls for turn in run.turns)
    wall = sum(turn.wall_s for turn in run.turns)
    verdict = "right" if score.valid else "wrong"
    return (f"{entry.id}: {verdict}, {score.turns_right}/{score.turns} turns right in a row, "
            f"{calls} model calls, {wall:.0f} s" + (f" ({run.error})" if run.error else ""))


def _print_table(files: dict[Path, list[dict[str, Any]]], args: argparse.Namespace,
                 argv: list[str] | None) -> None:
    if not any(files.values()):
        print("no entry has finished yet")
        return
    made = [table(files), *([own_table(files)] if different_entries(files) else [])]
    if not args.markdown:
        print("\n\n".join(one.text() for one in made))
        return
    words = [w for w in (sys.argv[1:] if argv is None else argv) if w != "--markdown"]
    print("\n".join(one.markdown(" ".join(["python -m bench.bfcl", *words])) for one in made))


def main(argv: list[str] | None = None) -> int:
    """Run (or score) and print the table; 1 with a one-line error on bad input."""
    from dotenv import find_dotenv, load_dotenv

    load_dotenv(find_dotenv(usecwd=True))
    args = build_parser().parse_args(argv)
    logging.basicConfig(level=logging.ERROR, format="%(levelname)s %(name)s: %(message)s")
    try:
        if args.table:
            _print_table({path: read_lines(path) for path in args.table}, args, argv)
            return 0
        if args.resume and args.out is None:
            raise ValueError("--resume needs --out: the file whose entries to skip")
        chosen = _chosen(args)
        done = read_lines(args.out) if args.out is not None and args.resume else []
        if args.out is not None and not args.resume and args.out.exists():
            raise ValueError(f"{args.out} exists: add --resume to go on with it, or choose "
                             "another --out")
    except (KeyError, ValueError) as exc:
        print(f"error: {exc.args[0]}")
        return 1
    return _run(args, chosen, done, argv)


def _run(args: argparse.Namespace, chosen: list[Entry], done: list[dict[str, Any]],
         argv: list[str] | None) -> int:
    finished = {line["id"] for line in done}
    lines = [line for line in done if line["id"] in {entry.id for entry in chosen}]
    with _endpoint(args) as (responder, environ):
        model, public = _model(args, environ)
        for entry in chosen:
            if entry.id in finished:
                continue
            started = time.monotonic()
            try:
                run = run_entry(entry, args, model, responder, public)
            except KeyboardInterrupt:
                print(f"interrupted in {entry.id} after {time.monotonic() - started:.0f} s; "
                      "it is not written")
                _print_table({args.out or Path("this run"): lines}, args, argv)
                return INTERRUPTED
            run.settings = {**_settings(args), **public}
            if args.out is not None:
                append_line(args.out, run)
            lines.append(run.line())
            print(_progress(run, entry), flush=True)
    _print_table({args.out or Path("this run"): lines}, args, argv)
    return 0


if __name__ == "__main__":
    code = main()
    if code == INTERRUPTED:  # leave at once: a model call in flight may take minutes
        sys.stdout.flush()
        os._exit(code)
    raise SystemExit(code)

"""``plan "…" --variants N``: up to three alternative plans for a request, side by side.

Each variant is printed with its figures (steps, critical path, expected LLM calls, side
effects, problems; core.runs.variants). With ``--json`` the command prints
``{"variants": [plan, …], "notes": […]}``: each plan as ``plan --json`` prints one, plus
its figures under the key ``"variant"`` (``number``, ``angles``, ``steps``,
``critical_path``, ``llm_calls``, ``side_effects``, ``problems``). Offline the one plan
the rule planner knows is printed, after a note that variants need a model.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable

from core.base.messages import msg, render
from core.cli.output import print_json
from core.cli.text import cli_language, say
from core.errors import ConfigError

__all__ = ["add_variants_option"]

Handler = Callable[[argparse.Namespace], int]


def add_variants_option(plan: argparse.ArgumentParser) -> None:
    """Give ``plan`` its ``--variants N``, which turns it into a comparison of N plans."""
    plan.add_argument("--variants", metavar="N",
                      help="draft up to 3 alternative plans (most parallel, fewest tools, "
                           "cheapest in model calls) and print them with their figures")
    command: Handler = plan.get_default("handler")

    def handler(args: argparse.Namespace) -> int:
        if args.variants is None:
            return command(args)
        return _compare(args)

    plan.set_defaults(handler=handler)


def _compare(args: argparse.Namespace) -> int:
    from core.runs.session import build_engine
    from core.runs.variants import draft_variants, variant_count
    from core.store.run_store import RunStore

    count = variant_count(args.variants)
    for option, given in (("--refine", args.refine), ("--rehearse", args.rehearse)):
        if given:
            raise ConfigError(say("variants_not_with", option=option))
    if args.mode != "plan":
        raise ConfigError(say("variants_plan_only", mode=args.mode))
    language = cli_language()
    drafted = draft_variants(args.request, build_engine(offline=args.offline), count=count,
                             language=language, store=RunStore())
    notes = [render(note, language) for note in drafted.notes]
    if args.json:
        print_json({"variants": [
            {**variant.plan.canonical(),
             "variant": {"number": number, "angles": list(variant.angles),
                         **variant.figures.as_json()}}
            for number, variant in enumerate(drafted.variants, 1)], "notes": notes})
        return 0
    for note in notes:
        print(note)
    for number, variant in enumerate(drafted.variants, 1):
        figures = variant.figures
        angles = ", ".join(render(msg(f"variants.angle.{angle}"), language)
                           for angle in variant.angles) or say("variant_offline")
        print(say("variant", number=number, angles=angles, steps=figures.steps,
                  path=figures.critical_path, calls=figures.llm_calls,
                  effects=", ".join(figures.side_effects) or "-"))
        print(variant.plan.summary())
        for problem in figures.problems:
            print(say("variant_problem", text=problem))
        print()
    return 0

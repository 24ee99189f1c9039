"""Command-line verbs of the plan library: save, list, show and delete templates, and run one."""

from __future__ import annotations

import argparse
import shlex
import sys
from typing import TYPE_CHECKING, Any

from core.base.messages import msg
from core.cli.output import print_json, short
from core.cli.text import say
from core.errors import ConfigError
from core.plan.model import Plan

if TYPE_CHECKING:
    from core.learning.templates import PlanTemplate, TemplateLibrary
    from core.store.run_store import RunStore

__all__ = ["add_template_commands", "add_template_options", "offer_template", "template_plan"]


def add_template_commands(subparsers: Any) -> None:
    """Add ``templates save|list|show|delete`` to the ``python -m core`` parser."""
    templates = subparsers.add_parser("templates", help="keep plans that worked and reuse them")
    verbs = templates.add_subparsers(dest="templates_command", required=True)

    save = verbs.add_parser("save", help="save a run's plan as a template")
    save.add_argument("run_id")
    save.add_argument("--name", required=True, help="the template's name, e.g. refund-check")
    save.add_argument("--json", action="store_true", help="print the template as JSON")
    save.set_defaults(handler=cmd_templates_save)

    listing = verbs.add_parser("list", help="list the saved templates")
    listing.add_argument("--json", action="store_true", help="print JSON")
    listing.set_defaults(handler=cmd_templates_list)

    show = verbs.add_parser("show", help="show a template: its request, parameters and plan")
    show.add_argument("name")
    show.add_argument("--json", action="store_true", help="print JSON")
    show.set_defaults(handler=cmd_templates_show)

    delete = verbs.add_parser("delete", help="delete a template")
    delete.add_argument("name")
    delete.set_defaults(handler=cmd_templates_delete)


def add_template_options(run: argparse.ArgumentParser) -> None:
    """``run --template NAME --param NAME=VALUE …``: run a saved plan, no planning call."""
    run.add_argument("--template", metavar="NAME",
                     help="run this saved template instead of planning (no model call)")
    run.add_argument("--param", action="append", default=[], metavar="NAME=VALUE",
                     help="a value for one of the template's parameters (repeat it)")


def _library(args: argparse.Namespace) -> TemplateLibrary:
    from core.learning.templates import TemplateLibrary

    return TemplateLibrary(args.runner().store)


def cmd_templates_save(args: argparse.Namespace) -> int:
    template = _library(args).save_run(args.run_id, args.name)
    if args.json:
        print_json(template.model_dump(mode="json"))
        return 0
    print(say("template_saved", name=template.name, run_id=args.run_id))
    _print_parameters(template)
    return 0


def cmd_templates_list(args: argparse.Namespace) -> int:
    templates = _library(args).list_templates()
    if args.json:
        print_json([template.model_dump(mode="json") for template in templates])
        return 0
    if not templates:
        print(say("no_templates"))
    for template in templates:
        names = ", ".join(p.name for p in template.parameters) or "-"
        print(f"{template.name}  ({names})  {template.saved_by} "
              f"{template.created_at:%Y-%m-%d %H:%M}\n    {short(template.request, 100)}")
    return 0


def cmd_templates_show(args: argparse.Namespace) -> int:
    template = _library(args).get(args.name)
    if args.json:
        print_json(template.model_dump(mode="json"))
        return 0
    print(say("template_heading", name=template.name, saved_by=template.saved_by,
              created=f"{template.created_at:%Y-%m-%d %H:%M}",
              run_id=template.source_run or "-"))
    print(template.request)
    _print_parameters(template)
    print(Plan.model_validate(template.plan).summary())
    return 0


def cmd_templates_delete(args: argparse.Namespace) -> int:
    _library(args).delete(args.name)
    print(say("template_deleted", name=args.name.strip()))
    return 0


def _print_parameters(template: PlanTemplate) -> None:
    if not template.parameters:
        print(say("template_no_parameters"))
    for parameter in template.parameters:
        print(say("template_parameter", name=parameter.name, example=parameter.example))


def template_plan(args: argparse.Namespace, store: RunStore) -> Plan:
    """The plan of ``run --template``: the saved plan with the ``--param`` values in it."""
    from core.learning.templates import TemplateLibrary

    if args.request or args.plan:
        raise ConfigError(msg("template.run_alone"))
    template = TemplateLibrary(store).get(args.template)
    plan, _ = template.fill(_params(args.param))
    return plan


def _params(given: list[str]) -> dict[str, str]:
    """``--param NAME=VALUE`` options as a mapping (ConfigError for one without ``=``)."""
    values: dict[str, str] = {}
    for item in given:
        name, equals, value = item.partition("=")
        if not equals or not name.strip():
            raise ConfigError(msg("template.bad_param", given=item))
        values[name.strip()] = value.strip()
    return values


def offer_template(request: str, store: RunStore) -> None:
    """Say on stderr which saved template fits ``request`` and how to run it, if one does."""
    from core.learning.templates import TemplateLibrary

    fit = TemplateLibrary(store).best_fit(request)
    if fit is None:
        return
    params = " ".join(
        f"--param {shlex.quote(p.name + '=' + fit.values.get(p.name, '…'))}"
        for p in fit.template.parameters)
    command = f"python -m core run --template {shlex.quote(fit.template.name)} {params}"
    print(say("template_fits", name=fit.template.name, score=f"{fit.score:.0%}",
              command=command.strip()), file=sys.stderr)

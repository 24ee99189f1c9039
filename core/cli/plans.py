"""Plans on the command line: read from a plan file, and shown before a person runs them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from core.cli.output import ask
from core.cli.text import say
from core.errors import ConfigError
from core.plan.model import Plan

__all__ = ["approved_to_run", "load_plan_file"]


def approved_to_run(plan: Plan, engine: Any, yes: bool, out: Any) -> bool:
    """Validate, show the plan, its expected cost and its side-effecting steps, and ask
    "Execute? [y/N]"."""
    from core.execution.executor import predict_llm_calls
    from core.plan.size import check_size

    check_size(plan)
    plan.raise_if_invalid(engine.registry, can_infer=engine.model is not None)
    print(plan.summary(), file=out)
    for warning in plan.warnings:
        print(say("warning", text=warning), file=out)
    calls = predict_llm_calls(plan, engine.registry, offline=engine.offline)
    print(say("plan_cost", steps=len(plan.steps), path=plan.critical_path_length(),
              calls=calls), file=out)
    if later := plan.unexpanded_phases():
        print(say("phases_later", count=len(later),
                  phases=", ".join(phase.id for phase in later)), file=out)
    print(_side_effects_line(plan, engine.registry, yes), file=out)
    if yes or ask(say("execute")):
        return True
    print(say("not_executed"), file=out)
    return False


def _side_effects_line(plan: Plan, registry: Any, yes: bool) -> str:
    """Which steps have a side effect ("s2 send_invoice"), and whether each asks before it
    runs (it does, unless ``--yes`` approved them all)."""
    from core.plan.approval import has_side_effect

    steps = ", ".join(f"{step.id} {step.tool}" for step in plan.steps
                      if has_side_effect(step, registry))
    if not steps:
        return say("plan_no_side_effects")
    return say("plan_side_effects_yes" if yes else "plan_side_effects", steps=steps)


def load_plan_file(path: Path, request: str = "") -> Plan:
    """The plan in a JSON file; its goal is ``request`` when given, else the file's own,
    else the file's name. A plan no run takes (core.plan.size) is refused here, before
    anything else reads it."""
    from core.plan.parse import parse_plan
    from core.plan.size import check_size

    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"Cannot read plan file {path}: {exc.strerror}.") from None
    except UnicodeDecodeError:
        raise ConfigError(f"Plan file {path} is not UTF-8 text; save it as UTF-8 JSON.") from None
    plan = parse_plan(text, goal=request)
    plan.goal = plan.goal or path.stem
    check_size(plan)
    return plan

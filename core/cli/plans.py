"""Plans on the command line: read from a plan file, and shown before a person runs them."""

from __future__ import annotations

import json
import unicodedata
from pathlib import Path
from typing import Any

from core.base.text import preview
from core.cli.output import ask
from core.cli.text import say
from core.errors import ConfigError
from core.plan.model import STATUS_ICONS, Plan, Step

__all__ = ["approved_to_run", "load_plan_file", "plan_text"]

_VALUE_WIDTH = 80  # characters of one argument's value shown; --json gives it whole
_ROWS = ("plan_row_tool", "plan_row_condition", "plan_row_after")  # the rows under a step


def approved_to_run(plan: Plan, engine: Any, yes: bool, out: Any) -> bool:
    """Validate, show the plan, its expected cost and its side-effecting steps, and ask
    "Execute? [y/N]"."""
    from core.execution.executor import predict_llm_calls
    from core.plan.size import check_size

    check_size(plan)
    plan.raise_if_invalid(engine.registry, can_infer=engine.model is not None)
    print(plan_text(plan, engine.registry), file=out)
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


def plan_text(plan: Plan, registry: Any) -> str:
    """The plan to review on a terminal: each step's status, id and description (marked
    when it has a side effect), then under it, in aligned rows, its tool with its
    arguments, its condition and the steps it waits for; a plan with phases lists each
    phase with its steps under it."""
    lines = [f"Plan v{plan.version}: {plan.goal}"]
    if not plan.phases:
        return "\n".join(lines + [row for s in plan.steps for row in _step_rows(s, registry, "  ")])
    statuses = plan.phase_statuses()
    for phase_id in statuses:
        phase = plan.phase(phase_id)
        lines.append(f"  {STATUS_ICONS[statuses[phase_id]]} {phase.id}: {phase.title}")
        lines += [row for s in plan.steps_of(phase_id) for row in _step_rows(s, registry, "    ")]
    lines += [row for s in plan.steps if s.phase not in statuses
              for row in _step_rows(s, registry, "  ")]
    return "\n".join(lines)


def _step_rows(step: Step, registry: Any, indent: str) -> list[str]:
    from core.plan.approval import has_side_effect

    mark = "  " + say("plan_side_effect_mark") if has_side_effect(step, registry) else ""
    head = f"{indent}{STATUS_ICONS[step.status]} {step.id}: {step.description}{mark}"
    arguments = ", ".join(f"{name}={preview(json.dumps(value, ensure_ascii=False), _VALUE_WIDTH)}"
                          for name, value in (step.args or {}).items())
    rows = [("plan_row_tool", f"{step.tool}({arguments})" if step.tool
             else say("plan_no_tool"))]
    if step.condition:
        rows.append(("plan_row_condition", step.condition))
    if step.depends_on:
        rows.append(("plan_row_after", ", ".join(step.depends_on)))
    labels = {key: say(key) for key in _ROWS}
    width = max(_width(label) for label in labels.values())  # one column for every step
    pad = indent + " " * (len(STATUS_ICONS[step.status]) + 1)
    return [head] + [f"{pad}{labels[key]}{' ' * (width - _width(labels[key]))} {value}"
                     for key, value in rows]


def _width(text: str) -> int:
    """Columns ``text`` takes on a terminal: a wide (Chinese) character takes two."""
    return sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in text)


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

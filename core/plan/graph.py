"""Draw a plan as a Graphviz DOT dependency diagram (shared by the dashboard and the exports).

Nodes are coloured by step status; a conditional step has a dashed border and its
condition under the description; a step whose tool has side effects is marked with ⚠ and a
red border; the edges of the critical path are bold. A dependency on a step that does not
exist is drawn as a red dashed "missing" node, so the diagram shows what validation reports;
the steps of a dependency cycle and the edges between them are drawn red too.
"""

from __future__ import annotations

import hashlib
import itertools
import logging
import textwrap
from collections.abc import Iterable
from typing import TYPE_CHECKING

from core.base.markup import printable
from core.errors import PlanValidationError
from core.plan.model import STATUS_ICONS, Plan, Step

if TYPE_CHECKING:
    from core.tools.registry import ToolRegistry

__all__ = ["STATUS_COLOURS", "dot_escape", "plan_to_dot", "side_effect_tool_names"]

logger = logging.getLogger(__name__)

STATUS_COLOURS: dict[str, str] = {
    "pending": "#F1F3F5",
    "running": "#D0EBFF",
    "completed": "#D3F9D8",
    "failed": "#FFE3E3",
    "skipped": "#FFF3BF",
}
_BORDER = "#868E96"
_SIDE_EFFECT_BORDER = "#E03131"
_CRITICAL_EDGE = "#1C3D5A"
_CYCLE_NODE = f', color="{_SIDE_EFFECT_BORDER}", penwidth=2'
_CYCLE_EDGE = f' [color="{_SIDE_EFFECT_BORDER}", penwidth=2]'
_EDGE = "#ADB5BD"
_WRAP = 28
_MAX_DESCRIPTION = 90
_MAX_CONDITION = 48
_MAX_NAME = 40  # a step id or tool name in a label
_MAX_NODE_ID = 200  # Graphviz refuses quoted strings past 16 KB


def dot_escape(text: str) -> str:
    """``text`` made safe inside a double-quoted DOT string.

    Backslashes, quotes and line breaks are escaped; control characters, non-characters and
    lone surrogates are dropped or replaced (core.base.markup.printable), since they make
    the DOT invalid or the SVG not well-formed XML. ``&`` is written ``&amp;``: Graphviz
    reads entities in labels (``&#0;`` would put a NUL into the SVG).
    """
    return (
        printable(text)
        .replace("&", "&amp;")
        .replace("\\", "\\\\")
        .replace('"', '\\"')
        .replace("\n", "\\n")
    )


def side_effect_tool_names(registry: ToolRegistry) -> frozenset[str]:
    """Names of the tools in ``registry`` that change something outside PlanBoard."""
    return frozenset(t.name for t in registry if t.side_effect)


def plan_to_dot(
    plan: Plan,
    *,
    highlight_critical: bool = True,
    critical_path: bool | None = None,
    registry: ToolRegistry | None = None,
    side_effect_tools: Iterable[str] = (),
    highlight_cycles: bool = True,
) -> str:
    """The plan as DOT text: status colours, conditions, side effects and the critical path.

    ``critical_path`` is an alias of ``highlight_critical``. Side-effecting tools come from
    ``registry`` and/or ``side_effect_tools`` (names). ``highlight_cycles`` draws each
    dependency cycle in red.
    """
    if critical_path is not None:
        highlight_critical = critical_path
    risky = set(side_effect_tools)
    if registry is not None:
        risky |= side_effect_tool_names(registry)
    on_path = _critical_edges(plan) if highlight_critical else set()
    cycle_of = ({sid: n for n, cycle in enumerate(plan.cycles()) for sid in cycle}
                if highlight_cycles else {})
    lines = [
        "digraph plan {",
        '  graph [rankdir=TB, bgcolor="transparent", nodesep=0.35, ranksep=0.45];',
        '  node [shape=box, style="rounded,filled", fontname="Helvetica", fontsize=10,'
        f' color="{_BORDER}", margin="0.15,0.08"];',
        f'  edge [color="{_EDGE}", arrowsize=0.7];',
    ]
    ids = set(plan.ids())
    for step in plan.steps:
        on_cycle = _CYCLE_NODE if step.id in cycle_of else ""
        lines.append(f"  {_node_id(step.id)} [{_node_attrs(step, step.tool in risky)}{on_cycle}];")
    missing: set[str] = set()
    for step in plan.steps:
        for dep in step.depends_on:
            if dep not in ids:
                missing.add(dep)
            same_cycle = dep in cycle_of and cycle_of[dep] == cycle_of.get(step.id)
            edge = _CYCLE_EDGE if same_cycle else _edge_attrs(dep, step.id, on_path)
            lines.append(f"  {_node_id(dep)} -> {_node_id(step.id)}{edge};")
    for dep in sorted(missing):
        lines.append(
            f'  {_node_id(dep)} [label="{dot_escape(_shorten(dep, _MAX_NAME))} ?", style="dashed",'
            f' color="{_SIDE_EFFECT_BORDER}", fontcolor="{_SIDE_EFFECT_BORDER}"];'
        )
    lines.append("}")
    return "\n".join(lines)


def _node_id(step_id: str) -> str:
    """The quoted node of ``step_id``; a very long id is cut and told apart by its hash."""
    if len(step_id) > _MAX_NODE_ID:
        digest = hashlib.sha256(step_id.encode("utf-8", "replace")).hexdigest()[:12]
        step_id = f"{step_id[:_MAX_NODE_ID]}…{digest}"
    return f'"{dot_escape(step_id)}"'


def _node_attrs(step: Step, side_effect: bool) -> str:
    header = f"{STATUS_ICONS.get(step.status, '')} {_shorten(step.id, _MAX_NAME)}"
    if step.tool:
        header += f" · {_shorten(step.tool, _MAX_NAME)}"
    if side_effect:
        header = f"⚠ {header}"
    description = _shorten(step.description or "", _MAX_DESCRIPTION)
    parts = [header, *textwrap.wrap(description, _WRAP)]
    styles = ["rounded", "filled"]
    if step.condition:
        # the diamond reads "if" in any language: no English word in a Chinese plan's graph
        parts.append("◇ " + _shorten(step.condition, _MAX_CONDITION))
        styles.append("dashed")
    label = "\n".join(parts)
    attrs = [
        f'label="{dot_escape(label)}"',
        f'fillcolor="{STATUS_COLOURS.get(step.status, STATUS_COLOURS["pending"])}"',
        f'style="{",".join(styles)}"',
    ]
    if side_effect:
        attrs += [f'color="{_SIDE_EFFECT_BORDER}"', "penwidth=2"]
    if step.tool is None:
        attrs.append('fontcolor="#343A40"')
    return ", ".join(attrs)


def _edge_attrs(source: str, target: str, on_path: set[tuple[str, str]]) -> str:
    if (source, target) in on_path:
        return f' [color="{_CRITICAL_EDGE}", penwidth=2.5, style="bold"]'
    return ""


def _critical_edges(plan: Plan) -> set[tuple[str, str]]:
    try:
        path = plan.critical_path()
    except PlanValidationError:  # a cycle: validation reports it, the diagram just draws it
        logger.debug("no critical path for plan %s: it has a cycle", plan.id)
        return set()
    return set(itertools.pairwise(path))


def _shorten(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"

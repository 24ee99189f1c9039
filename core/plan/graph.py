"""Draw a plan as a Graphviz DOT dependency diagram (shared by the dashboard and the exports).

Nodes are coloured by step status; under a step's id and tool come its arguments
(``id=42, code=s1.code``), then its description; a conditional step
has a dashed border and its condition under the description; a step whose tool has side
effects is marked with ⚠ and a red border; the edges of the critical path are bold. A
dependency on a step that does not exist is drawn as a red dashed "missing" node, so the
diagram shows what validation reports; the steps of a dependency cycle and the edges
between them are drawn red too.
"""

from __future__ import annotations

import hashlib
import itertools
import logging
import re
from collections import Counter
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from core.base.markup import printable
from core.base.text import as_text
from core.errors import PlanValidationError
from core.plan.dag import topological_ids
from core.plan.label_text import ELLIPSIS, clip_columns, display_width, text_em, wrap_label
from core.plan.model import REFERENCE, STATUS_ICONS, Plan, Step

if TYPE_CHECKING:
    from core.tools.registry import ToolRegistry

__all__ = ["STATUS_COLOURS", "dot_escape", "plan_to_dot", "side_effect_tool_names", "step_node_id"]

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
_WRAP = 28  # display columns of a label line (a CJK character takes two)
# a rank of this many steps side by side wraps narrower: five fit the run page's graph tab
# at 1280 px with text at 11 px
_CROWDED = 4
_WRAP_CROWDED = 22
_NODESEP_IN = 0.25
_MAX_DESCRIPTION = 90
_MAX_ARG_NAME = 16  # display columns
_MIN_ARG_VALUE, _MAX_ARG_VALUE = 8, 24  # display columns of a value beside its name
_MAX_ARG_LINES = 2
_LIKE_REFERENCE = re.compile(r"s\d+(?:[.\[]\S*)?")  # text a reader would take for one
_MAX_CONDITION = 48
_MAX_NAME = 40  # a step id or tool name in a label
_MAX_NODE_ID = 200  # Graphviz refuses quoted strings past 16 KB
_FONT_PT = 10
_MARGIN_IN = (0.1, 0.08)  # a node's inner margin around its label, in inches


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
        f'  graph [rankdir=TB, bgcolor="transparent", nodesep={_NODESEP_IN}, ranksep=0.45];',
        f'  node [shape=box, style="rounded,filled", fontname="Helvetica", fontsize={_FONT_PT},'
        f' color="{_BORDER}", margin="{_MARGIN_IN[0]},{_MARGIN_IN[1]}"];',
        f'  edge [color="{_EDGE}", arrowsize=0.7];',
    ]
    ids = set(plan.ids())
    crowded = _crowded_steps(plan)
    for step in plan.steps:
        on_cycle = _CYCLE_NODE if step.id in cycle_of else ""
        wrap = _WRAP_CROWDED if step.id in crowded else _WRAP
        attrs = _node_attrs(step, step.tool in risky, wrap)
        lines.append(f"  {_node_id(step.id)} [{attrs}{on_cycle}];")
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


def step_node_id(step_id: str) -> str:
    """The SVG id of a step's node (``step-s1``): the dashboard's graph maps a click back by it."""
    return f"step-{step_id}"


def _crowded_steps(plan: Plan) -> set[str]:
    """Steps in a rank of the drawing with :data:`_CROWDED` or more steps side by side.

    A step's rank is one below its deepest dependency, as Graphviz lays out a plan; steps on
    or behind a cycle have none and are left out.
    """
    graph = plan.dependency_graph()
    rank: dict[str, int] = {}
    for sid in topological_ids(graph):
        rank[sid] = 1 + max((rank[d] for d in graph[sid] if d in rank), default=-1)
    sizes = Counter(rank.values())
    return {sid for sid, level in rank.items() if sizes[level] >= _CROWDED}


def _node_attrs(step: Step, side_effect: bool, wrap: int) -> str:
    header = f"{STATUS_ICONS.get(step.status, '')} {_shorten(step.id, _MAX_NAME)}"
    if step.tool:
        header += f" · {_shorten(step.tool, _MAX_NAME)}"
    if side_effect:
        header = f"⚠ {header}"
    description = _shorten(step.description or "", _MAX_DESCRIPTION)
    parts = [header, *_args_lines(step.args, wrap), *wrap_label(description, wrap)]
    styles = ["rounded", "filled"]
    if step.condition:
        # the diamond reads "if" in any language: no English word in a Chinese plan's graph
        parts.append("◇ " + _shorten(step.condition, _MAX_CONDITION))
        styles.append("dashed")
    label = "\n".join(parts)
    attrs = [
        f'label="{dot_escape(label)}"',
        f"width={_label_width_in(parts):.2f}",
        f'fillcolor="{STATUS_COLOURS.get(step.status, STATUS_COLOURS["pending"])}"',
        f'style="{",".join(styles)}"',
    ]
    if len(step.id) <= _MAX_NODE_ID:  # a longer id is cut in the DOT: not selectable
        attrs.append(f'id="{dot_escape(step_node_id(step.id))}"')
    if side_effect:
        attrs += [f'color="{_SIDE_EFFECT_BORDER}"', "penwidth=2"]
    if step.tool is None:
        attrs.append('fontcolor="#343A40"')
    return ", ".join(attrs)


def _args_lines(args: dict[str, Any] | None, wrap: int) -> list[str]:
    """``name=value`` for each argument, joined by ", ", in at most two lines of ``wrap``.

    A line breaks between two arguments rather than inside one where it can; names and
    values are clipped, and the last line ends in "…" when more was left out, so that a
    long query or text cannot blow the node up.
    """
    lines: list[str] = []
    for name, value in (args or {}).items():
        name = clip_columns(" ".join(str(name).split()), _MAX_ARG_NAME)
        room = min(max(wrap - display_width(name) - 1, _MIN_ARG_VALUE), _MAX_ARG_VALUE)
        pair = f"{name}={_arg_value(value, room)}"
        if lines and display_width(lines[-1]) + 2 + display_width(pair) <= wrap:
            lines[-1] += ", " + pair
        else:
            lines += wrap_label(pair, wrap)
        if len(lines) > _MAX_ARG_LINES:  # the rest is left out: no need to read it
            break
    if len(lines) > _MAX_ARG_LINES:
        lines = lines[:_MAX_ARG_LINES]
        lines[-1] = clip_columns(lines[-1] + ELLIPSIS, wrap)
    return lines


def _arg_value(value: Any, columns: int) -> str:
    """An argument's value as a label shows it, in about ``columns``.

    A reference reads as a condition does (``s1.code``); text is quoted when it holds
    a space, comma or "=", or could be taken for a reference; anything else is compact JSON.
    """
    if not isinstance(value, str):
        return clip_columns(as_text(_one_line(value)), columns)
    text = " ".join(value.split())
    reference = REFERENCE.fullmatch(text)
    if reference:
        return clip_columns(reference[1] + reference[2], _MAX_NAME)
    if text and not any(ch in text for ch in " ,=") and not _LIKE_REFERENCE.fullmatch(text):
        return clip_columns(text, columns)
    return f'"{clip_columns(text, columns - 2)}"'


def _one_line(value: Any) -> Any:
    """``value`` with every string in it folded to one line: JSON would show a newline
    inside a list or object as ``\\n``, which reads as a line break in a label."""
    if isinstance(value, str):
        return " ".join(value.split())
    if isinstance(value, dict):
        return {_one_line(str(key)): _one_line(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_one_line(item) for item in value]
    return value


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


def _label_width_in(lines: list[str]) -> float:
    """The width a node needs for ``lines`` in the browser, in inches.

    Graphviz estimates text width from its own Helvetica table and counts every byte of a
    non-ASCII character as a space: a CJK character comes out at 0.83 em where browsers
    draw 1 em, and a Chinese label spilled past its node. Given as the node's ``width``
    (a minimum), this estimate keeps the label inside; Graphviz still widens the node when
    its own estimate is larger.
    """
    return max(map(text_em, lines), default=0.0) * _FONT_PT / 72 + 2 * _MARGIN_IN[0]

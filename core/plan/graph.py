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
import unicodedata
from collections.abc import Iterable
from typing import TYPE_CHECKING

from core.base.markup import printable
from core.errors import PlanValidationError
from core.plan.model import STATUS_ICONS, Plan, Step

if TYPE_CHECKING:
    from core.tools.registry import ToolRegistry

__all__ = [
    "STATUS_COLOURS", "display_width", "dot_escape", "plan_to_dot", "side_effect_tool_names",
    "step_node_id", "wrap_label",
]

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
_WRAP = 28  # display columns of a description line (a CJK character takes two)
_MAX_DESCRIPTION = 90
_MAX_CONDITION = 48
_MAX_NAME = 40  # a step id or tool name in a label
_MAX_NODE_ID = 200  # Graphviz refuses quoted strings past 16 KB
_FONT_PT = 10
_MARGIN_IN = (0.15, 0.08)  # a node's inner margin around its label, in inches


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
        f'  node [shape=box, style="rounded,filled", fontname="Helvetica", fontsize={_FONT_PT},'
        f' color="{_BORDER}", margin="{_MARGIN_IN[0]},{_MARGIN_IN[1]}"];',
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


def step_node_id(step_id: str) -> str:
    """The SVG id of a step's node (``step-s1``): the dashboard's graph maps a click back by it."""
    return f"step-{step_id}"


def _node_attrs(step: Step, side_effect: bool) -> str:
    header = f"{STATUS_ICONS.get(step.status, '')} {_shorten(step.id, _MAX_NAME)}"
    if step.tool:
        header += f" · {_shorten(step.tool, _MAX_NAME)}"
    if side_effect:
        header = f"⚠ {header}"
    description = _shorten(step.description or "", _MAX_DESCRIPTION)
    parts = [header, *wrap_label(description, _WRAP)]
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


# Em widths of Helvetica (and its metric twins Arial and Liberation Sans) by class of
# character, rounded up; anything else non-ASCII (CJK, ○, ◇, ⚠) is drawn from a fallback
# font and counted a full em.
_NARROW = frozenset(" !'(),./:;I[]fijlrt|")
_WIDE = frozenset("@MWmw")


def _label_width_in(lines: list[str]) -> float:
    """The width a node needs for ``lines`` in the browser, in inches.

    Graphviz estimates text width from its own Helvetica table and counts every byte of a
    non-ASCII character as a space: a CJK character comes out at 0.83 em where browsers
    draw 1 em, and a Chinese label spilled past its node. Given as the node's ``width``
    (a minimum), this estimate keeps the label inside; Graphviz still widens the node when
    its own estimate is larger.
    """
    text_em = max((sum(map(_char_em, line)) for line in lines), default=0.0)
    return text_em * _FONT_PT / 72 + 2 * _MARGIN_IN[0]


def _char_em(ch: str) -> float:
    if not ch.isascii():
        return 1.0
    if ch in _NARROW:
        return 0.3
    if ch in _WIDE:
        return 0.85
    return 0.72 if ch.isupper() else 0.56


# CJK punctuation that must not start a line: it stays with the character before it
_NO_LINE_START = frozenset("，。、；：！？）》」』】〕…")


def display_width(text: str) -> int:
    """Columns ``text`` takes in a label: a wide (CJK) or full-width character counts two."""
    return sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in text)


def wrap_label(text: str, width: int) -> list[str]:
    """``text`` as lines of at most ``width`` display columns.

    Latin words break at spaces (a word longer than a line is cut); CJK text breaks between
    any two characters, except before closing punctuation. Runs of whitespace become one
    space.
    """
    lines: list[str] = []
    line, used = "", 0
    for segment, spaced in _segments(text):
        gap = 1 if spaced and line else 0
        size = display_width(segment)
        if used + gap + size <= width:
            line, used = line + " " * gap + segment, used + gap + size
            continue
        if line:
            lines.append(line)
        while size > width:
            head = _fitting_prefix(segment, width)
            lines.append(head)
            segment = segment[len(head):]
            size = display_width(segment)
        line, used = segment, size
    if line:
        lines.append(line)
    return lines


def _segments(text: str) -> list[tuple[str, bool]]:
    """Unbreakable pieces of ``text`` and whether a space comes before each.

    A wide character is a piece of its own; a run of narrow characters is one piece.
    """
    pieces: list[tuple[str, bool]] = []
    for word in text.split():
        for index, ch in enumerate(word):
            wide = display_width(ch) == 2
            after_narrow = index > 0 and not pieces[-1][2]
            if index > 0 and (ch in _NO_LINE_START or (after_narrow and not wide)):
                segment, spaced, _ = pieces[-1]
                pieces[-1] = (segment + ch, spaced, wide)
            else:
                pieces.append((ch, index == 0, wide))
    return [(segment, spaced) for segment, spaced, _ in pieces]


def _fitting_prefix(segment: str, width: int) -> str:
    """The longest start of ``segment`` within ``width`` columns (at least one character)."""
    used = 0
    for end, ch in enumerate(segment):
        used += display_width(ch)
        if used > width:
            return segment[: max(end, 1)]
    return segment

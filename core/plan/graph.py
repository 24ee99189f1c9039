"""Draw a plan as a Graphviz DOT dependency diagram (shared by the dashboard and the exports).

Nodes are coloured by step status; under a step's id and tool come its arguments
(``id=42, code=s1.code``), then its description; a conditional step
has a dashed border and its condition under the description; a step whose tool has side
effects is marked with ⚠ and a red border; the edges of the critical path are bold. A
dependency on a step that does not exist is drawn as a red dashed "missing" node, so the
diagram shows what validation reports; the steps of a dependency cycle and the edges
between them are drawn red too.

A plan with phases draws each phase as a cluster (``subgraph cluster_p2``) titled with its
status icon, id, title and its steps counted by status; a folded phase is one node with
those counts (``▸``: a click unfolds it), and so is a phase still to expand. The edges of a
folded phase's steps go to its node; a phase that comes after another without a step edge
between them gets a dashed edge. :func:`default_folded` says which phases a drawing folds
when nobody chose: for a plan of more than :data:`FOLD_OVER` steps, every phase but the
current one (finished and future phases alike).
"""

from __future__ import annotations

import hashlib
import itertools
import logging
import re
from collections import Counter
from collections.abc import Collection, Iterable
from typing import TYPE_CHECKING, Any

from core.base.markup import printable
from core.base.text import as_text
from core.errors import PlanValidationError
from core.plan.dag import topological_ids
from core.plan.label_text import ELLIPSIS, clip_columns, display_width, text_em, wrap_label
from core.plan.model import REFERENCE, STATUS_ICONS, Plan, Step

if TYPE_CHECKING:
    from core.tools.registry import ToolRegistry

__all__ = ["FOLD_OVER", "STATUS_COLOURS", "default_folded", "dot_escape", "phase_node_id",
           "plan_to_dot", "side_effect_tool_names", "step_node_id"]

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
# more room beside a line of CJK text, in em: its characters fill their boxes edge to edge,
# so at the margin Latin text needs it reads as touching the border. A description in CJK
# wraps that much narrower (2 columns: 1 em), so that its node is no wider for it.
_WIDE_ROOM_EM = 1.0
_WIDE_ROOM_COLUMNS = 2
FOLD_OVER = 20  # a plan of more steps than this opens with only its current phase unfolded
_PHASE_FILL = {  # a cluster's background: its status, paler than a step's
    "pending": "#F8F9FA", "running": "#E7F5FF", "completed": "#EBFBEE", "failed": "#FFF5F5",
    "skipped": "#FFF9DB",
}
_PHASE_BORDER = "#ADB5BD"
_PHASE_EDGE = f'[style="dashed", color="{_PHASE_BORDER}"]'
_COUNT_ORDER = ("completed", "running", "failed", "skipped", "pending")


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
    folded: Collection[str] | None = None,
) -> str:
    """The plan as DOT text: status colours, conditions, side effects and the critical path.

    ``critical_path`` is an alias of ``highlight_critical``. Side-effecting tools come from
    ``registry`` and/or ``side_effect_tools`` (names). ``highlight_cycles`` draws each
    dependency cycle in red. ``folded``: the phases drawn as one node each (None: as
    :func:`default_folded` says; a phase still to expand is always one node).
    """
    if critical_path is not None:
        highlight_critical = critical_path
    risky = set(side_effect_tools)
    if registry is not None:
        risky |= side_effect_tool_names(registry)
    on_path = _critical_edges(plan) if highlight_critical else set()
    cycle_of = ({sid: n for n, cycle in enumerate(plan.cycles()) for sid in cycle}
                if highlight_cycles else {})
    if plan.phases:
        return _phased_dot(plan, risky, on_path, cycle_of,
                           default_folded(plan) if folded is None else set(folded))
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


def default_folded(plan: Plan) -> set[str]:
    """The phases a drawing of ``plan`` folds when nobody chose: none for a plan of at most
    :data:`FOLD_OVER` steps; else every phase but the current one."""
    if len(plan.steps) <= FOLD_OVER:
        return set()
    current = current_phase(plan)
    return {phase.id for phase in plan.phases if phase.id != current}


def current_phase(plan: Plan) -> str | None:
    """The phase a person is most likely looking at: the first running one, else the first
    that has not finished and whose phases have, else the last one."""
    statuses = plan.phase_statuses()
    running = [pid for pid, status in statuses.items() if status == "running"]
    if running:
        return running[0]
    waiting = {p.id: p.depends_on for p in plan.phases}
    for pid, status in statuses.items():
        if status == "pending" and all(statuses.get(dep) in {"completed", "skipped"}
                                       for dep in waiting[pid]):
            return pid
    return next(reversed(statuses), None)


def phase_node_id(phase_id: str) -> str:
    """The SVG id of a phase's node or cluster (``phase-p2``): a click maps back by it."""
    return f"phase-{phase_id}"


def _phased_dot(plan: Plan, risky: set[str], on_path: set[tuple[str, str]],
                cycle_of: dict[str, int], folded: set[str]) -> str:
    """The DOT of a plan with phases: a cluster per open phase, a node per folded one."""
    lines = [
        "digraph plan {",
        f'  graph [rankdir=TB, bgcolor="transparent", nodesep={_NODESEP_IN}, ranksep=0.45,'
        ' compound=true];',
        f'  node [shape=box, style="rounded,filled", fontname="Helvetica", fontsize={_FONT_PT},'
        f' color="{_BORDER}", margin="{_MARGIN_IN[0]},{_MARGIN_IN[1]}"];',
        f'  edge [color="{_EDGE}", arrowsize=0.7];',
    ]
    statuses = plan.phase_statuses()
    grouped = {pid: plan.steps_of(pid) for pid in statuses}
    shut = {pid for pid in statuses if pid in folded or not grouped[pid]}
    crowded = _crowded_steps(plan)
    for pid in statuses:
        phase, steps = plan.phase(pid), grouped[pid]
        head = f"{STATUS_ICONS[statuses[pid]]} {_shorten(pid, _MAX_NAME)} · {phase.title}"
        counts = _counts(steps)
        if pid in shut:
            lines.append(_folded_node(pid, head, counts, statuses[pid], bool(steps)))
            continue
        wrap = _WRAP_CROWDED if any(step.id in crowded for step in steps) else _WRAP
        title = _title_lines(f"▾ {_shorten(head, _MAX_DESCRIPTION)}", counts, wrap)
        lines += [f"  subgraph {_cluster(pid)} {{",
                  f'    id="{dot_escape(phase_node_id(pid))}"; label="{_left_lines(title)}";',
                  '    labeljust="l"; style="rounded,filled";'
                  f' fillcolor="{_PHASE_FILL[statuses[pid]]}"; color="{_PHASE_BORDER}";'
                  f" fontname=\"Helvetica\"; fontsize={_FONT_PT};"]
        least = _text_width_in(title)
        for step in steps:
            on_cycle = _CYCLE_NODE if step.id in cycle_of else ""
            wrap = _WRAP_CROWDED if step.id in crowded else _WRAP
            attrs = _node_attrs(step, step.tool in risky, wrap, least)
            lines.append(f"    {_node_id(step.id)} [{attrs}{on_cycle}];")
        lines.append("  }")
    lines += [f"  {_node_id(s.id)} [{_node_attrs(s, s.tool in risky, _WRAP)}];"
              for s in plan.steps if s.phase not in statuses]  # validation reports these
    lines += _phased_edges(plan, shut, on_path, cycle_of)
    lines.append("}")
    return "\n".join(lines)


def _cluster(phase_id: str) -> str:
    return f'"cluster_{dot_escape(_shorten(phase_id, _MAX_NAME))}"'


def _counts(steps: list[Step]) -> str:
    """A phase's steps counted by status, as icons: ``✓ 3 · ▶ 1 · ○ 2``."""
    tally = Counter(step.status for step in steps)
    return " · ".join(f"{STATUS_ICONS[status]} {tally[status]}" for status in _COUNT_ORDER
                      if tally[status])


def _folded_node(phase_id: str, head: str, counts: str, status: str, expanded: bool) -> str:
    """One node for a folded phase (``▸``: a click unfolds it), or for a phase still to
    expand (``⋯``: its steps come when it is reached)."""
    first = f"{'▸' if expanded else '⋯'} {_shorten(head, _MAX_DESCRIPTION)}"
    parts = [*_wrapped(first, _WRAP), counts or "⋯"]
    return (f'  "{dot_escape(phase_node_id(phase_id))}" '
            f'[label="{dot_escape(chr(10).join(parts))}", '
            f'id="{dot_escape(phase_node_id(phase_id))}", shape=box, '
            f'style="rounded,filled,bold", fillcolor="{_PHASE_FILL[status]}", '
            f'color="{_PHASE_BORDER}", peripheries=2, '
            f"width={_label_width_in(parts):.2f}];")


def _title_lines(title: str, counts: str, wrap: int) -> list[str]:
    """A cluster's title in lines of at most ``wrap`` columns, as a step's label wraps (a
    long title would make its cluster, and the whole drawing, wider than its steps), its
    steps counted at the end."""
    lines = _wrapped(title, wrap)
    if counts and display_width(f"{lines[-1]}   {counts}") <= wrap:
        lines[-1] = f"{lines[-1]}   {counts}"
    elif counts:
        lines.append(counts)
    return lines


def _wrapped(text: str, wrap: int) -> list[str]:
    """``text`` as it is when it fits in ``wrap`` columns, else wrapped to them."""
    return [text] if display_width(text) <= wrap else wrap_label(text, wrap)


def _left_lines(lines: list[str]) -> str:
    """``lines`` as a DOT label, each line left-aligned when there are several."""
    if len(lines) == 1:
        return dot_escape(lines[0])
    return "".join(dot_escape(line) + "\\l" for line in lines)


def _phased_edges(plan: Plan, shut: set[str], on_path: set[tuple[str, str]],
                  cycle_of: dict[str, int]) -> list[str]:
    """Step edges (those of a folded phase end at its node, once), then a dashed edge for
    each phase dependency that no step edge shows."""
    phase_of = {s.id: s.phase for s in plan.steps}

    def end(step_id: str) -> str:
        phase = phase_of.get(step_id)
        return (f'"{dot_escape(phase_node_id(phase))}"' if phase in shut
                else _node_id(step_id))

    lines: list[str] = []
    drawn: set[tuple[str, str]] = set()
    linked: set[tuple[str | None, str | None]] = set()
    missing: set[str] = set()
    for step in plan.steps:
        for dep in step.depends_on:
            if dep not in phase_of:
                missing.add(dep)
            linked.add((phase_of.get(dep), step.phase))
            source, target = end(dep), end(step.id)
            if source == target or (source, target) in drawn:
                continue
            drawn.add((source, target))
            same_cycle = dep in cycle_of and cycle_of[dep] == cycle_of.get(step.id)
            between_steps = (source, target) == (_node_id(dep), _node_id(step.id))
            edge = (_CYCLE_EDGE if same_cycle else
                    _edge_attrs(dep, step.id, on_path) if between_steps else "")
            lines.append(f"  {source} -> {target}{edge};")
    lines += [f'  {_node_id(dep)} [label="{dot_escape(_shorten(dep, _MAX_NAME))} ?", '
              f'style="dashed", color="{_SIDE_EFFECT_BORDER}", '
              f'fontcolor="{_SIDE_EFFECT_BORDER}"];' for dep in sorted(missing)]
    known = {p.id for p in plan.phases}
    for phase in plan.phases:
        for dep in phase.depends_on:
            if dep in known and (dep, phase.id) not in linked:
                lines.append(_phase_edge(plan, dep, phase.id, shut))
    return lines


def _phase_edge(plan: Plan, source: str, target: str, shut: set[str]) -> str:
    """A dashed edge from phase ``source`` to phase ``target``: node to node, or between
    a step of each open cluster, clipped at the cluster's border."""
    ends, clip = [], []
    for phase_id, side in ((source, "ltail"), (target, "lhead")):
        if phase_id in shut:
            ends.append(f'"{dot_escape(phase_node_id(phase_id))}"')
        else:
            steps = plan.steps_of(phase_id)
            ends.append(_node_id((steps[-1] if side == "ltail" else steps[0]).id))
            clip.append(f"{side}={_cluster(phase_id)}")
    style = _PHASE_EDGE[:-1] + "".join(f", {c}" for c in clip) + "]"
    return f"  {ends[0]} -> {ends[1]} {style};"


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


def _node_attrs(step: Step, side_effect: bool, wrap: int, least: float = 0.0) -> str:
    """A step node's DOT attributes; the node is at least ``least`` inches wide."""
    header = f"{STATUS_ICONS.get(step.status, '')} {_shorten(step.id, _MAX_NAME)}"
    if step.tool:
        header += f" · {_shorten(step.tool, _MAX_NAME)}"
    if side_effect:
        header = f"⚠ {header}"
    description = _shorten(step.description or "", _MAX_DESCRIPTION)
    room = _WIDE_ROOM_COLUMNS if _has_wide(description) else 0
    parts = [header, *_args_lines(step.args, wrap), *wrap_label(description, wrap - room)]
    styles = ["rounded", "filled"]
    if step.condition:
        # the diamond reads "if" in any language: no English word in a Chinese plan's graph
        parts.append("◇ " + _shorten(step.condition, _MAX_CONDITION))
        styles.append("dashed")
    label = "\n".join(parts)
    attrs = [
        f'label="{dot_escape(label)}"',
        f"width={max(_label_width_in(parts), least):.2f}",
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


def _text_width_in(lines: list[str]) -> float:
    """How wide a browser draws the widest of ``lines``, in inches.

    A cluster has no width of its own: Graphviz sizes it around its steps and its title,
    whose width it underestimates for CJK text (see :func:`_label_width_in`), so a Chinese
    title spilled past its cluster's border. The steps of a cluster are made at least as
    wide as its title instead.
    """
    return max(map(text_em, lines), default=0.0) * _FONT_PT / 72


def _label_width_in(lines: list[str]) -> float:
    """The width a node needs for ``lines`` in the browser, in inches.

    Graphviz estimates text width from its own Helvetica table and counts every byte of a
    non-ASCII character as a space: a CJK character comes out at 0.83 em where browsers
    draw 1 em, and a Chinese label spilled past its node. Given as the node's ``width``
    (a minimum), this estimate keeps the label inside; Graphviz still widens the node when
    its own estimate is larger. A line with CJK text gets :data:`_WIDE_ROOM_EM` more.
    """
    widest = max((text_em(line) + (_WIDE_ROOM_EM if _has_wide(line) else 0.0)
                  for line in lines), default=0.0)
    return widest * _FONT_PT / 72 + 2 * _MARGIN_IN[0]


def _has_wide(text: str) -> bool:
    """True when ``text`` holds a wide (CJK or full-width) character."""
    return display_width(text) > len(text)

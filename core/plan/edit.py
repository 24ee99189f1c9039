"""Pure functions behind the plan table: a plan as rows, edited rows back into a plan, and moves.

The dashboard shows a plan as one row per step and reads the edited rows back with
:func:`rows_to_plan`. Rows are merged into the plan they were made from, so runtime fields
survive and new rows get fresh ids. Problems that are not the plan's own (a cell that is
not valid JSON) are returned by step id; a dependency typed on a step that does not exist
is left in place so that ``Plan.validate()`` reports it by step id too.

Deleting a step (a control or a table row) is safe: :func:`delete_step` detaches it from
the steps that remain, so that no dangling dependency blocks approval. Its dependents
inherit its own dependencies (the order of the remaining steps is kept), an argument that
read its result is removed (a missing argument is asked of the model at run time, or
reported offline), and a condition that reads it is *kept*: a condition usually guards a
side effect ("refund if delivered"), and dropping it would let the step run
unconditionally, so validation keeps blocking approval until a person rewrites it. Each
such change comes back as a note. :func:`update_step` changes fields of one step (the step
panel's edits); :func:`remember` keeps the bounded undo history.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from typing import Any

from core.base.copies import copied
from core.base.messages import Message, json_error, msg
from core.plan.model import STEP_NAME, Plan, Step, references_in

__all__ = [
    "COLUMNS",
    "NO_TOOL",
    "add_step",
    "apply_grouped_changes",
    "apply_table_changes",
    "delete_step",
    "grouped_rows_to_plan",
    "grouped_table_edits",
    "move_step",
    "phase_groups",
    "plan_to_rows",
    "remember",
    "rows_to_plan",
    "table_edits",
    "undoes_table_first",
    "update_step",
]

COLUMNS = ("id", "description", "tool", "args", "depends_on", "condition", "success_criteria",
           "phase")
NO_TOOL = "none"
"""The tool cell of a reasoning step: an explicit choice, never an empty cell."""
_NO_TOOL_SPELLINGS = {"", "none", "null", "(none)", "-", "—", "无"}
_SEPARATORS = re.compile(r"[,\s;，、]+")
UNDO_LIMIT = 20
"""How many earlier versions of a plan the editor keeps for undo."""


def plan_to_rows(plan: Plan) -> list[dict[str, str]]:
    """One row per step with every cell as text (args as JSON, depends_on as "s1, s2")."""
    return [
        {
            "id": step.id,
            "description": step.description,
            "tool": step.tool or NO_TOOL,
            "args": "" if step.args is None else json.dumps(step.args, ensure_ascii=False),
            "depends_on": ", ".join(step.depends_on),
            "condition": step.condition or "",
            "success_criteria": step.success_criteria or "",
            "phase": step.phase or "",
        }
        for step in plan.steps
    ]


def phase_groups(plan: Plan) -> list[tuple[str, list[Step]]]:
    """The steps of a plan with phases by phase, in phase order (every phase, also one
    without steps yet); steps naming no known phase last, under ""."""
    known = plan.phase_ids()
    groups: dict[str, list[Step]] = {phase_id: [] for phase_id in known}
    for step in plan.steps:
        groups.setdefault(step.phase if step.phase in groups else "", []).append(step)
    return list(groups.items())


def grouped_rows_to_plan(base_plan: Plan, rows_by_group: Mapping[str, list[dict[str, Any]]]
                         ) -> tuple[Plan, list[Message]]:
    """:func:`rows_to_plan` for a table shown as one table per phase: the groups' rows in
    the order given, each row in its group's phase unless its own phase cell names
    another (moving the step there); a new row joins its group's phase."""
    rows = []
    for group, group_rows in rows_by_group.items():
        for row in group_rows:
            cell = _text(row.get("phase"))
            rows.append({**row, "phase": cell if cell else group})
    return rows_to_plan(base_plan, rows)


def apply_grouped_changes(base_plan: Plan,
                          changes: Mapping[str, dict[str, Any] | None]) -> Plan:
    """:func:`apply_table_changes` for one table per phase: ``changes`` holds each phase's
    table state (edited, added and deleted rows, indexed within that phase's table)."""
    return grouped_table_edits(base_plan, changes)[0]


def grouped_table_edits(base_plan: Plan, changes: Mapping[str, dict[str, Any] | None]
                        ) -> tuple[Plan, list[Message]]:
    """:func:`table_edits` for one table per phase (see :func:`apply_grouped_changes`)."""
    rows_by_group: dict[str, list[dict[str, Any]]] = {}
    for group, steps in phase_groups(base_plan):
        rows = plan_to_rows(base_plan.model_copy(update={"steps": steps}))
        rows_by_group[group] = _changed_rows(rows, changes.get(group))
    return grouped_rows_to_plan(base_plan, rows_by_group)


def rows_to_plan(base_plan: Plan, rows: list[dict[str, Any]]
                 ) -> tuple[Plan, list[Message]]:
    """Merge edited ``rows`` into ``base_plan``: a new Plan in row order, plus row problems.

    A row whose id is a step of ``base_plan`` updates that step (runtime fields kept); any
    other row is a new step with the next free id. Steps without a row are deleted and
    detached as by :func:`delete_step` (their notes are dropped: the table shows it). Args
    that are not a JSON object are reported by step id and the step keeps
    its previous args.
    """
    plan = copied(base_plan)
    previous = {step.id: step for step in plan.steps}
    originals = {step.id: copied(step) for step in plan.steps}
    used: set[str] = set()
    steps: list[Step] = []
    errors: list[Message] = []
    id_source = plan.model_copy(update={"steps": list(plan.steps)})
    for row in rows:
        row_id = _text(row.get("id"))
        if row_id in previous and row_id not in used:
            step = previous[row_id]
        else:
            row_id = id_source.next_step_id()
            step = Step(id=row_id, description="")
            id_source.steps.append(step)
        used.add(row_id)
        error = _apply_row(step, row)
        if error:
            errors.append(error)
        steps.append(step)
    plan.steps = steps
    _detach(plan, {sid: step for sid, step in originals.items() if sid not in used})
    return plan, errors


def apply_table_changes(base_plan: Plan, changes: dict[str, Any] | None) -> Plan:
    """``base_plan`` with a table's pending changes applied (invalid cells keep old values).

    ``changes`` is what the table widget holds between draws: ``edited_rows`` (row index to
    the changed cells), ``added_rows`` and ``deleted_rows`` (row indices). A step control
    clicked right after typing in a cell must act on the typed value, not the old one.
    """
    return table_edits(base_plan, changes)[0]


def table_edits(base_plan: Plan, changes: dict[str, Any] | None
                ) -> tuple[Plan, list[Message]]:
    """``base_plan`` with a table's pending changes applied, and the cells it refused (they
    keep their old values in the plan while the table still shows what was typed)."""
    if not changes:
        return base_plan, []
    return rows_to_plan(base_plan, _changed_rows(plan_to_rows(base_plan), changes))


def undoes_table_first(plan: Plan, edits: tuple[Plan, list[Message]]) -> bool:
    """Whether Undo drops what the table holds rather than the last edit of ``plan``: a cell
    typed but not yet part of the plan, or one the plan refused, is an edit of its own
    (``edits``: :func:`table_edits` of the table)."""
    pending, refused = edits
    return bool(refused) or pending.model_dump_json() != plan.model_dump_json()


def _changed_rows(rows: list[dict[str, Any]], changes: dict[str, Any] | None
                  ) -> list[dict[str, Any]]:
    """``rows`` with a table's pending changes: edited cells, deleted and added rows."""
    if not changes:
        return rows
    rows = list(rows)
    for index, cells in (changes.get("edited_rows") or {}).items():
        position = int(index)
        if 0 <= position < len(rows):
            rows[position] = {**rows[position], **cells}
    deleted = {int(index) for index in changes.get("deleted_rows") or []}
    rows = [row for position, row in enumerate(rows) if position not in deleted]
    return rows + [dict(row) for row in changes.get("added_rows") or []]


def move_step(plan: Plan, step_id: str, offset: int) -> Plan:
    """A copy of ``plan`` with ``step_id`` moved ``offset`` places (-1 up, +1 down), clamped."""
    moved = copied(plan)
    index = moved.ids().index(step_id)
    target = max(0, min(len(moved.steps) - 1, index + offset))
    step = moved.steps.pop(index)
    moved.steps.insert(target, step)
    return moved


def add_step(plan: Plan, description: str = "", *, after: str | None = None) -> Plan:
    """A copy of ``plan`` with a new pending step (at the end, or right after ``after``);
    in a plan with phases it joins the phase of ``after`` (else the last phase)."""
    grown = copied(plan)
    step = Step(id=grown.next_step_id(), description=description)
    if grown.phases:
        step.phase = grown.step(after).phase if after else grown.phase_ids()[-1]
    if after is None:
        grown.steps.append(step)
    else:
        grown.steps.insert(grown.ids().index(after) + 1, step)
    return grown


def delete_step(plan: Plan, *step_ids: str) -> tuple[Plan, list[Message]]:
    """A copy of ``plan`` without ``step_ids``, detached from them, plus notes of what else
    changed.

    See the module docstring for what is detached and why a condition is kept.
    """
    smaller = copied(plan)
    removed = {step.id: step for step in smaller.steps if step.id in step_ids}
    smaller.steps = [step for step in smaller.steps if step.id not in removed]
    return smaller, _detach(smaller, removed)


def update_step(plan: Plan, step_id: str, **fields: Any) -> Plan:
    """A copy of ``plan`` whose step ``step_id`` has ``fields`` (description, tool, args ...)."""
    changed = copied(plan)
    step = changed.step(step_id)
    for name, value in fields.items():
        if name not in Step.model_fields:
            raise AttributeError(f"a step has no field {name!r}")
        setattr(step, name, value)
    return changed


def remember(history: list[Plan], plan: Plan, *, limit: int = UNDO_LIMIT) -> list[Plan]:
    """``history`` with ``plan`` as its newest entry: at most ``limit`` plans, no twin in a row.

    An edit that changes nothing (the same plan twice) must not cost an undo click.
    """
    if history and history[-1].model_dump_json() == plan.model_dump_json():
        return list(history)
    return [*history, plan][-limit:]


def _detach(plan: Plan, removed: dict[str, Step]) -> list[Message]:
    """Remove every link from ``plan``'s steps to the ``removed`` ones; say what changed."""
    if not removed:
        return []
    notes: list[Message] = []
    for step in plan.steps:
        inherited = _without_removed(step, removed)
        if inherited:
            notes.append(msg("edit.inherited", step=step.id, steps=", ".join(inherited)))
        dropped = [key for key, value in (step.args or {}).items()
                   if references_in(value) & removed.keys()]
        if dropped:
            step.args = {k: v for k, v in (step.args or {}).items() if k not in dropped} or None
            notes.append(msg("edit.arguments_dropped", step=step.id,
                             arguments=", ".join(dropped)))
        read = sorted(set(STEP_NAME.findall(step.condition or "")) & removed.keys())
        if read:
            notes.append(msg("edit.condition_reads_deleted", step=step.id,
                             steps=", ".join(read)))
    return notes


def _without_removed(step: Step, removed: dict[str, Step]) -> list[str]:
    """Replace ``step``'s dependencies on removed steps by theirs; return the new ones."""
    kept = [dep for dep in step.depends_on if dep not in removed]
    inherited: list[str] = []
    pending = [dep for dep in step.depends_on if dep in removed]
    seen = set(pending)
    while pending:  # a chain of removed steps: walk up to the steps that remain
        for dep in removed[pending.pop()].depends_on:
            if dep in removed:
                if dep not in seen:
                    seen.add(dep)
                    pending.append(dep)
            elif dep != step.id and dep not in kept and dep not in inherited:
                inherited.append(dep)
    step.depends_on = kept + inherited
    return inherited


def _apply_row(step: Step, row: dict[str, Any]) -> Message | None:
    step.description = _text(row.get("description"))
    tool = _text(row.get("tool"))
    step.tool = None if tool.lower() in _NO_TOOL_SPELLINGS else tool
    step.depends_on = _parse_depends(_text(row.get("depends_on")))
    step.condition = _text(row.get("condition")) or None
    step.success_criteria = _text(row.get("success_criteria")) or None
    if "phase" in row:
        step.phase = _text(row.get("phase")) or None
    args_text = _text(row.get("args"))
    if not args_text:
        step.args = None
        return None
    try:
        args = json.loads(args_text)
    except json.JSONDecodeError as exc:
        return msg("edit.args_not_json", step=step.id, error=json_error(exc))
    if not isinstance(args, dict):
        return msg("edit.args_not_object", step=step.id)
    step.args = args
    return None


def _parse_depends(text: str) -> list[str]:
    ids: list[str] = []
    for part in _SEPARATORS.split(text):
        if not part:
            continue
        step_id = f"s{part}" if part.isdigit() else part.lower() if part[:1] in "sS" else part
        if step_id not in ids:
            ids.append(step_id)
    return ids


def _text(value: Any) -> str:
    """A cell as stripped text; None and NaN (pandas' empty cell) become ""."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    return str(value).strip()

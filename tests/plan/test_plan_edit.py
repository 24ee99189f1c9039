"""Tests for core.plan.edit: the table <-> plan merge logic behind the plan editor."""

from __future__ import annotations

import json
import math
import re

from core.plan.edit import (
    COLUMNS,
    NO_TOOL,
    UNDO_LIMIT,
    add_step,
    apply_table_changes,
    delete_step,
    move_step,
    plan_to_rows,
    remember,
    rows_to_plan,
    table_edits,
    undoes_table_first,
)
from core.plan.model import Plan, Step
from tests.support.shown import worded


def _plan() -> Plan:
    return Plan(
        goal="Check order 88231 and recommend a vacuum",
        steps=[
            Step(id="s1", description="Look up order 88231", tool="query_order",
                 args={"order_id": "88231"}, success_criteria="status known"),
            Step(id="s2", description="Refund if delivered", tool="apply_refund",
                 args={"order_id": "88231", "reason": "坏了"}, depends_on=["s1"],
                 condition="s1.status == 'delivered'"),
            Step(id="s3", description="Summarise", depends_on=["s1", "s2"]),
        ],
    )


def test_rows_are_text_cells_in_column_order():
    rows = plan_to_rows(_plan())
    assert list(rows[0]) == list(COLUMNS)
    assert rows[1] == {
        "id": "s2", "description": "Refund if delivered", "tool": "apply_refund",
        "args": '{"order_id": "88231", "reason": "坏了"}', "depends_on": "s1",
        "condition": "s1.status == 'delivered'", "success_criteria": "", "phase": "",
    }
    assert rows[2]["tool"] == NO_TOOL and rows[2]["args"] == ""
    assert rows[2]["depends_on"] == "s1, s2"


def test_unchanged_rows_give_back_the_same_canonical_plan():
    plan = _plan()
    merged, errors = rows_to_plan(plan, plan_to_rows(plan))
    assert errors == []
    assert merged.canonical() == plan.canonical()
    assert merged.id == plan.id and merged is not plan


def test_edits_are_merged_by_id_and_runtime_fields_survive():
    plan = _plan()
    plan.steps[0].status = "completed"
    plan.steps[0].result = {"status": "delivered"}
    rows = plan_to_rows(plan)
    rows[0]["description"] = "Look up the order"
    rows[1]["args"] = '{"order_id": "88232"}'
    rows[1]["depends_on"] = "1;  s2 , S1"
    rows[2]["tool"] = "none"
    merged, errors = rows_to_plan(plan, rows)
    assert errors == []
    assert merged.step("s1").description == "Look up the order"
    assert merged.step("s1").result == {"status": "delivered"}
    assert merged.step("s1").status == "completed"
    assert merged.step("s2").args == {"order_id": "88232"}
    assert merged.step("s2").depends_on == ["s1", "s2"]
    assert merged.step("s3").tool is None
    assert plan.step("s2").args == {"order_id": "88231", "reason": "坏了"}  # base untouched


def test_new_rows_get_fresh_ids_even_after_a_deletion():
    plan = _plan()
    rows = [r for r in plan_to_rows(plan) if r["id"] != "s3"]
    rows.append({"id": None, "description": "New one", "tool": None, "args": None,
                 "depends_on": None, "condition": None, "success_criteria": None})
    rows.append({"id": float("nan"), "description": "Another", "tool": math.nan,
                 "args": math.nan, "depends_on": "s4", "condition": math.nan,
                 "success_criteria": math.nan})
    merged, errors = rows_to_plan(plan, rows)
    assert errors == []
    assert merged.ids() == ["s1", "s2", "s4", "s5"]  # s3 is never reused
    assert merged.step("s5").depends_on == ["s4"]
    assert merged.step("s5").tool is None and merged.step("s5").args is None


def test_the_same_rows_always_give_the_same_new_ids():
    plan = _plan()
    rows = [*plan_to_rows(plan), {"description": "x"}]
    first, _ = rows_to_plan(plan, rows)
    second, _ = rows_to_plan(plan, rows)
    assert first.ids() == second.ids() == ["s1", "s2", "s3", "s4"]


def test_invalid_json_args_are_reported_by_step_and_previous_args_kept():
    plan = _plan()
    rows = plan_to_rows(plan)
    rows[0]["args"] = '{"order_id": 88231'
    rows[1]["args"] = '["88231"]'
    merged, errors = rows_to_plan(plan, rows)
    assert len(errors) == 2
    assert worded(errors)[0].startswith("s1 args are not valid JSON")
    assert worded(errors)[1].startswith("s2 args must be a JSON object")
    assert merged.step("s1").args == {"order_id": "88231"}
    assert merged.step("s2").args == {"order_id": "88231", "reason": "坏了"}


def test_an_unterminated_string_in_a_cell_says_where_once_and_in_chinese_wholly():
    plan = _plan()
    rows = plan_to_rows(plan)
    rows[0]["args"] = '{"order_id": "88231}'
    _, errors = rows_to_plan(plan, rows)
    english, chinese = worded(errors)[0], worded(errors, "zh")[0]
    assert "at at" not in english  # json's own text ends in "at": it was said twice
    assert english.startswith(
        "s1 args are not valid JSON (the string starting at column 14 has no closing quote)")
    assert chinese.startswith("s1 的参数不是有效的 JSON（从第 14 列开始的字符串缺少结尾的引号）")
    assert re.findall(r"[A-Za-z]{2,}", chinese) == ["JSON"]


def test_undo_after_a_refused_cell_drops_that_cell_not_the_move_before_it():
    moved = move_step(_plan(), "s2", -1)  # the earlier edit: the table is rebuilt from it
    refused = {"edited_rows": {0: {"args": '{"order_id": "88231}'}}}
    pending, problems = table_edits(moved, refused)
    assert pending == moved and len(problems) == 1  # the plan kept the old args
    assert undoes_table_first(moved, (pending, problems))  # Undo clears the cell only
    typed = {"edited_rows": {0: {"description": "Refund it"}}}
    assert undoes_table_first(moved, table_edits(moved, typed))  # typed, not yet committed
    committed, _ = table_edits(moved, typed)
    assert not undoes_table_first(committed, table_edits(moved, typed))  # Undo: the history


def test_deleted_rows_are_detached_like_a_deleted_step():
    plan = _plan()
    rows = [r for r in plan_to_rows(plan) if r["id"] != "s1"]
    merged, _ = rows_to_plan(plan, rows)
    assert merged.step("s2").depends_on == [] and merged.step("s3").depends_on == ["s2"]
    assert not any("unknown step" in p for p in worded(merged.validate()))


def test_a_dependency_typed_on_a_step_that_never_existed_is_left_for_validation():
    plan = _plan()
    rows = plan_to_rows(plan)
    rows[2]["depends_on"] = "s1, s9"
    merged, _ = rows_to_plan(plan, rows)
    assert merged.step("s3").depends_on == ["s1", "s9"]
    assert "s3 depends on unknown step s9" in worded(merged.validate())


def test_a_cycle_typed_into_the_table_is_reported():
    plan = _plan()
    rows = plan_to_rows(plan)
    rows[0]["depends_on"] = "s3"
    merged, _ = rows_to_plan(plan, rows)
    assert any("dependency cycle" in p for p in worded(merged.validate()))


def test_move_step_up_and_down_is_clamped_and_copies():
    plan = _plan()
    assert move_step(plan, "s2", -1).ids() == ["s2", "s1", "s3"]
    assert move_step(plan, "s2", +1).ids() == ["s1", "s3", "s2"]
    assert move_step(plan, "s1", -1).ids() == ["s1", "s2", "s3"]
    assert move_step(plan, "s3", +1).ids() == ["s1", "s2", "s3"]
    assert plan.ids() == ["s1", "s2", "s3"]


def test_add_and_delete_step():
    plan = _plan()
    grown = add_step(plan, "Check logistics", after="s1")
    assert grown.ids() == ["s1", "s4", "s2", "s3"]
    assert grown.step("s4").description == "Check logistics"
    assert add_step(plan).ids()[-1] == "s4"
    smaller, notes = delete_step(plan, "s2")
    assert smaller.ids() == ["s1", "s3"]
    assert smaller.step("s3").depends_on == ["s1"] and notes == []
    assert plan.ids() == ["s1", "s2", "s3"] and plan.step("s3").depends_on == ["s1", "s2"]


def test_rows_round_trip_through_json_text():
    plan = _plan()
    rows = json.loads(json.dumps(plan_to_rows(plan)))
    merged, errors = rows_to_plan(plan, rows)
    assert not errors and merged.canonical() == plan.canonical()


def test_pending_table_changes_are_applied_before_a_step_control():
    base = Plan(goal="g", steps=[
        Step(id="s1", description="first"), Step(id="s2", description="second"),
        Step(id="s3", description="third", depends_on=["s1"])])
    changes = {
        "edited_rows": {0: {"description": "first, edited"}, "2": {"tool": "calculate"}},
        "deleted_rows": [1],
        "added_rows": [{"description": "a new step"}],
    }
    plan = apply_table_changes(base, changes)
    assert [s.description for s in plan.steps] == ["first, edited", "third", "a new step"]
    assert plan.step("s3").tool == "calculate" and plan.step("s3").depends_on == ["s1"]
    assert plan.steps[-1].id == "s4"  # a new id, never a reused one
    assert apply_table_changes(base, None) is base
    assert [s.description for s in base.steps] == ["first", "second", "third"]  # untouched


def test_deleting_s1_of_the_customer_service_plan_leaves_a_valid_plan():
    from core.tools.toolsets import default_registry
    from demo.offline.planner import offline_plan
    from demo.scenarios import get_scenario

    registry = default_registry()
    plan = offline_plan(get_scenario("shop-refund").request_en, registry)
    assert worded(plan.validate(registry)) == []
    smaller, notes = delete_step(plan, "s1")
    assert smaller.ids() == ["s2", "s3", "s4"] and notes == []
    assert smaller.step("s4").depends_on == ["s2", "s3"]
    assert worded(smaller.validate(registry)) == []


def test_dependents_inherit_the_dependencies_of_a_deleted_chain():
    plan = Plan(goal="g", steps=[
        Step(id="s1", description="a"), Step(id="s2", description="b", depends_on=["s1"]),
        Step(id="s3", description="c", depends_on=["s2"]),
        Step(id="s4", description="d", depends_on=["s3", "s1"])])
    smaller, notes = delete_step(plan, "s2", "s3")
    assert smaller.ids() == ["s1", "s4"] and smaller.step("s4").depends_on == ["s1"]
    assert notes == []  # s4 already depended on s1: nothing new to say
    middle, notes = delete_step(plan, "s2")
    assert middle.step("s3").depends_on == ["s1"]
    assert worded(notes) == ["s3 now depends on s1 (what the deleted step depended on), so the "
                     "order is kept"]


def test_arguments_reading_a_deleted_step_are_removed_with_a_note():
    plan = Plan(goal="g", steps=[
        Step(id="s1", description="order", tool="query_order", args={"order_id": "1"}),
        Step(id="s2", description="track", tool="query_logistics", depends_on=["s1"],
             args={"tracking_no": "{{s1.tracking_no}}", "note": ["x", "{{ s1 }}"],
                   "carrier": "sf"}),
        Step(id="s3", description="only refs", tool="calculate", depends_on=["s1"],
             args={"expression": "{{s1.total}} * 2"})])
    smaller, notes = delete_step(plan, "s1")
    assert smaller.step("s2").args == {"carrier": "sf"}
    assert smaller.step("s3").args is None  # nothing left: the model infers every argument
    assert worded(notes, "zh")[0].startswith(
        "s2 的参数 tracking_no, note 引用了被删除的步骤")
    assert not any("refers to" in p for p in worded(smaller.validate()))


def test_a_condition_reading_a_deleted_step_is_kept_and_still_blocks_approval():
    plan = _plan()
    smaller, notes = delete_step(plan, "s1")
    assert smaller.step("s2").condition == "s1.status == 'delivered'"
    assert worded(notes) == ["s2 condition reads the deleted s1: rewrite or clear it (it is "
                             "kept so that the step does not run unconditionally)"]
    assert any(p.startswith("s2 condition reads s1") for p in worded(smaller.validate()))


def test_undo_history_is_bounded_and_skips_an_unchanged_plan():
    plan = _plan()
    history = remember([], plan)
    assert remember(history, plan.model_copy(deep=True)) == history
    moved = move_step(plan, "s2", -1)
    assert remember(history, moved)[-1] is moved and len(history) == 1  # a new list
    for n in range(UNDO_LIMIT + 5):
        history = remember(history, add_step(plan, f"step {n}"))
    assert len(history) == UNDO_LIMIT
    assert history[-1].steps[-1].description == f"step {UNDO_LIMIT + 4}"

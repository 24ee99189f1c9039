"""AppTest of the Plan page's step panel: a picked step as a form whose edits reach the plan.

AppTest cannot click the graph (a custom component) or type into the table, so a step is
picked with the table's step picker (``step_pick``, the key a click in the graph sets too)
and the panel's widgets are filled by key.
"""

from __future__ import annotations

import json

from tests.support.app import generated_plan, keyed_block, plan_dot
from tests.support.shown import shown


def _panel_notes(at) -> str:
    """The captions under the step panel's fields (problems are the red ones)."""
    return shown("\n".join(c.value for c in at.main.caption))


def _pick(at, step_id: str):
    at.selectbox(key="step_pick").set_value(step_id).run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def test_the_table_puts_id_description_tool_and_dependencies_first(runner):
    at = generated_plan()
    assert list(at.dataframe[0].proto.column_order)[:4] == [
        "id", "description", "tool", "depends_on"]


def test_the_step_panel_shows_the_picked_step_as_a_form(runner):
    at = _pick(generated_plan(), "s3")
    assert at.subheader[1].value == "Step s3"
    assert at.text_area(key="step_description").value.startswith("If order 88231 was delivered")
    assert at.selectbox(key="step_tool").value == "apply_refund"
    assert at.multiselect(key="step_depends").value == ["s2"]
    assert at.multiselect(key="step_depends").options == ["s1", "s2", "s4"]
    order = at.text_input(key="step_arg_order_id")
    assert order.value == "88231" and order.label == "`order_id` · required"
    assert "the order number to refund" in order.help
    assert "{{s2.order_id}}" in order.help  # the references it may take instead
    reason = at.text_input(key="step_arg_reason")
    assert reason.label == "`reason` · optional"
    assert reason.placeholder == 'default: "customer request"'
    assert at.selectbox(key="step_ref_order_id").options[1:] == [
        "{{s2.order_id}}", "{{s2.status}}", "{{s2}}"]
    assert at.text_input(key="step_condition").value == "s2.status == 'delivered'"
    assert "Checked on the results of s2." in _panel_notes(at)
    at.switch_page("pages/tools.py").run()
    at.switch_page("pages/plan.py").run()  # back from another page: the form is filled again
    assert at.text_input(key="step_arg_order_id").value == "88231"
    assert at.multiselect(key="step_depends").value == ["s2"]
    _pick(at, "s1")  # another step: every field follows
    assert at.selectbox(key="step_tool").value == "search_knowledge"
    assert at.number_input(key="step_arg_top_k").value is None
    assert at.number_input(key="step_arg_top_k").placeholder == "default: 3"
    assert at.multiselect(key="step_depends").value == []


def test_an_argument_edited_in_the_panel_changes_the_plan_and_the_table(runner):
    at = _pick(generated_plan(), "s2")
    revision = at.session_state["plan_revision"]
    at.text_input(key="step_arg_order_id").input("70412").run()
    assert not at.exception
    assert at.session_state["plan"].step("s2").args == {"order_id": "70412"}
    assert at.session_state["plan_revision"] > revision  # the table was rebuilt from it
    assert json.loads(at.dataframe[0].value["args"][1]) == {"order_id": "70412"}
    assert at.text_input(key="step_arg_order_id").value == "70412"
    at.button(key="undo_edit").click().run()  # Undo takes the argument back
    assert at.session_state["plan"].step("s2").args == {"order_id": "88231"}
    assert at.text_input(key="step_arg_order_id").value == "88231"


def test_description_dependencies_condition_and_criteria_are_edited_in_the_panel(runner):
    at = _pick(generated_plan(), "s3")
    at.text_area(key="step_description").input("Refund if it arrived").run()
    assert "Refund if it arrived" in plan_dot(at)
    assert at.dataframe[0].value["description"][2] == "Refund if it arrived"
    at.multiselect(key="step_depends").set_value(["s1", "s2"]).run()
    assert at.session_state["plan"].step("s3").depends_on == ["s1", "s2"]
    assert '"s1" -> "s3"' in plan_dot(at)
    at.text_input(key="step_condition").input("if the customer is unhappy").run()
    assert at.session_state["plan"].step("s3").condition == "if the customer is unhappy"
    assert "Written in prose: the model judges it at run time" in _panel_notes(at)
    at.text_input(key="step_success").input("result.refund_id != ''").run()
    step = at.session_state["plan"].step("s3")
    assert step.success_criteria == "result.refund_id != ''"
    at.text_input(key="step_condition").input("").run()
    assert at.session_state["plan"].step("s3").condition is None
    assert "◇" not in plan_dot(at).split('"s3"')[1].split("]")[0]  # no longer conditional


def test_condition_and_criteria_are_checked_live_under_their_fields(runner):
    at = _pick(generated_plan(), "s3")
    at.text_input(key="step_condition").input("s1.status == 'delivered'").run()
    assert ("s3 condition reads s1 but does not depend on it; add s1 to depends_on"
            in _panel_notes(at))
    at.text_input(key="step_condition").input("s2.status ==").run()
    assert "s3 condition does not parse" in _panel_notes(at)
    assert at.button(key="approve_run").disabled  # the plan's own problem list agrees
    at.text_input(key="step_success").input("result.count >").run()
    assert "the success criteria read like an expression but do not parse" in _panel_notes(at)


def test_a_condition_committed_as_it_is_typed_is_one_undo_step_and_keeps_the_typing(runner):
    """The condition commits at each pause in typing (in the browser): those commits are one
    undo step, and the field keeps what was typed (a space the plan strips included)."""
    at = _pick(generated_plan(), "s3")
    for typed in ("s9.status == 'x'", "s2.status != ", "s2.status != 'cancelled' "):
        at.text_input(key="step_condition").input(typed).run()
        assert not at.exception
    assert at.session_state["plan"].step("s3").condition == "s2.status != 'cancelled'"
    assert at.text_input(key="step_condition").value == "s2.status != 'cancelled' "
    at.text_area(key="step_description").input("Refund it if it arrived").run()
    at.button(key="undo_edit").click().run()  # the description: an edit of its own
    assert at.session_state["plan"].step("s3").condition == "s2.status != 'cancelled'"
    at.button(key="undo_edit").click().run()  # the typing, whole
    assert at.session_state["plan"].step("s3").condition == "s2.status == 'delivered'"
    assert at.text_input(key="step_condition").value == "s2.status == 'delivered'"


def _under(at, key: str) -> list[str]:
    """The captions the step panel draws under the field keyed ``key``, up to the next field."""
    form = keyed_block(at, "step_panel")
    assert form is not None
    notes: list[str] = []
    found = False
    for element in form.children.values():
        name = getattr(element, "key", None) or ""
        if found and name.startswith("step_") and not name.startswith("step_ref_"):
            break
        found = found or name == key
        if found and element.type == "caption":
            notes.append(shown(element.value))
    assert found, key
    return notes


def test_an_empty_required_argument_is_said_under_its_field(runner):
    at = _pick(generated_plan(), "s3")  # offline: nothing fills the argument in at run time
    at.text_input(key="step_arg_order_id").input("").run()
    assert "order_id" not in (at.session_state["plan"].step("s3").args or {})
    missing = ("s3 needs arguments for apply_refund (missing: order_id) and no LLM is "
               "configured to fill them in; write them into the step's args")
    assert any(missing in note for note in _under(at, "step_arg_order_id"))
    assert not any(missing in note for note in _under(at, "step_arg_reason"))
    assert at.button(key="approve_run").disabled  # the plan's list says it too


def test_a_reference_is_offered_from_the_dependencies_and_checked(runner):
    at = _pick(generated_plan(), "s3")
    at.selectbox(key="step_ref_order_id").set_value("{{s2.order_id}}").run()
    assert at.session_state["plan"].step("s3").args["order_id"] == "{{s2.order_id}}"
    assert at.text_input(key="step_arg_order_id").value == "{{s2.order_id}}"
    at.multiselect(key="step_depends").set_value([]).run()  # the reference now dangles
    assert ("s3 refers to {{s2...}} but does not depend on s2; add s2 to depends_on"
            in _panel_notes(at))
    at.multiselect(key="step_depends").set_value(["s2"]).run()
    at.selectbox(key="step_ref_order_id").set_value("").run()  # back to a typed value
    assert "order_id" not in at.session_state["plan"].step("s3").args
    at.text_input(key="step_arg_order_id").input("88231").run()
    assert at.session_state["plan"].step("s3").args["order_id"] == "88231"


def test_typed_fields_read_back_as_their_types(runner):
    at = _pick(generated_plan(), "s1")
    at.number_input(key="step_arg_top_k").set_value(5).run()
    assert at.session_state["plan"].step("s1").args["top_k"] == 5
    at.selectbox(key="step_tool").set_value("check_health").run()
    at.text_input(key="step_arg_service").input('["order-service", "pay-service"]').run()
    assert at.session_state["plan"].step("s1").args == {
        "service": ["order-service", "pay-service"]}
    at.text_input(key="step_arg_service").input("all").run()
    assert at.session_state["plan"].step("s1").args == {"service": "all"}


def test_a_new_tool_gets_its_own_form_and_drops_what_it_does_not_take(runner):
    at = _pick(generated_plan(), "s3")
    at.selectbox(key="step_tool").set_value("query_order").run()
    step = at.session_state["plan"].step("s3")
    assert step.tool == "query_order" and step.args == {"order_id": "88231"}
    assert any("s3 now uses query_order: removed the argument(s) reason" in shown(i.value)
               for i in at.info)
    assert [w.key for w in at.main.text_input if w.key.startswith("step_arg_")] == [
        "step_arg_order_id"]
    assert at.dataframe[0].value["tool"][2] == "query_order"
    at.selectbox(key="step_tool").set_value("none").run()
    assert at.session_state["plan"].step("s3").tool is None
    assert "A reasoning step has no arguments." in _panel_notes(at)


def test_an_added_step_opens_in_the_panel_and_table_edits_reach_it(runner):
    at = _pick(generated_plan(), "s2")
    at.button(key="step_add").click().run()
    assert at.subheader[1].value == "Step s5"
    assert at.text_area(key="step_description").value == ""
    edited = at.session_state["plan"].model_copy(deep=True)
    edited.step("s5").description = "Check the parcel"  # as the table's merge would
    at.session_state["plan"] = edited
    at.run()
    assert at.text_area(key="step_description").value == "Check the parcel"


def test_the_step_panel_speaks_chinese(runner):
    at = _pick(generated_plan(language="zh"), "s3")
    assert at.subheader[1].value == "步骤 s3"
    assert at.text_area(key="step_description").label == "描述"
    assert at.selectbox(key="step_ref_order_id").placeholder == "或引用某个结果…"
    assert "根据 s2 的结果判断。" in _panel_notes(at)


def test_an_mcp_step_shows_its_server_and_a_form_from_the_servers_schema(runner, tmp_path,
                                                                         monkeypatch):
    from core.plan.model import Plan, Step
    from core.tools.mcp.pool import shutdown_pool
    from tests.support.app import open_app
    from tests.support.mcp import reference_server, write_config

    config = write_config(tmp_path / "mcp.json", {"time": reference_server("mcp_server_time")})
    monkeypatch.setenv("PLANBOARD_MCP_CONFIG", str(config))
    plan = Plan(goal="What time is it in London?", steps=[
        Step(id="s1", description="Ask the clock", tool="time__convert_time",
             args={"source_timezone": "Europe/London", "time": "12:00"}),
        Step(id="s2", description="Answer", tool=None, depends_on=["s1"])])
    try:
        at = _pick(open_app(plan=plan), "s1")
        assert at.selectbox(key="step_tool").value == "time__convert_time"
        assert "From MCP server time" in _panel_notes(at)
        source = at.text_input(key="step_arg_source_timezone")
        assert source.value == "Europe/London" and source.label == (
            "`source_timezone` · required")
        assert "IANA timezone name" in source.help  # the server's own description
        target = at.text_input(key="step_arg_target_timezone")
        assert target.value == "" and target.label == "`target_timezone` · required"
        target.input("Asia/Tokyo").run()
        assert at.session_state["plan"].step("s1").args["target_timezone"] == "Asia/Tokyo"
    finally:
        shutdown_pool()

"""Packs: what a toolset offers beyond its tools, found through the registry."""

from __future__ import annotations

import pytest

from core.base.messages import render
from core.cli.main import main
from core.errors import UnservableRequestError
from core.llm.engine import Engine
from core.planning.packs import Pack, Reading, data_resets, packs, reading, scenarios
from core.planning.router import route_offline
from core.runs.session import draft_plan
from core.tools.registry import ToolRegistry, tool
from core.tools.tool_texts import tool_description, tool_parameters, translated
from core.tools.toolsets import default_registry
from demo.pack import DEMO_PACK


@tool(read_only=True, keywords=("ticket", "工单"))
def lookup_ticket(ticket_id: str) -> dict:
    """Look up a support ticket.

    Args:
        ticket_id: the ticket's number.
    """
    return {"ticket_id": ticket_id}


def test_the_demo_registers_its_pack_beside_its_tools():
    registry = default_registry({})
    assert packs(registry) == [DEMO_PACK]
    assert [s.id for s in scenarios(registry)][:1] == ["shop-refund"]
    assert data_resets(registry) == [DEMO_PACK.reset]
    assert packs(default_registry({"PLANBOARD_TOOLSETS": "builtin"})) == []


def test_the_registry_keeps_packs_as_opaque_objects_and_each_once():
    registry = ToolRegistry()
    registry.add_pack("not a pack")
    registry.add_pack(DEMO_PACK)
    registry.add_pack(DEMO_PACK)
    assert registry.packs() == ["not a pack", DEMO_PACK]
    assert packs(registry) == [DEMO_PACK]


def test_readings_of_several_packs_are_joined():
    first = Pack(name="a", read=lambda text: Reading(things={"order": ("1",)}, topics={"x"}))
    second = Pack(name="b", read=lambda text: Reading(things={"order": ("2",), "ticket": ("7",)},
                                                      topics=frozenset({"y"})))
    registry = ToolRegistry()
    for pack in (first, second, Pack(name="c")):
        registry.add_pack(pack)
    found = reading("anything", registry)
    assert found.things == {"order": ("1", "2"), "ticket": ("7",)}
    assert found.topics == {"x", "y"}


def test_any_toolset_may_describe_its_tools_in_chinese_and_others_show_their_own_text():
    given = translated(lookup_ticket, {"zh": ("查询工单。", {"ticket_id": "工单号。"})})
    assert tool_description(given, "zh") == "查询工单。"
    assert tool_parameters(given, "zh")["properties"]["ticket_id"]["description"] == "工单号。"
    assert tool_parameters(given, "en") == lookup_ticket.parameters  # the models' text
    assert tool_description(lookup_ticket, "zh") == "Look up a support ticket."
    builtin = default_registry({"PLANBOARD_TOOLSETS": "builtin"}).get("calculate")
    assert tool_description(builtin, "zh").startswith("安全地计算")


def test_without_a_pack_offering_them_reset_and_scenarios_say_so_in_one_line(capsys,
                                                                         monkeypatch):
    monkeypatch.setenv("PLANBOARD_TOOLSETS", "builtin")
    assert main(["demo", "reset"]) == 0
    assert capsys.readouterr().out.strip().splitlines() == [
        "No toolset in PLANBOARD_TOOLSETS offers a data reset; nothing was reset."]
    assert main(["scenarios"]) == 0
    assert capsys.readouterr().out.strip() == (
        "No toolset in PLANBOARD_TOOLSETS offers scenarios.")


def test_demo_reset_runs_the_packs_reset(capsys):
    assert main(["demo", "reset"]) == 0
    assert capsys.readouterr().out.startswith("Demo data recreated in ")


# ---- without the demo pack ------------------------------------------------------------------


def test_offline_planning_without_a_drafting_pack_is_one_clear_error(monkeypatch, capsys):
    monkeypatch.setenv("PLANBOARD_TOOLSETS", "builtin")
    engine = Engine(default_registry())
    with pytest.raises(UnservableRequestError) as caught:
        draft_plan("What is 17 * 23?", engine)
    assert caught.value.message is not None
    assert caught.value.message.code == "offline.no_planner"
    english = str(caught.value)
    assert "only for the demo tools" in english and "set a model" in english
    assert "add demo to PLANBOARD_TOOLSETS" in english
    assert "演示工具" in render(caught.value, "zh") and "PLANBOARD_TOOLSETS" in render(
        caught.value, "zh")
    code = main(["run", "--offline", "--yes", "What is 17 * 23?"])
    err = capsys.readouterr().err
    assert code == 1 and err.strip().count("\n") == 0 and "only for the demo tools" in err


def test_without_a_pack_the_generic_router_reads_the_tools_themselves():
    registry = ToolRegistry()
    registry.add(lookup_ticket)
    looked_up = route_offline("look up ticket 4711", registry)
    assert (looked_up.mode, looked_up.code, looked_up.params) == (
        "direct", "lookup", {"names": "lookup_ticket"})
    assert route_offline("if ticket 4711 is open, look it up", registry).code == "condition"
    assert route_offline("look up ticket 4711. Then summarise it", registry).code == "several"
    assert route_offline("what is a support ticket?", registry).mode != "knowledge"

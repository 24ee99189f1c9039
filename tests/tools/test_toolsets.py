"""PLANBOARD_TOOLSETS: builtin, the demo pack, a person's modules; failures named, not fatal."""

from __future__ import annotations

from core.base.messages import render
from core.tools.toolsets import default_registry, toolset_names
from tests.toolsets import greetings


def test_the_default_is_builtin_and_the_demo_pack():
    registry = default_registry({})
    assert toolset_names({}) == ["builtin", "demo"]
    assert {"calculate", "get_current_time", "query_order", "run_sql"} <= set(registry.names())
    assert registry.get("calculate").source == "builtin"
    assert registry.get("query_order").source == "demo"
    assert registry.problems == []


def test_builtin_alone_has_no_demo_tool():
    registry = default_registry({"PLANBOARD_TOOLSETS": "builtin"})
    assert registry.names() == ["calculate", "get_current_time"]


def test_a_module_of_tool_functions_is_a_toolset_whose_tools_say_if_they_only_read():
    registry = default_registry({"PLANBOARD_TOOLSETS": "builtin, tests.toolsets.greetings"})
    assert registry.get("greet").source == "tests.toolsets.greetings"
    assert not registry.get("greet").side_effect
    assert registry.get("send_card").side_effect  # not declared read-only: a side effect
    assert registry.call("greet", {"name": "Ada"}) == {"greeting": "Hello, Ada!"}
    greetings.CALLS.clear()


def test_a_toolset_that_fails_or_does_not_exist_is_named_and_the_others_load():
    registry = default_registry(
        {"PLANBOARD_TOOLSETS": "builtin,tests.toolsets.broken,no_such_toolset_module"})
    assert registry.names() == ["calculate", "get_current_time"]
    lines = [render(problem, "en") for problem in registry.problems]
    assert len(lines) == 2 and all("\n" not in line for line in lines)
    assert "tests.toolsets.broken" in lines[0] and "the weather service is down" in lines[0]
    assert "no_such_toolset_module" in lines[1] and "PLANBOARD_TOOLSETS" in lines[1]
    assert "工具集" in render(registry.problems[1], "zh")


def test_a_module_with_no_tools_is_a_problem_not_an_empty_toolset():
    registry = default_registry({"PLANBOARD_TOOLSETS": "builtin,json"})
    assert "json" in render(registry.problems[0], "en")
    assert "@tool" in render(registry.problems[0], "en")


def test_an_installed_package_offers_a_toolset_through_its_entry_point(tmp_path, monkeypatch):
    info = tmp_path / "planboard_greetings-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: planboard-greetings\n"
                                   "Version: 1.0\n")
    (info / "entry_points.txt").write_text(
        "[planboard.toolsets]\ngreetings = tests.toolsets.greetings\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    registry = default_registry({"PLANBOARD_TOOLSETS": "greetings"})
    assert registry.names() == ["greet", "send_card"]
    assert registry.get("greet").source == "greetings"

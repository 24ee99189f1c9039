"""The suite's own schedule: modules run longest first, and a run rewrites their seconds."""

from __future__ import annotations

import json
from types import SimpleNamespace

from tests.support import module_order


def _items(*nodeids: str) -> list:
    return [SimpleNamespace(nodeid=nodeid) for nodeid in nodeids]


def test_modules_run_longest_first_unmeasured_ones_before_them_each_in_its_own_order(
        tmp_path, monkeypatch):
    seconds = tmp_path / "module_seconds.json"
    seconds.write_text(json.dumps({"tests/test_short.py": 1.0, "tests/test_long.py": 50.0}))
    monkeypatch.setattr(module_order, "SECONDS_FILE", seconds)
    items = _items("tests/test_short.py::a", "tests/test_short.py::b", "tests/test_long.py::a",
                   "tests/test_new.py::a", "tests/test_long.py::b[x]", "tests/test_new.py::b")
    module_order.pytest_collection_modifyitems(items)
    assert [item.nodeid for item in items] == [
        "tests/test_new.py::a", "tests/test_new.py::b",
        "tests/test_long.py::a", "tests/test_long.py::b[x]",
        "tests/test_short.py::a", "tests/test_short.py::b"]


def test_a_recorded_run_updates_the_modules_it_ran_keeps_the_others_and_drops_removed_ones(
        tmp_path, monkeypatch):
    seconds = tmp_path / "module_seconds.json"
    seconds.write_text(json.dumps({"tests/test_module_order.py": 9.0,
                                   "tests/conftest.py": 2.0,
                                   "tests/test_removed_long_ago.py": 30.0}))
    monkeypatch.setattr(module_order, "SECONDS_FILE", seconds)
    recorder = module_order._Recorder()
    for when, duration in [("setup", 0.25), ("call", 1.5), ("teardown", 0.04)]:
        recorder.pytest_runtest_logreport(SimpleNamespace(
            nodeid="tests/test_module_order.py::test_x", when=when, duration=duration))
    recorder.pytest_sessionfinish()
    assert json.loads(seconds.read_text()) == {"tests/conftest.py": 2.0,
                                               "tests/test_module_order.py": 1.8}

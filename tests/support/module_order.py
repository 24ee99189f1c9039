"""The order in which test modules run: the longest first.

scripts/test.sh hands whole modules to pytest-xdist's workers (``--dist loadfile``) in
collection order. A long module handed out last keeps one worker busy while the others
idle, so the modules are collected longest first (the classic longest-processing-time
rule), and the short ones fill the gaps at the end. A module's length is its tests' setup,
call and teardown seconds measured on a whole run, kept in tests/module_seconds.json; a
module not measured yet runs first, since it may be long. ``pytest
--record-module-seconds`` (with or without ``-n``) rewrites the file from the modules that
ran, and drops the modules that no longer exist.
"""

from __future__ import annotations

import json
from collections import defaultdict

import pytest

from tests.support import REPO

SECONDS_FILE = REPO / "tests" / "module_seconds.json"


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--record-module-seconds", action="store_true",
                     help=f"write each module's measured seconds to {SECONDS_FILE.name}")


def _measured() -> dict[str, float]:
    return json.loads(SECONDS_FILE.read_text()) if SECONDS_FILE.exists() else {}


def _module(nodeid: str) -> str:
    return nodeid.split("::", 1)[0]


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    seconds = _measured()
    unmeasured = float("inf")
    # a stable sort: a module's tests stay together and in their own order
    items.sort(key=lambda item: -seconds.get(_module(item.nodeid), unmeasured))


class _Recorder:
    def __init__(self) -> None:
        self.seconds: dict[str, float] = defaultdict(float)

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        self.seconds[_module(report.nodeid)] += report.duration

    def pytest_sessionfinish(self) -> None:
        kept = {module: seconds for module, seconds in _measured().items()
                if (REPO / module).exists()}
        kept.update({module: round(seconds, 1) for module, seconds in self.seconds.items()})
        SECONDS_FILE.write_text(json.dumps(dict(sorted(kept.items())), indent=1) + "\n")


def pytest_configure(config: pytest.Config) -> None:
    # on the controller only: under xdist it receives every worker's reports
    if config.getoption("record_module_seconds") and not hasattr(config, "workerinput"):
        config.pluginmanager.register(_Recorder(), "module-seconds-recorder")

"""Fixtures for every test: its own PLANBOARD_HOME and a clean environment, and one fixture
per concept: the fake OpenAI server, the demo tool registry, a run store on the test's home,
a runner over it, the app's runner, and the parcel tools that count their calls.

A folder's conftest.py holds the fixtures of its concept (tests/ui/conftest.py: the runner
a page uses); helpers that are not fixtures live in tests/support/.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, Phase, settings
from hypothesis.database import DirectoryBasedExampleDatabase
from hypothesis.internal.detection import is_hypothesis_test

from core.runs import durable
from core.runs.runner import Runner
from core.store.run_store import RunStore
from core.tools.registry import ToolRegistry
from core.tools.toolsets import default_registry
from tests.support.fake_openai import FakeOpenAI
from tests.support.leftovers import kill_with_descendants, live_children

# tests.support.pg: a throwaway PostgreSQL (postgres_url, db_url, on_both_backends);
# tests.support.durable_runs: DBOS in the test's home (launched);
# tests.support.module_order: the longest modules first (xdist's workers end together)
pytest_plugins = ["tests.support.pg", "tests.support.durable_runs", "tests.support.module_order"]

# OTEL_: no test sends traces to the developer's collector (tests/base/test_tracing.py starts
# its own receiver)
_ISOLATED_PREFIXES = ("OPENAI_", "PLANBOARD_", "DASHSCOPE_", "DEEPSEEK_", "OTEL_")

# Property tests are deterministic and leave no files: the same examples on every run, no
# example database, and no "explain" phase (it imports libraries that warn). A failure
# found by exploring (`pytest --hypothesis-profile=explore`, random examples kept in
# .hypothesis/) is added to its test as an explicit @example, so CI replays it for good.
settings.register_profile(
    "planboard", derandomize=True, database=None, deadline=None, print_blob=False,
    phases=[Phase.explicit, Phase.generate, Phase.shrink],
    suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("explore", settings.get_profile("planboard"), derandomize=False,
                          database=DirectoryBasedExampleDatabase(".hypothesis/examples"),
                          print_blob=True)
settings.load_profile("planboard")


def isolate(monkeypatch: pytest.MonkeyPatch, folder: Path) -> Path:
    """The environment of a test (or a module's shared server): none of the developer's keys
    or data, and a fresh home directory in ``folder``, which becomes the working directory."""
    for name in list(os.environ):
        if name.startswith(_ISOLATED_PREFIXES):
            monkeypatch.delenv(name, raising=False)
    for name in ("LC_ALL", "LANGUAGE"):  # the CLI speaks the locale's language
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("LANG", "C.UTF-8")
    # relative periods ("last quarter") read today's date: the demo data's last day, so that
    # no result depends on the day the tests run (a test of periods sets its own)
    monkeypatch.setenv("PLANBOARD_TODAY", "2026-06-24")
    home = folder / "planboard-home"
    monkeypatch.setenv("PLANBOARD_HOME", str(home))
    monkeypatch.chdir(folder)
    return home


@pytest.fixture(autouse=True)
def isolated_environment(tmp_path, monkeypatch):
    """No test sees the developer's keys or data; each one has a fresh home directory."""
    return isolate(monkeypatch, tmp_path)


@pytest.fixture(scope="module")
def module_home(tmp_path_factory) -> Iterator[Path]:
    """A home shared by a module's tests, in an isolated environment while the module sets up
    what it shares (a served app started in it inherits that environment)."""
    with pytest.MonkeyPatch.context() as monkeypatch:
        yield isolate(monkeypatch, tmp_path_factory.mktemp("module"))


@pytest.fixture(autouse=True)
def main_module_restored() -> Iterator[None]:
    """``__main__`` is pytest's again after each test.

    Streamlit's script runner (AppTest, in this process) installs the page it ran as
    ``__main__`` and leaves it there. A process that a later test of the same worker starts
    with multiprocessing's "spawn" runs ``__main__``'s file first: each child drew the whole
    dashboard, and on a PostgreSQL database without the engine's tables it died before its
    target, so the test waited for results that never came.
    """
    main = sys.modules["__main__"]
    yield
    sys.modules["__main__"] = main


@pytest.fixture(scope="module", autouse=True)
def no_process_outlives_its_module() -> Iterator[None]:
    """A process a module's tests started and left running (a test timed out before it
    stopped its worker or Chromium) is killed when the module ends, after the module's own
    fixtures stopped theirs: it would load the machine under every later test."""
    before = live_children()
    yield
    for pid in live_children() - before:
        kill_with_descendants(pid)


@pytest.fixture(autouse=True)
def no_engine_under_hypothesis(request: pytest.FixtureRequest) -> None:
    """A property test runs without DBOS: its queue threads draw from the global ``random``
    (polling jitter), which Hypothesis takes for a strategy using it (a flaky failure)."""
    if is_hypothesis_test(request.node.function):
        durable.shutdown()


@pytest.fixture
def fake_openai() -> Iterator[FakeOpenAI]:
    """A running FakeOpenAI (tests/support/fake_openai.py) for one test; stopped afterwards."""
    server = FakeOpenAI().start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def registry() -> ToolRegistry:
    """The demo tools, configured from no environment."""
    return default_registry({})


@pytest.fixture
def store() -> Iterator[RunStore]:
    """The run store under this test's PLANBOARD_HOME; closed afterwards."""
    made = RunStore()
    yield made
    made.close()


@pytest.fixture
def runner(store: RunStore) -> Iterator[Runner]:
    """A runner over ``store`` that polls quickly; shut down afterwards."""
    made = Runner(store, poll_s=0.05)
    yield made
    made.shutdown()


@pytest.fixture
def app_runner() -> Iterator[Runner]:
    """The app's runner (its cached resource) on this test's home, closed afterwards."""
    from tests.support.app import fresh_runner  # streamlit: imported by the tests that use it

    yield from fresh_runner()


@pytest.fixture
def parcel_tools(tmp_path, monkeypatch) -> None:
    """The parcel tools (tests/toolsets/parcels.py) beside the built-in ones, counting their
    calls in this test's file (tests.toolsets.counted.calls())."""
    from tests.toolsets import counted

    monkeypatch.setenv("PLANBOARD_TOOLSETS", "builtin,tests.toolsets.parcels")
    monkeypatch.setenv(counted.CALLS_ENV, str(tmp_path / "calls.txt"))


@pytest.fixture(scope="module")
def mcp_pool_of_the_module() -> Iterator[None]:
    """The MCP servers a module's tests started are stopped when the module ends."""
    yield
    from core.tools.mcp.pool import shutdown_pool

    shutdown_pool()

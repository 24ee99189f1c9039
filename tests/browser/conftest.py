"""The browser tests' fixtures: one chromium per module (and one context of it, for the tests
of a module's one served app), one served app per module on the module's home, and per test
a page of its own on it.

While Playwright's sync API is open it keeps an event loop running in the main thread, where
DBOS then refuses to register its queues: a test that runs PlanBoard in this process asks for
``browser`` only after that (tests/browser/test_browser_safety.py).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.browser import VIEWPORT, launch_chromium, open_tab, serve_app


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """Chromium, launched once per module (each test gets a fresh context)."""
    with launch_chromium() as launched:
        yield launched


@pytest.fixture(scope="module")
def tabs(browser: Any) -> Iterator[Any]:
    """One context of the module's chromium, for a module's tests of one served app: their
    pages are tabs of it, which share its cache of the app's scripts."""
    context = browser.new_context(viewport=VIEWPORT)
    yield context
    context.close()


@pytest.fixture(scope="module")
def served_app(module_home: Path, request: pytest.FixtureRequest) -> Iterator[str]:
    """PlanBoard served for the module on its home (offline: no key); its address. Each
    test's page is a browser session of its own (a fresh context), so tests share only
    the stored runs, and each opens its own: one server per module, not per test. A
    module's ``served_environment(module_home)`` gives the server more variables."""
    more = getattr(request.module, "served_environment", None)
    with serve_app(module_home, module_home.parent / "streamlit.log",
                   environment=more(module_home) if more else None) as url:
        yield url


@pytest.fixture
def page(browser: Any, served_app: str) -> Iterator[Any]:
    """A page (1280x720) of its own on the served app."""
    with open_tab(browser, served_app) as tab:
        yield tab

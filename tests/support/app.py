"""The app under AppTest: open it on a page, rerun until a state shows, find keyed blocks,
and the app's own runner on the test's home."""

from __future__ import annotations

import tomllib
from collections.abc import Callable, Iterator
from functools import cache

import streamlit as st
from streamlit.testing.v1 import AppTest
from streamlit.testing.v1.element_tree import Block

from core.runs.runner import Runner
from tests.support import REPO
from tests.support.fake_openai import DEFAULT_KEY, FakeOpenAI
from tests.support.shown import graph_dots
from tests.support.waiting import DEFAULT_TIMEOUT_S, wait_until
from ui import state

__all__ = ["block_text", "drafted", "fresh_runner", "generated_plan", "go_online",
           "keyed_block", "open_app", "plan_dot", "wait_for"]


@cache
def _apply_app_settings() -> None:
    """The app's .streamlit/config.toml, as ``streamlit run`` in the repository reads it:
    each test runs in a folder of its own, where Streamlit would find none (and would then,
    for one, parse every page for "magic")."""
    from streamlit import config

    path = REPO / ".streamlit" / "config.toml"
    for section, options in tomllib.loads(path.read_text(encoding="utf-8")).items():
        for name, value in options.items():
            config.set_option(f"{section}.{name}", value, where_defined=str(path))


def open_app(
    page: str | None = None, *, query: dict[str, str] | None = None, **preset: object
) -> AppTest:
    """The app started from dashboard.py on ``page`` with ``query`` params and ``preset`` state."""
    _apply_app_settings()
    at = AppTest.from_file(str(REPO / "dashboard.py"), default_timeout=DEFAULT_TIMEOUT_S)
    for key, value in preset.items():
        at.session_state[key] = value
    if page is not None:
        at.switch_page(page)
    at.query_params.update(query or {})
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def wait_for(at: AppTest, predicate: Callable[[AppTest], object],
             timeout: float = DEFAULT_TIMEOUT_S, *, what: str = "the expected state") -> AppTest:
    """Rerun (the fragment does not tick in AppTest) until ``predicate(at)`` holds."""

    def rerun_and_check() -> bool:
        at.run()
        assert not at.exception, [e.value for e in at.exception]
        return bool(predicate(at))

    wait_until(rerun_and_check, timeout, what=f"the app showing {what}", poll_s=0.1)
    return at


def drafted(at: AppTest) -> AppTest:
    """Rerun until the planner model's plan, drafted in the background, is on the page."""
    return wait_for(at, lambda shown: "plan_drafting" not in shown.session_state,
                    what="the drafted plan")


def keyed_block(at: AppTest, key: str) -> Block | None:
    """The container drawn with ``key=key`` (``st.container(key=...)``), if it is on screen."""
    stack: list[object] = [at.main, at.sidebar]
    while stack:
        node = stack.pop()
        if isinstance(node, Block):
            if str(getattr(node.proto, "id", "") or "").endswith(f"-{key}"):
                return node
            stack.extend(node.children.values())
    return None


def block_text(block: Block | None) -> str:
    """All markdown and captions inside ``block``."""
    assert block is not None, "the container is not on screen"
    return "\n".join([m.value for m in block.markdown] + [c.value for c in block.caption])


def fresh_runner() -> Iterator[Runner]:
    """The app's runner (its cached resource) on this test's PLANBOARD_HOME, closed after."""
    st.cache_resource.clear()  # closes the runner of an earlier test
    yield state.runner()
    st.cache_resource.clear()


def generated_plan(language: str = "en", **state: object):
    at = open_app(language=language, **state)
    at.button(key="scenario_shop-refund").click().run()
    at.button(key="generate_plan").click().run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def plan_dot(at) -> str:
    """The DOT the plan graph was given (AppTest cannot draw the component itself)."""
    [dot] = graph_dots(at)
    return dot


def go_online(at: AppTest, server: FakeOpenAI) -> None:
    """Point the sidebar at ``server`` with its key, and turn offline mode off."""
    at.text_input(key="base_url").input(server.base_url).run()
    at.text_input(key="api_key").input(DEFAULT_KEY).run()
    at.toggle(key="offline_mode").set_value(False).run()

"""Streamed planning: when the first step of a plan is known, against the whole planning time.

The planner's reply is streamed from the fake endpoint at a steady pace (a few characters
every few milliseconds, as a model writes tokens); the time to the first step is when the
planner's step listener first hears a step, the planning time when the checked plan is
back. The same reply asked for whole (a server that does not stream) shows its first step
only with the plan. ``--endpoint`` measures the model the environment configures instead
(``OPENAI_BASE_URL`` …, e.g. a local model), once. ``--screens`` measures what a person
sees instead: the first step printed by ``python -m core plan`` (a process of its own) and
drawn on the Plan page in Chromium, from the moment the planner's request reaches the
server to the plan printed, or to Approve shown.

    python -m bench.planning_stream [--endpoint | --screens] [--markdown]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path

from bench.tables import Table
from core.llm.client import OpenAIChatModel
from core.llm.engine import Engine
from core.llm.settings import LLMSettings
from core.planning.planner import plan_request
from core.tools.builtin import register_builtin_tools
from core.tools.registry import ToolRegistry
from tests.support.fake_openai import FakeOpenAI, FakeReply, streamed

__all__ = ["endpoint_table", "main", "screens_table", "scripted_table"]

REQUEST = "Work out six sums and tell me every result"
CHUNK_CHARS = 8  # about two tokens a chunk
CHUNK_DELAY_S = 0.04  # 200 characters a second: about 50 tokens a second, a hosted model's pace
_COLUMNS = ["reply", "steps", "replies", "first step s", "plan s", "first / plan"]
_SCREEN_COLUMNS = ["shown by", "steps", "first step s", "plan s", "first / plan"]
_REPO = Path(__file__).resolve().parents[1]
FIRST_DRAWN_JS = """() => /\\(([1-9][0-9]*) written so far\\)/.test(document.body.innerText)"""


def _plan_json(steps: int) -> str:
    work = [{"id": f"s{n}", "description": f"Work out {n} + {n}", "tool": "calculate",
             "args": {"expression": f"{n} + {n}"}, "depends_on": []}
            for n in range(1, steps + 1)]
    answer = {"id": f"s{steps + 1}", "description": "Tell the user every result", "tool": None,
              "depends_on": [step["id"] for step in work]}
    return json.dumps({"goal": REQUEST, "steps": [*work, answer]}, indent=1)


def _registry() -> ToolRegistry:
    registry = ToolRegistry()
    register_builtin_tools(registry)
    return registry


def _timed(model: OpenAIChatModel, registry: ToolRegistry) -> tuple[float, float, int, int]:
    """(seconds to the first step heard, seconds to the checked plan, steps planned, replies
    asked for: a corrective turn is a second one)."""
    first: list[float] = []
    started = time.perf_counter()
    result = plan_request(REQUEST, Engine(registry=registry, model=model), language="en",
                          on_steps=lambda _steps: first or first.append(time.perf_counter()))
    done = time.perf_counter()
    assert result.plan is not None  # plan_request always returns one
    heard = first[0] if first else done
    return heard - started, done - started, len(result.plan.steps), result.attempts


def _row(label: str, timing: tuple[float, float, int, int]) -> list[str]:
    to_first, total, steps, replies = timing
    return [label, str(steps), str(replies), f"{to_first:.2f}", f"{total:.2f}",
            f"{to_first / total:.2f}"]


def scripted_table(steps: int = 6) -> Table:
    """The fake endpoint streaming a plan of ``steps`` tool steps and an answer, and the
    same reply asked for whole after the same wait."""
    plan = _plan_json(steps)
    pace = -(-len(plan) // CHUNK_CHARS) * CHUNK_DELAY_S  # how long the stream takes
    table = Table(f"Time to the first step / planning time, a {steps + 1}-step plan streamed "
                  f"at {CHUNK_CHARS} characters every {CHUNK_DELAY_S * 1000:.0f} ms",
                  _COLUMNS)
    registry = _registry()
    with FakeOpenAI(responder=lambda _body: streamed(
            plan, chunk_chars=CHUNK_CHARS, chunk_delay_s=CHUNK_DELAY_S)) as server:
        model = OpenAIChatModel(server.settings(weak_model_checks=False))
        model.chat([{"role": "user", "content": "warm-up"}])  # SDK import and connection
        table.rows.append(_row("streamed", _timed(model, registry)))
    with FakeOpenAI(streams=False, responder=lambda _body: FakeReply(
            content=plan, delay_s=pace)) as server:
        model = OpenAIChatModel(server.settings(weak_model_checks=False))
        model.chat([{"role": "user", "content": "warm-up"}])
        table.rows.append(_row("whole (server does not stream)", _timed(model, registry)))
    table.notes.append("The first step is on screen (the Plan page, `python -m core plan`) "
                       "when the listener hears it; validation and the plan checks still "
                       "run on the finished plan.")
    return table


def endpoint_table() -> Table:
    """One planning call to the model the environment configures, streamed."""
    settings = LLMSettings.from_env()
    model = OpenAIChatModel(settings)
    table = Table(f"Time to the first step / planning time, {settings.planner_model} at "
                  f"{settings.public_dict().get('base_url')} ({model.profile.name} profile)",
                  _COLUMNS)
    table.rows.append(_row("streamed", _timed(model, _registry())))
    return table


class _PacedServer(contextlib.AbstractContextManager):
    """The fake endpoint streaming ``plan`` at the steady pace, noting when each planning
    request arrived (the clock of this process)."""

    def __init__(self, plan: str) -> None:
        self.asked: list[float] = []
        self.server = FakeOpenAI(responder=self._reply)
        self.plan = plan

    def _reply(self, _body: dict) -> object:
        self.asked.append(time.perf_counter())
        return streamed(self.plan, chunk_chars=CHUNK_CHARS, chunk_delay_s=CHUNK_DELAY_S)

    def __enter__(self) -> _PacedServer:
        self.server.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.server.stop()

    def environment(self, home: Path) -> dict[str, str]:
        """An environment planning with this server, in ``home``, in English."""
        return {**os.environ, "OPENAI_BASE_URL": self.server.base_url,
                "OPENAI_API_KEY": str(self.server.api_key), "OPENAI_MODEL": "gpt-4o-mini",
                "PLANBOARD_MAX_RETRIES": "0", "PLANBOARD_WEAK_MODEL_CHECKS": "off",
                "PLANBOARD_HOME": str(home), "LANG": "C.UTF-8"}


def _cli_row(paced: _PacedServer, home: Path, steps: int) -> list[str]:
    """``python -m core plan``: its first ``planning… s1`` line on stderr, and the plan on
    stdout, against the request's arrival."""
    printed: list[float] = []
    command = subprocess.Popen([sys.executable, "-m", "core", "plan", REQUEST],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               encoding="utf-8", env=paced.environment(home), cwd=_REPO)

    def read_plan() -> None:
        for line in command.stdout:  # type: ignore[union-attr]
            if not printed and line.strip():
                printed.append(time.perf_counter())

    reader = threading.Thread(target=read_plan, daemon=True)
    reader.start()
    first = next((time.perf_counter() for line in command.stderr  # type: ignore[union-attr]
                  if line.startswith("planning… s1")), None)
    for _line in command.stderr:  # type: ignore[union-attr]  # the rest, to its end
        pass
    reader.join(timeout=60)
    if command.wait(timeout=60) != 0 or first is None or not printed or not paced.asked:
        raise RuntimeError("python -m core plan did not plan with the fake endpoint")
    return _screen_row("python -m core plan", steps, paced.asked[-1], first, printed[0])


def _screen_row(label: str, steps: int, asked: float, first: float, done: float) -> list[str]:
    return [label, str(steps), f"{first - asked:.2f}", f"{done - asked:.2f}",
            f"{(first - asked) / (done - asked):.2f}"]


@contextlib.contextmanager
def _served(paced: _PacedServer, home: Path) -> Iterator[tuple[str, object]]:
    """PlanBoard served with the fake endpoint, and a Chromium page on it."""
    from playwright.sync_api import sync_playwright

    from tests.support.browser import CHROMIUM, CHROMIUM_ARGS, VIEWPORT, serve_app

    kept = dict(os.environ)
    os.environ.update(paced.environment(home))  # the served app's own environment
    try:
        with (serve_app(home, home / "streamlit.log") as url, sync_playwright() as playwright):
            browser = playwright.chromium.launch(executable_path=str(CHROMIUM),
                                                 args=CHROMIUM_ARGS)
            try:
                page = browser.new_page(viewport=VIEWPORT)
                page.set_default_timeout(120_000)
                page.goto(url)
                yield url, page
            finally:
                browser.close()
    finally:
        os.environ.clear()
        os.environ.update(kept)


def _page_row(paced: _PacedServer, home: Path, steps: int) -> list[str]:
    """The Plan page: the first step in the preview ("(1 written so far)"), and Approve
    shown for the checked plan, against the request's arrival."""
    with _served(paced, home) as (_url, page):
        page.locator(".st-key-plan_mode label").filter(has_text="Plan").first.click()
        request = page.locator(".st-key-request textarea")
        request.fill(REQUEST)
        request.press("ControlOrMeta+Enter")
        page.locator(".st-key-generate_plan button").first.click()
        page.wait_for_function(FIRST_DRAWN_JS, polling="raf")
        first = time.perf_counter()
        page.locator(".st-key-approve_run button").first.wait_for()
        done = time.perf_counter()
    if not paced.asked:
        raise RuntimeError("the Plan page did not plan with the fake endpoint")
    return _screen_row("the Plan page in Chromium", steps, paced.asked[-1], first, done)


def screens_table(steps: int = 6) -> Table:
    """The first step on the terminal and on the Plan page, against the planning time."""
    plan = _plan_json(steps)
    table = Table(f"First step shown / planning time, a {steps + 1}-step plan streamed at "
                  f"{CHUNK_CHARS} characters every {CHUNK_DELAY_S * 1000:.0f} ms",
                  _SCREEN_COLUMNS)
    with tempfile.TemporaryDirectory(prefix="planning-screens-") as folder:
        for name, row in (("cli", _cli_row), ("page", _page_row)):
            home = Path(folder, name)
            home.mkdir()
            with _PacedServer(plan) as paced:
                table.rows.append(row(paced, home, steps + 1))
    table.notes.append("From the planner's request reaching the endpoint to the first step "
                       "on screen, and to the plan printed (CLI) or Approve shown (the page, "
                       "once the plan is checked).")
    return table


def main(argv: list[str] | None = None) -> int:
    """Print the table (the scripted one, or the configured endpoint's with --endpoint)."""
    parser = argparse.ArgumentParser(prog="python -m bench.planning_stream")
    parser.add_argument("--endpoint", action="store_true",
                        help="measure the model OPENAI_BASE_URL and friends configure, once")
    parser.add_argument("--screens", action="store_true",
                        help="the first step printed by the CLI and drawn in Chromium")
    parser.add_argument("--markdown", action="store_true")
    args = parser.parse_args(argv)
    table = (endpoint_table() if args.endpoint else screens_table() if args.screens
             else scripted_table())
    command = "python -m bench.planning_stream" + (" --endpoint" if args.endpoint else
                                                   " --screens" if args.screens else "")
    print(table.markdown(command) if args.markdown else table.text())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

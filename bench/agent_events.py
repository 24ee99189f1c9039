"""Agent event → screen: how long after an outside agent posts an AG-UI event its step card
shows it, in Chromium.

A PlanBoard is served (``streamlit run app.py``, offline) over a fresh home. This process
is the agent: it sends a chain of steps for review through the project's own client
(:class:`core.review.client.ReviewClient`), and the reviewer approves it with the review
API's decision call (``POST /api/v1/reviews/{id}/decision``, what the Plan page's Approve
does). Each viewer is a tab on the run's page (``/run?run=<id>``, at most five tabs to a
Chromium context: :class:`bench.live.Browsers`) in which :data:`bench.live.CARD_LOG_JS`
notes, in the machine's clock, when each step card's status mark changes. Then the agent
reports the run as it would execute it: ``RUN_STARTED``; per step ``STEP_STARTED``, its
tool call (``TOOL_CALL_START``/``ARGS``/``END``/``RESULT``) and ``STEP_FINISHED``, with a
gap after each, so that every change of a card is a measurement of its own; ``RUN_FINISHED``.

A latency is from the moment the agent sends the event (just before the POST: what the
reviewer waits for includes the API's own work, its validation and its transaction, and a
time taken after the answer could put the screen before the post) to the card's first
``▶`` (``STEP_STARTED``) or ``✓`` (``STEP_FINISHED``) in each viewer's page. The tool
call's events change no status mark: they are posted, and their round trips counted, but
not timed on screen. A change a card has not shown :data:`bench.live.SETTLE_S` seconds
after the last post is counted as missed, never dropped.

Run with ``python -m bench.agent_events`` (one viewer, eight steps, a gap of 1 s), or
``--viewers 5 --steps 4 --gap 0.5``; it prints p50 and max, the changes missed, the POST's
own round trip, the machine's load average and the CPU time the served app and the browser
spent per posted event (from ``/proc``, Linux only).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import statistics
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench.live import (
    CARD_LOG_JS,
    SETTLE_S,
    TARGET_MAX_S,
    TARGET_P50_S,
    TIMEOUT_S,
    Browsers,
    Latencies,
    cpu_of_children,
)
from core.review.client import ReviewClient

__all__ = ["HEADER", "AgentSample", "agent_plan", "approve", "latencies", "main", "measure", "row",
           "serve_and_browse"]

STEPS = 8
GAP_S = 1.0  # after each posted change: each card's change is drawn on its own
AGENT = "bench-agent"
TOOLS = [{"name": "lookup", "description": "Look a topic up",
          "parameters": {"type": "object", "properties": {"topic": {"type": "string"}},
                         "required": ["topic"]},
          "read_only": True}]
MARKS = {"STEP_STARTED": "▶", "STEP_FINISHED": "✓"}  # the events that change a card's mark


@dataclass
class AgentSample(Latencies):
    """What one case measured: latencies in seconds, the changes never shown, the POSTs."""

    viewers: int
    steps: int
    gap: float
    started: list[float] = field(default_factory=list)  # STEP_STARTED sent → card shows ▶
    finished: list[float] = field(default_factory=list)  # STEP_FINISHED sent → card shows ✓
    missed: list[str] = field(default_factory=list)  # "viewer 1: s3 ▶"
    posts: list[float] = field(default_factory=list)  # each event's POST round trip (s)
    load: tuple[float, float, float] = (0.0, 0.0, 0.0)
    cpu: dict[str, float] = field(default_factory=dict)  # "server"/"browser": s per event

    @property
    def all(self) -> list[float]:
        """Every latency measured."""
        return self.started + self.finished

    @property
    def expected(self) -> int:
        """The card changes the viewers should see: a ▶ and a ✓ per step, per viewer."""
        return 2 * self.steps * self.viewers

    @property
    def met(self) -> bool:
        """p50 ≤ 0.3 s, max ≤ 1 s, and every change seen."""
        return (not self.missed and len(self.all) == self.expected
                and self.p50 <= TARGET_P50_S and self.worst <= TARGET_MAX_S)


def agent_plan(steps: int) -> list[dict[str, Any]]:
    """A chain of ``steps`` lookups in the agent's own step names (``look-1``, …)."""
    return [{"id": f"look-{n}", "description": f"Look up topic {n}", "tool": "lookup",
             "args": {"topic": f"topic {n}"},
             **({"depends_on": [f"look-{n - 1}"]} if n > 1 else {})}
            for n in range(1, steps + 1)]


def approve(url: str, review_id: str) -> None:
    """Approve the review as its reviewer does with the API (the Plan page's Approve)."""
    request = urllib.request.Request(
        f"{url}/api/v1/reviews/{review_id}/decision", method="POST",
        data=json.dumps({"decision": "approve"}).encode(),
        headers={"Content-Type": "application/json", "Accept": "application/json"})
    with urllib.request.urlopen(request, timeout=TIMEOUT_S) as answer:
        status = json.loads(answer.read())["status"]
    if status != "approved":
        raise RuntimeError(f"the review {review_id} is {status} after its approval")


@contextlib.contextmanager
def serve_and_browse(home: Path) -> Iterator[tuple[str, Any]]:
    """PlanBoard served over ``home`` (its log there) and a Chromium browser: (address,
    browser). Nothing runs in this process but the agent's HTTP calls."""
    from playwright.sync_api import sync_playwright

    from tests.support.browser import CHROMIUM, CHROMIUM_ARGS, serve_app

    home.mkdir(parents=True, exist_ok=True)
    with serve_app(home, home / "streamlit.log") as url, sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            yield url, browser
        finally:
            browser.close()


def _open_viewers(tabs: Browsers, url: str, viewers: int, pages: list[Any]) -> None:
    """Open ``viewers`` pages on ``url`` into ``pages`` (closed by the caller) and install
    the card log in each once its first card's head is drawn."""
    for _ in range(viewers):
        page = tabs.new_page()
        pages.append(page)
        page.set_default_timeout(TIMEOUT_S * 1000)
        page.goto(url)
    for page in pages:
        page.locator("[class*='st-key-step_card_s1'] strong").first.wait_for()
        page.evaluate(CARD_LOG_JS)


class _Agent:
    """The agent's side: each event sent, when it was sent (Unix time) and its round trip."""

    def __init__(self, client: ReviewClient, run_id: str, sample: AgentSample) -> None:
        self.client = client
        self.run_id = run_id
        self.sample = sample
        self.sent: list[tuple[str, str, float]] = []  # (step id, mark, sent at)

    def post(self, event: dict[str, Any], step_id: str | None = None) -> None:
        sent = time.time()
        clock = time.perf_counter()
        self.client.report(self.run_id, event)
        self.sample.posts.append(time.perf_counter() - clock)
        if event["type"] in MARKS and step_id is not None:
            self.sent.append((step_id, MARKS[event["type"]], sent))

    def run_step(self, step: dict[str, Any], gap: float) -> None:
        """Report one step as it is executed: started, its tool call, finished."""
        call = f"call-{step['id']}"
        self.post({"type": "STEP_STARTED", "stepName": step["id"]}, step["id"])
        time.sleep(gap)
        meta = {"stepName": step["id"]}
        self.post({"type": "TOOL_CALL_START", "toolCallId": call,
                   "toolCallName": step["tool"], "metadata": meta})
        self.post({"type": "TOOL_CALL_ARGS", "toolCallId": call,
                   "delta": json.dumps(step["args"])})
        self.post({"type": "TOOL_CALL_END", "toolCallId": call})
        self.post({"type": "TOOL_CALL_RESULT", "toolCallId": call, "messageId": f"m-{call}",
                   "content": json.dumps({"found": step["args"]})})
        time.sleep(gap)
        self.post({"type": "STEP_FINISHED", "stepName": step["id"]}, step["id"])
        time.sleep(gap)


def _settled_logs(pages: list[Any], wanted: set[tuple[str, str]]) -> list[list[dict]]:
    """Each viewer's card log, once every (step, mark) in ``wanted`` is in each, or after
    :data:`bench.live.SETTLE_S` seconds (a change later than that is missed). A page loaded
    again has lost its log: what it showed before is missed too, since the change has to
    reach the page the viewer had open."""
    deadline = time.monotonic() + SETTLE_S
    while True:
        logs = [page.evaluate("() => window.__cardLog ?? []") for page in pages]
        if all(wanted <= {(e["id"], e["mark"]) for e in log} for log in logs) or (
                time.monotonic() > deadline):
            return logs
        time.sleep(0.25)


def latencies(sent: list[tuple[str, str, float]], logs: list[list[dict]],
               sample: AgentSample) -> None:
    """Fill ``sample`` from the events sent and each viewer's card log: the first time a
    card showed the event's mark, less the time it was sent."""
    for number, log in enumerate(logs, start=1):
        for step_id, mark, at in sent:
            shown = [e["at"] / 1000 for e in log if e["id"] == step_id and e["mark"] == mark]
            if shown:
                (sample.started if mark == "▶" else sample.finished).append(
                    max(0.0, shown[0] - at))
            else:
                sample.missed.append(f"viewer {number}: {step_id} {mark}")


def measure(tabs: Browsers, url: str, *, viewers: int = 1, steps: int = STEPS,
            gap: float = GAP_S) -> AgentSample:
    """Send a chain of ``steps`` for review, approve it, open ``viewers`` run pages, report
    the run step by step with ``gap`` seconds after each change; what the viewers saw.
    Each page is closed afterwards."""
    client = ReviewClient(url, timeout=TIMEOUT_S)
    sample = AgentSample(viewers=viewers, steps=steps, gap=gap)
    review_id = client.submit(agent_plan(steps), tools=TOOLS, agent=AGENT)
    approve(url, review_id)
    decision = client.decision(review_id)
    if not decision.approved or decision.plan is None:
        raise RuntimeError(f"the review {review_id} is {decision.status}, not approved")
    pages: list[Any] = []
    try:
        _open_viewers(tabs, f"{url}/run?run={review_id}", viewers, pages)
        time.sleep(1.0)  # every viewer settled on the approved run
        agent = _Agent(client, review_id, sample)
        sample.load = os.getloadavg()
        cpu_before = cpu_of_children()
        agent.post({"type": "RUN_STARTED", "threadId": review_id, "runId": review_id})
        time.sleep(gap)
        for step in decision.plan["steps"]:
            agent.run_step(step, gap)
        agent.post({"type": "RUN_FINISHED", "threadId": review_id, "runId": review_id})
        logs = _settled_logs(pages, {(step_id, mark) for step_id, mark, _ in agent.sent})
        sample.cpu = {group: (seconds - cpu_before[group]) / len(sample.posts)
                      for group, seconds in cpu_of_children().items()}
        latencies(agent.sent, logs, sample)
    finally:
        for page in pages:
            page.close()
    return sample


HEADER = ("| viewers | steps | gap s | events posted | changes | measured | p50 s | max s "
          "| missed | target | POST p50 ms | CPU ms server / browser | load 1/5/15 min |\n"
          "| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- | ---: | --- "
          "| --- |")


def row(sample: AgentSample) -> str:
    """The case's line of the table under :data:`HEADER`."""
    cpu = " / ".join(f"{sample.cpu[group] * 1000:.0f}" if group in sample.cpu else "?"
                     for group in ("server", "browser"))
    post = statistics.median(sample.posts) * 1000 if sample.posts else float("nan")
    return (f"| {sample.viewers} | {sample.steps} | {sample.gap:.1f} | {len(sample.posts)} "
            f"| {sample.expected} | {len(sample.all)} | {sample.p50:.3f} | {sample.worst:.3f} "
            f"| {len(sample.missed)} | {'met' if sample.met else 'not met'} | {post:.0f} "
            f"| {cpu} | {' '.join(f'{x:.2f}' for x in sample.load)} |")


def main(argv: list[str] | None = None) -> int:
    """Measure the cases asked for and print one table row per case; 1 when a change was
    missed (a card that never showed an event is a fault, not a slow machine)."""
    parser = argparse.ArgumentParser(prog="python -m bench.agent_events")
    parser.add_argument("--viewers", type=int, nargs="*", default=[1],
                        help="viewers of the run page, one case each (default: 1)")
    parser.add_argument("--steps", type=int, default=STEPS, help="steps of the agent's plan")
    parser.add_argument("--gap", type=float, default=GAP_S,
                        help="seconds after each posted change")
    parser.add_argument("--home", type=Path, default=None,
                        help="the served app's home (default: a fresh temporary folder)")
    args = parser.parse_args(argv)
    if args.steps < 1 or min(args.viewers, default=0) < 1 or args.gap < 0:
        parser.error("--steps and --viewers must be at least 1, --gap at least 0")
    home = args.home or Path(tempfile.mkdtemp(prefix="planboard-agent-events-"))
    print("## Agent event → screen: an AG-UI event posted to a step card's mark (seconds)\n")
    print(f"Target: p50 ≤ {TARGET_P50_S} s, max ≤ {TARGET_MAX_S} s, nothing missed. From just "
          "before the POST of STEP_STARTED (▶) or STEP_FINISHED (✓) to the card showing it; "
          "POST: the API's round trip per event; CPU: milliseconds the served app / the "
          "browser spent per posted event.\n")
    print(HEADER)
    missed = False
    with serve_and_browse(home) as (url, browser):
        from tests.support.browser import VIEWPORT

        tabs = Browsers(browser, VIEWPORT)
        for viewers in args.viewers:
            sample = measure(tabs, url, viewers=viewers, steps=args.steps, gap=args.gap)
            print(row(sample), flush=True)
            for change in sample.missed:
                print(f"  missed: {change}")
            missed = missed or bool(sample.missed)
    return 1 if missed else 0


if __name__ == "__main__":
    raise SystemExit(main())

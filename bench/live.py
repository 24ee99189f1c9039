"""Event → screen: how long after a step's recorded change its card shows it, in Chromium.

A PlanBoard is served (``streamlit run app.py``, offline) over a fresh home; this process
executes a run over the same store (the way a second tab, the CLI or a worker does) whose
first step waits at a gate until every viewer has the run page open. Each viewer is a tab
(its own Streamlit session) on ``/run?run=<id>``, at most five tabs to a Chromium context
(:class:`Browsers`: the tabs of one share its cache, as a returning viewer's browser does,
and its six connections to the server); a MutationObserver in the page
notes, in the machine's clock (``performance.timeOrigin + performance.now()``), when each
step card's status mark changes. The gate opens, the run goes on, and each card's first
``✓`` is compared with the ``at`` of the step's ``step_completed`` event in the store (the
same clock, the same machine): the latency of that step for that viewer. With a demo pace
the first ``▶`` is compared with ``step_started`` too. A change a card never showed is
counted as missed.

Run with ``python -m bench.live`` (one, five and ten viewers of the run page, one of its
presentation view, whose graph's node labels are watched instead of cards; demo pace off
and on; then a key press confirming a waiting step, ``--confirm``), or ``--viewers 5 --pace 0
--present 1``; it prints p50 and max per case, the machine's load
average, and the CPU time the served app and the browser spent per recorded step change
while the run went on (read from ``/proc``, Linux only): a load-independent cost, since on a
shared machine the wall clock measures the neighbours too.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import statistics
import tempfile
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from core.execution.options import RunOptions
from core.llm.engine import Engine
from core.plan.model import Plan, Step
from core.tools.registry import ToolRegistry, make_tool

__all__ = [
    "CARD_LOG_JS",
    "GRAPH_LOG_JS",
    "Browsers",
    "Latencies",
    "LiveSample",
    "cpu_of_children",
    "gate_plan",
    "gate_registry",
    "latencies",
    "main",
    "measure",
    "measure_confirmation",
    "meets_target",
    "serve_and_browse",
    "with_refund",
]

CHAIN = 6  # steps after the gate, one after another
TIMEOUT_S = 60.0
OPEN_S = 240.0  # the gate's wait for every viewer to open the run (ten take over 60 s at load 18)
SETTLE_S = 30.0  # after the run's end, the longest wait for every final ✓ on every screen
TARGET_P50_S = 0.3  # the target for a recorded change to reach every screen
TARGET_MAX_S = 1.0
TABS_PER_BROWSER = 5  # viewers per browser context (see Browsers)

# Installed in every viewer's page: a log of each step card's status mark as it changes.
CARD_LOG_JS = """() => {
  if (window.__cardLog) return;
  const log = window.__cardLog = [];
  const last = {};
  const prefix = 'st-key-step_card_';
  const scan = () => {
    const at = performance.timeOrigin + performance.now();
    for (const card of document.querySelectorAll(`[class*='${prefix}']`)) {
      const key = [...card.classList].find(name => name.startsWith(prefix));
      const head = card.querySelector('strong');
      const mark = head && head.innerText.trim()[0];
      const id = key.slice(prefix.length);
      if (mark && last[id] !== mark) { last[id] = mark; log.push({id, mark, at}); }
    }
  };
  new MutationObserver(scan).observe(document,
    {subtree: true, childList: true, characterData: true});
  scan();
}"""


# The presentation view has no cards: its graph (ui.graph_view, in a same-origin frame) is
# what the audience watches. The same log, from each node's label ("✓ s3 · echo").
GRAPH_LOG_JS = """() => {
  if (window.__cardLog) return;
  const log = window.__cardLog = [];
  const last = {};
  const scan = () => {
    const at = performance.timeOrigin + performance.now();
    for (const frame of document.querySelectorAll('iframe')) {
      const doc = frame.contentDocument;
      if (!doc) continue;
      if (!doc.planboardWatched) {
        doc.planboardWatched = true;
        new MutationObserver(scan).observe(doc,
          {subtree: true, childList: true, characterData: true});
      }
      for (const node of doc.querySelectorAll('g.node')) {
        const label = [...node.querySelectorAll('text')].map(t => t.textContent).join(' ');
        const found = label.match(/([○▶✓✗⏭]) (s[0-9]+)/);
        if (found && last[found[2]] !== found[1]) {
          last[found[2]] = found[1];
          log.push({id: found[2], mark: found[1], at});
        }
      }
    }
  };
  new MutationObserver(scan).observe(document, {subtree: true, childList: true});
  scan();
}"""


class Browsers:
    """Viewers' pages, in browser contexts of at most ``tabs`` pages each (:meth:`new_page`,
    as :func:`measure` asks). A browser holds at most six connections per site over HTTP/1.1
    and each open run page holds one for its stream of marks, so in one context a seventh
    page's stream waits until another closes and its marks come with the page's redraws
    only: ten people watching are ten browsers, not ten tabs of one."""

    def __init__(self, browser: Any, viewport: dict[str, int], tabs: int = TABS_PER_BROWSER
                 ) -> None:
        self.browser = browser
        self.viewport = viewport
        self.tabs = tabs
        self.contexts: list[Any] = []
        self.opened = 0

    def new_page(self) -> Any:
        """A page in the latest context, or in a new one when that one has had ``tabs``."""
        if self.opened % self.tabs == 0:
            self.contexts.append(self.browser.new_context(viewport=self.viewport))
        self.opened += 1
        return self.contexts[-1].new_page()


class Gate:
    """The first step's tool: it returns once :meth:`open` is called (or after
    :data:`OPEN_S`)."""

    def __init__(self) -> None:
        self.opened = threading.Event()

    def wait(self, label: str) -> dict[str, str]:
        """Wait at the gate.

        Args:
            label: any text.
        """
        self.opened.wait(OPEN_S)
        return {"label": label}

    def open(self) -> None:
        """Let the run go on."""
        self.opened.set()


def echo(text: str) -> dict[str, str]:
    """Give the text back.

    Args:
        text: any text.
    """
    return {"text": text}


def gate_registry(gate: Gate) -> ToolRegistry:
    """Two read-only tools: ``gate`` (waits for :meth:`Gate.open`) and ``echo``."""
    registry = ToolRegistry()
    registry.add(make_tool(gate.wait, name="gate", read_only=True))
    registry.add(make_tool(echo, read_only=True))
    return registry


def refund_order(order_id: str) -> dict[str, str]:
    """Refund an order (a side effect).

    Args:
        order_id: the order.
    """
    return {"refunded": order_id}


def with_refund(registry: ToolRegistry, plan: Plan) -> Plan:
    """``plan`` with a last step ``s<n>`` that calls ``refund`` (a side effect, added to
    ``registry``): a run with side effects confirmed waits for a person there."""
    registry.add(make_tool(refund_order, name="refund"))
    last = plan.steps[-1].id
    return Plan(goal=plan.goal, steps=[*plan.steps, Step(
        id=f"s{len(plan.steps) + 1}", description="Refund order 88231", tool="refund",
        args={"order_id": "88231"}, depends_on=[last])])


def gate_plan(chain: int = CHAIN) -> Plan:
    """The gate, then ``chain`` echo steps one after another."""
    steps = [Step(id="s1", description="Wait until every viewer is ready", tool="gate",
                  args={"label": "ready"})]
    for index in range(2, chain + 2):
        steps.append(Step(id=f"s{index}", description=f"Echo part {index - 1}", tool="echo",
                          args={"text": f"part {index - 1}"}, depends_on=[f"s{index - 1}"]))
    return Plan(goal="event to screen", steps=steps)


class Latencies:
    """The median and largest of a sample's latencies (its ``all``, in seconds)."""

    all: list[float]

    @property
    def p50(self) -> float:
        """The median latency (seconds)."""
        return statistics.median(self.all) if self.all else float("nan")

    @property
    def worst(self) -> float:
        """The largest latency (seconds)."""
        return max(self.all) if self.all else float("nan")


@dataclass
class LiveSample(Latencies):
    """What one case measured: latencies in seconds and the changes never shown."""

    viewers: int
    pace: float
    present: bool = False  # the presentation view's graph, not the run page's cards
    completed: list[float] = field(default_factory=list)  # step_completed → card shows ✓
    started: list[float] = field(default_factory=list)  # step_started → card shows ▶
    missed: list[str] = field(default_factory=list)  # "viewer 2: s3 ✓"
    load: tuple[float, float, float] = (0.0, 0.0, 0.0)
    cpu: dict[str, float] = field(default_factory=dict)  # "server"/"browser": s per change
    messages: list[int] = field(default_factory=list)  # per viewer, from the server, while
    # the run went on (each redraw of a part of the page is a few)
    reloaded: list[str] = field(default_factory=list)  # "viewer 2": loaded or connected again

    @property
    def all(self) -> list[float]:
        """Every latency measured."""
        return self.completed + self.started


def latencies(events: list[Any], logs: list[list[dict]], sample: LiveSample, *,
              since: float = 0.0) -> None:
    """Fill ``sample`` from the store's ``events`` recorded after ``since`` (a Unix time:
    when every viewer was watching) and each viewer's card log."""
    wanted = {"step_completed": ("✓", sample.completed)}
    if sample.pace:
        wanted["step_started"] = ("▶", sample.started)
    for number, log in enumerate(logs, start=1):
        for event in events:
            if event.kind not in wanted or not event.step_id or event.at.timestamp() < since:
                continue
            mark, into = wanted[event.kind]
            recorded = event.at.timestamp()
            shown = [entry["at"] / 1000 for entry in log
                     if entry["id"] == event.step_id and entry["mark"] == mark]
            if shown:
                into.append(max(0.0, shown[0] - recorded))
            else:
                sample.missed.append(f"viewer {number}: {event.step_id} {mark}")


@contextlib.contextmanager
def serve_and_browse(home: Path, log: Path) -> Iterator[tuple[str, Any]]:
    """PlanBoard served over ``home`` and a Chromium browser: (address, browser); DBOS is
    launched here over the same home (shut it down afterwards)."""
    from playwright.sync_api import sync_playwright

    import core.runs.workflow  # noqa: F401  registers the run workflow
    from core.runs import durable
    from tests.support.browser import CHROMIUM, CHROMIUM_ARGS, serve_app

    # DBOS first: it refuses to launch under the event loop Playwright's sync API runs
    durable.launch(durable.embedded_executor_id())
    with serve_app(home, log) as url, sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            yield url, browser
        finally:
            browser.close()


@dataclass
class _Wire:
    """What one viewer's page received from the server: its connections, and the messages
    counted since :attr:`counting` was set."""

    sockets: int = 0
    messages: int = 0
    counting: bool = False

    def opened(self, socket: Any) -> None:
        self.sockets += 1
        socket.on("framereceived", self.received)

    def received(self, _frame: Any) -> None:
        self.messages += self.counting


def _open_viewers(tabs: Any, url: str, viewers: int, *, present: bool,
                  pages: list[Any], wires: list[_Wire]) -> None:
    """Open ``viewers`` pages on ``url`` into ``pages`` (the caller closes them, also when
    one fails to load), each with its :class:`_Wire` in ``wires``, and wait until each one
    watches the run."""
    for _ in range(viewers):
        page = tabs.new_page()
        pages.append(page)
        wires.append(wire := _Wire())
        page.on("websocket", wire.opened)
        page.set_default_timeout(TIMEOUT_S * 1000)
        page.goto(f"{url}&present=1" if present else url)
    for page in pages:
        if present:  # the graph drawn inside its frame
            page.frame_locator("iframe").first.locator("g.node").first.wait_for()
            page.evaluate(GRAPH_LOG_JS)
        else:  # the head's mark drawn (its component loaded), not only the card's frame
            page.locator("[class*='st-key-step_card_s1'] strong").first.wait_for()
            page.evaluate(CARD_LOG_JS)


def _final_logs(pages: list[Any], completed: set[str | None]) -> list[list[dict]]:
    """Each viewer's card log, once every completed step's ✓ is in each (a final state stays
    until it is drawn, however loaded the machine: its lateness is measured, not lost), or
    after :data:`SETTLE_S` seconds."""
    deadline = time.monotonic() + SETTLE_S
    while True:
        logs = [page.evaluate("() => window.__cardLog") for page in pages]
        drawn = all(completed <= {e["id"] for e in log if e["mark"] == "✓"} for log in logs)
        if drawn or time.monotonic() > deadline:
            return logs
        time.sleep(0.25)


def cpu_of_children() -> dict[str, float]:
    """CPU seconds (user + system) this process's descendants spent so far: the served app
    (``streamlit``) and the browser (``chrom…``), from ``/proc`` (empty elsewhere)."""
    tick = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
    parents: dict[int, int] = {}
    spent: dict[int, tuple[float, str]] = {}
    for entry in Path("/proc").glob("[0-9]*"):
        with contextlib.suppress(OSError, ValueError, IndexError):
            stat = (entry / "stat").read_text()
            command = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(
                errors="replace")
            fields = stat[stat.rindex(")") + 2:].split()
            parents[int(entry.name)] = int(fields[1])
            spent[int(entry.name)] = ((int(fields[11]) + int(fields[12])) / tick, command)
    groups = {"server": 0.0, "browser": 0.0}
    below = [pid for pid, parent in parents.items() if parent == os.getpid()]
    while below:
        pid = below.pop()
        below += [child for child, parent in parents.items() if parent == pid]
        seconds, command = spent.get(pid, (0.0, ""))
        group = "server" if "streamlit" in command else "browser" if "chrom" in command else ""
        if group:
            groups[group] += seconds
    return groups


def measure(tabs: Any, url: str, *, viewers: int, pace: float,
            chain: int = CHAIN, present: bool = False) -> LiveSample:
    """Run the gate plan at ``pace`` with ``viewers`` open on its page (``present``: its
    presentation view, whose graph is watched instead of the cards); what they saw.

    ``tabs`` opens the viewers' pages (``new_page()``): a browser context, or a browser
    (a context per page). Each page is closed afterwards.
    The run executes in this process over the served app's store (PLANBOARD_HOME).
    """
    from core.runs.runner import Runner
    from core.store.run_store import RunStore

    gate = Gate()
    store = RunStore()
    runner = Runner(store, poll_s=0.05)
    sample = LiveSample(viewers=viewers, pace=pace, present=present)
    pages: list[Any] = []
    wires: list[_Wire] = []
    try:
        plan = gate_plan(chain)
        run_id = runner.start(plan.goal, plan, engine=Engine(gate_registry(gate)),
                              options=RunOptions(step_delay_s=pace),
                              settings_public={"offline": True})
        _open_viewers(tabs, f"{url}/run?run={run_id}", viewers, present=present, pages=pages,
                      wires=wires)
        time.sleep(1.0)  # every viewer settled on the waiting run
        if any(e.kind == "step_completed" for e in store.events(run_id)):  # the gate gave up
            sample.missed.append(f"the run went on before all {viewers} viewers watched it "
                                 f"(they took over {OPEN_S:.0f} s to open)")
        sample.load = os.getloadavg()
        ready = time.time()
        cpu_before = cpu_of_children()
        for page, wire in zip(pages, wires, strict=True):
            page.evaluate("0")  # what came before is handed over now, uncounted
            wire.counting = True
        gate.open()
        record = runner.wait(run_id, TIMEOUT_S)
        if record.status != "completed":
            raise RuntimeError(f"the measured run ended {record.status}")
        time.sleep(1.5)  # the last changes reach every screen (a late one counts as late)
        events = store.events(run_id)
        logs = _final_logs(pages, {e.step_id for e in events if e.kind == "step_completed"})
        changes = sum(e.kind in ("step_started", "step_completed") and e.at.timestamp() >= ready
                      for e in events)
        sample.cpu = {group: (seconds - cpu_before[group]) / max(changes, 1)
                      for group, seconds in cpu_of_children().items()}
        latencies(events, logs, sample, since=ready)
        _note_wires(pages, wires, sample)
    finally:
        gate.open()
        for page in pages:
            page.close()
        runner.shutdown()
        store.close()
    return sample


def _note_wires(pages: list[Any], wires: list[_Wire], sample: LiveSample) -> None:
    """Each viewer's messages, and which viewers' pages were loaded or connected again
    (a change must reach the page that is open, not a new one)."""
    for number, (page, wire) in enumerate(zip(pages, wires, strict=True), start=1):
        sample.messages.append(wire.messages)
        loads = page.evaluate("() => performance.getEntriesByType('navigation').length")
        if wire.sockets != 1 or loads != 1:
            sample.reloaded.append(f"viewer {number}: {loads} loads, {wire.sockets} sockets")


def measure_confirmation(tabs: Any, url: str) -> tuple[float, tuple[float, float, float]]:
    """A run waits for the person's confirmation of its refund, its page open and holding
    its tick: seconds from the key press (Y, Confirm's shortcut) to the recorded
    ``confirmed``, and the load average then."""
    from core.runs.runner import Runner
    from core.store.run_store import RunStore

    gate = Gate()
    gate.open()
    store = RunStore()
    runner = Runner(store, poll_s=0.05)
    page = None
    try:
        registry = gate_registry(gate)
        plan = with_refund(registry, gate_plan(1))
        run_id = runner.start(plan.goal, plan, engine=Engine(registry),
                              options=RunOptions(confirm_side_effects=True),
                              settings_public={"offline": True})
        runner.wait(run_id, TIMEOUT_S, until_confirmation=True)
        page = tabs.new_page()
        page.set_default_timeout(TIMEOUT_S * 1000)
        page.goto(f"{url}/run?run={run_id}")
        page.locator(f".st-key-confirm_step_{plan.steps[-1].id} button").wait_for()
        time.sleep(1.0)  # the page holds its tick now
        load = os.getloadavg()
        pressed = time.time()
        page.locator("body").press("y")
        runner.wait(run_id, TIMEOUT_S)
        confirmed = next(e.at for e in store.events(run_id) if e.kind == "confirmed")
        return confirmed.timestamp() - pressed, load
    finally:
        if page is not None:
            page.close()
        runner.shutdown()
        store.close()


def meets_target(sample: LiveSample) -> bool:
    """Whether the case met the target: p50 ≤ 0.3 s, max ≤ 1 s, nothing missed."""
    return not sample.missed and sample.p50 <= TARGET_P50_S and sample.worst <= TARGET_MAX_S


def _row(sample: LiveSample) -> str:
    load = " ".join(f"{x:.2f}" for x in sample.load)
    met = "yes" if meets_target(sample) else "no"
    seen = "graph (presenting)" if sample.present else "cards"
    cpu = " / ".join(f"{sample.cpu[group] * 1000:.0f}" if group in sample.cpu else "?"
                     for group in ("server", "browser"))
    changes = len(sample.all) / max(sample.viewers, 1)
    messages = statistics.mean(sample.messages) / changes if sample.messages and changes else 0
    return (f"| {seen:>18} | {sample.viewers:>7} | {sample.pace:>4.1f} | {len(sample.all):>8} "
            f"| {sample.p50:>7.3f} | {sample.worst:>7.3f} | {len(sample.missed):>6} "
            f"| {met:>6} | {cpu:>13} | {messages:>5.1f} | {load} |")


def main(argv: list[str] | None = None) -> int:
    """Measure the cases asked for and print one table row per case."""
    parser = argparse.ArgumentParser(prog="python -m bench.live")
    parser.add_argument("--viewers", type=int, nargs="*", default=[1, 5, 10])
    parser.add_argument("--pace", type=float, nargs="*", default=[0.0, 1.0])
    parser.add_argument("--present", type=int, nargs="*", default=[1], metavar="VIEWERS",
                        help="viewers of the presentation view (its graph), at each pace")
    parser.add_argument("--confirm", type=int, default=1, metavar="TIMES",
                        help="times to measure a key press confirming a waiting step")
    args = parser.parse_args(argv)
    from core.runs import durable

    home = Path(tempfile.mkdtemp(prefix="planboard-live-"))
    os.environ["PLANBOARD_HOME"] = str(home)
    print("## Event → screen, step status (seconds)\n")
    print(f"Target: p50 ≤ {TARGET_P50_S} s, max ≤ {TARGET_MAX_S} s, nothing missed.\n")
    print("CPU: milliseconds the served app / the browser spent per recorded step change "
          "(started or completed) while the run went on; messages: what the server sent "
          "each viewer per change measured (its redraws).\n")
    print("|               seen | viewers | pace | measured |     p50 |     max | missed "
          "| target | CPU ms server / browser | messages | load 1/5/15 min |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    cases = [(viewers, pace, False) for viewers in args.viewers for pace in args.pace]
    cases += [(viewers, pace, True) for viewers in args.present for pace in args.pace]
    try:
        with serve_and_browse(home, home / "streamlit.log") as (url, browser):
            from tests.support.browser import VIEWPORT  # with serve_and_browse's helpers

            tabs = Browsers(browser, VIEWPORT)
            for viewers, pace, present in cases:
                sample = measure(tabs, url, viewers=viewers, pace=pace, present=present)
                print(_row(sample), flush=True)
                for missed in sample.missed:
                    print(f"  missed: {missed}")
                for reloaded in sample.reloaded:
                    print(f"  loaded again: {reloaded}")
            for _ in range(args.confirm):
                seconds, load = measure_confirmation(tabs, url)
                print(f"\nKey press (Y) to the step confirmed, the page holding its tick: "
                      f"{seconds:.3f} s (load {' '.join(f'{x:.2f}' for x in load)})",
                      flush=True)
    finally:
        durable.shutdown()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

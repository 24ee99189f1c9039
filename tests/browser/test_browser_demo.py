"""Demo pace in a real browser: with 3 s per step, a 5-step run's cards visibly move.

The sidebar's demo pace (Run options) is set to 3 s (a state lasts longer than a loaded
machine, four test workers on two cores, takes to open the run page after the approval), the
operations scenario's offline plan (five steps) is approved, and the step cards' status
marks are read every 200 ms while the run goes on: a demo audience must see the cards
change several times, not jump from "pending" to "done". The presentation view
(``?present=1``) is covered by tests/browser/test_browser.py's journey.
"""

from __future__ import annotations

import re
import time

from tests.support.browser import WAIT_MS, button, needs_chromium, open_sidebar_section

pytestmark = needs_chromium

STEPS = 5
PACE = "3"  # seconds before each step
# Every card's head line: its status mark and id, e.g. "✓ s1|▶ s2|○ s3|○ s4|○ s5".
_CARD_MARKS = """() => [...document.querySelectorAll("[class*='st-key-step_card_'] strong")]
    .map(mark => mark.innerText.trim()).join("|")"""


def _set_demo_pace(page, seconds: str) -> None:
    """Open the sidebar's Run options and type the demo pace (Enter commits it)."""
    open_sidebar_section(page, "Run options", ".st-key-demo_pace input")
    pace = page.locator(".st-key-demo_pace input")
    pace.fill(seconds)
    pace.press("Enter")
    page.wait_for_function(
        "value => document.querySelector('.st-key-demo_pace input').value === value",
        arg=f"{float(seconds):.2f}")


def _start_ops_run(page) -> None:
    button(page, "scenario_ops-health").click()
    request = page.locator(".st-key-request textarea")
    page.wait_for_function(
        "el => el.value.includes('micro-services')", arg=request.element_handle(),
        timeout=WAIT_MS)
    button(page, "generate_plan").click()
    page.get_by_text("The plan is valid.").wait_for()
    approve = button(page, "approve_run")
    approve.scroll_into_view_if_needed()
    approve.click()
    page.wait_for_url(re.compile(r"/run\?run=\w+"))


def _watch_cards(page, timeout_s: float = 90.0) -> list[str]:
    """The distinct card snapshots seen, in order, until every card is finished."""
    seen: list[str] = []
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        marks = page.evaluate(_CARD_MARKS)
        if marks.count("|") == STEPS - 1 and (not seen or seen[-1] != marks):
            seen.append(marks)
        if seen and not re.search(r"[○▶]", seen[-1]):
            return seen
        page.wait_for_timeout(200)
    raise AssertionError(f"the run did not finish in {timeout_s:.0f} s; seen: {seen}")


def test_a_paced_five_step_run_visibly_updates_at_least_four_times(page, tmp_path):
    try:
        _set_demo_pace(page, PACE)
        _start_ops_run(page)
        seen = _watch_cards(page)
        page.get_by_text("Completed").first.wait_for()
    except Exception:
        page.screenshot(path=str(tmp_path / "failure.png"))  # kept by pytest for a look
        raise
    assert seen[-1].count("✓") == STEPS, seen
    # the first snapshot and at least four changes after it: five distinct card states
    assert len(seen) >= 5, seen
    done = [snapshot.count("✓") for snapshot in seen]
    assert done == sorted(done), seen  # cards only move forward

"""bench/agent_events.py on a small case: an outside agent's plan of two steps, approved and
reported over the review API while one Chromium tab watches the run page. It asserts what
holds whatever the machine's speed (every posted change reached the card, none missed, the
table prints with the counts expected), never a time; and, on made-up times, that a change
a card never showed is counted as missed.
"""

from __future__ import annotations

import pytest

from bench.agent_events import HEADER, AgentSample, latencies, main
from tests.support.browser import needs_chromium


def _cells(line: str) -> list[str]:
    return [cell.strip() for cell in line.strip().strip("|").split("|")]


@needs_chromium
def test_every_posted_step_change_reaches_the_card_and_the_table_prints(tmp_path, capsys):
    # a gap of 1 s: each ▶ stays on its card for 2 s and more, however slow the machine
    code = main(["--steps", "2", "--gap", "1", "--home", str(tmp_path / "home")])
    out = capsys.readouterr().out
    print(out)
    assert HEADER in out
    row = out[out.index(HEADER) + len(HEADER):].strip().splitlines()[0]
    header = _cells(HEADER.splitlines()[0])
    cells = dict(zip(header, _cells(row), strict=True))
    assert cells["viewers"] == "1" and cells["steps"] == "2"
    # RUN_STARTED, per step STEP_STARTED, 4 tool call events and STEP_FINISHED, RUN_FINISHED
    assert cells["events posted"] == "14"
    assert cells["changes"] == cells["measured"] == "4"  # a ▶ and a ✓ per step
    assert cells["missed"] == "0"
    assert "missed:" not in out
    assert code == 0


def test_a_change_the_card_never_showed_is_missed_and_a_shown_one_measured_from_its_post():
    sample = AgentSample(viewers=2, steps=1, gap=1.0)
    sent = [("s1", "▶", 100.0), ("s1", "✓", 102.0)]
    logs = [
        [{"id": "s1", "mark": "○", "at": 99_000.0}, {"id": "s1", "mark": "▶", "at": 100_250.0},
         {"id": "s1", "mark": "✓", "at": 102_100.0}],
        [{"id": "s1", "mark": "○", "at": 99_000.0}, {"id": "s1", "mark": "▶", "at": 100_400.0}],
    ]
    latencies(sent, logs, sample)
    assert sample.started == pytest.approx([0.25, 0.4])
    assert sample.finished == pytest.approx([0.1])
    assert sample.missed == ["viewer 2: s1 ✓"]
    assert sample.expected == 4 and not sample.met  # a missed change never meets the target


def test_a_bench_without_viewers_is_refused_in_one_line(capsys):
    with pytest.raises(SystemExit) as refused:
        main(["--viewers", "0"])
    assert refused.value.code == 2
    assert "--steps and --viewers must be at least 1" in capsys.readouterr().err

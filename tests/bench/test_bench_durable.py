"""bench/durable_bench.py with tiny sizes on SQLite: the tables and their rows, as text and
as Markdown (no timings).

The tables are printed to a StringIO, not read with capsys: DBOS's console log handler
keeps the ``sys.stderr`` of the first launch in the process, and capsys closes its own
at the end of the test, which would break every later launch.
"""

from __future__ import annotations

import io
import os

import pytest

from bench.durable_bench import (
    Backend,
    backends,
    bench_parallel_ratio,
    bench_step_overhead,
    size_overhead_table,
    step_overhead_table,
)
from core.runs import durable

SKIPPED = Backend("PostgreSQL", skipped="not installed here")


@pytest.fixture(autouse=True)
def _no_dbos_left_running():
    yield
    durable.shutdown()


def rows(printed: str) -> dict[str, list[str]]:
    """The table rows of ``printed`` by their first cell."""
    cells = [[cell.strip() for cell in line.split("|")] for line in printed.splitlines()
             if "|" in line]
    return {row[0]: row[1:] for row in cells[1:]}  # without the header


def test_the_step_overhead_table_has_a_row_per_backend():
    out = io.StringIO()
    bench_step_overhead([Backend("SQLite"), SKIPPED], steps=2, repetitions=1, out=out)

    printed = out.getvalue()
    assert "a chain of 2 no-op tool steps" in printed
    table = rows(printed)
    assert list(table) == ["SQLite", "PostgreSQL"]
    in_process, workflow, overhead = (float(cell) for cell in table["SQLite"])
    assert in_process > 0 and workflow > 0
    assert overhead == pytest.approx(workflow - in_process, abs=0.11)  # printed rounded
    assert table["PostgreSQL"] == ["skipped: not installed here"]
    assert "target: overhead ≤ 50 ms per step on SQLite" in printed


def test_the_parallel_table_counts_one_model_call_per_step(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    out = io.StringIO()

    bench_parallel_ratio([Backend("SQLite"), SKIPPED], steps=2, latency_s=0.01,
                         repetitions=1, out=out)

    printed = out.getvalue()
    table = rows(printed)
    assert list(table) == ["run_plan in-process", "workflow, SQLite", "workflow, PostgreSQL"]
    for name in ("run_plan in-process", "workflow, SQLite"):
        wall, calls, ratio = table[name]
        assert int(calls) == 2
        assert float(ratio) == pytest.approx(float(wall) / 0.01, rel=0.05, abs=1.0)
    assert table["workflow, PostgreSQL"] == ["skipped: not installed here"]
    assert "critical path: 0.01s (one call)" in printed
    assert "OPENAI_API_KEY" not in os.environ  # the fake key was set for the bench only


def test_a_given_postgresql_url_is_used_as_it_is():
    with backends("postgresql://planboard@127.0.0.1:5999/scratch") as found:
        assert found == [Backend("SQLite"),
                         Backend("PostgreSQL", "postgresql://planboard@127.0.0.1:5999/scratch")]


def test_the_step_overhead_table_in_markdown_pads_a_skipped_row():
    table = step_overhead_table([Backend("SQLite"), SKIPPED], steps=2, repetitions=1)

    printed = table.markdown("python -m bench --only durable")
    lines = printed.splitlines()
    assert lines[0].startswith("### DBOS overhead per step: a chain of 2 no-op tool steps")
    assert "cores, Python " in lines[0]
    assert lines[2].startswith("`python -m bench --only durable`; load average")
    table_lines = [line for line in lines if line.startswith("| ")]
    assert table_lines[0] == ("| backend | in-process ms/step | workflow ms/step | "
                              "overhead ms/step |")
    assert table_lines[1] == "| --- | ---: | ---: | ---: |"
    assert table_lines[2].startswith("| SQLite | ")
    assert table_lines[3] == "| PostgreSQL | skipped: not installed here |  |  |"
    assert "target: overhead ≤ 50 ms per step on SQLite" in printed


def test_the_size_table_has_a_row_per_size_against_the_smallest():
    table = size_overhead_table(sizes=(2, 4), budget_steps=4)

    printed = table.text()
    assert "Engine time per step by plan size" in printed
    found = rows(printed)
    assert list(found) == ["2", "4"]
    assert found["2"][0] == "2" and found["4"][0] == "1"  # runs within the budget
    assert float(found["2"][1]) > 0 and found["2"][2] == "1.00"
    assert float(found["4"][2]) == pytest.approx(float(found["4"][1]) / float(found["2"][1]),
                                                 rel=0.05, abs=0.02)
    assert "target: 4 steps within 1.5 x the time per step of 2" in printed

"""Benchmark tables as text and as Markdown, and docs/benchmarks.md's generator: formats,
headings and kept sections, never timings."""

from __future__ import annotations

import datetime
import re

from bench import engine_bench, parser, prompts, report, ui_plan_page
from bench.tables import Table, markdown_table

HEADING = re.compile(r"^### (?P<title>.+) — (?P<arch>[^,]+), (?P<cores>\d+) cores, "
                     r"Python (?P<python>\d+\.\d+\.\d+), (?P<day>\d{4}-\d{2}-\d{2})$")
DAY = datetime.date(2026, 12, 1)


def markdown_rows(printed: str) -> list[list[str]]:
    """The rows of every Markdown table in ``printed``, header and separator included."""
    return [[cell.strip() for cell in line.strip().strip("|").split("|")]
            for line in printed.splitlines() if line.startswith("| ")]


def headings(printed: str) -> list[re.Match[str]]:
    found = [HEADING.match(line) for line in printed.splitlines() if line.startswith("### ")]
    assert all(found), printed
    return found  # type: ignore[return-value]  # checked above


def test_a_table_prints_aligned_text_with_short_rows_as_they_are():
    table = Table("what", ["backend", "ms", "ratio"],
                  [["SQLite", "12.5", "1.10"], ["PostgreSQL", "skipped: not installed"]],
                  ["a note"])

    assert table.text().splitlines() == ["", "## what", "backend    |   ms | ratio",
                                         "SQLite     | 12.5 |  1.10",
                                         "PostgreSQL | skipped: not installed", "a note"]


def test_a_markdown_table_says_what_on_what_and_when():
    table = Table("Render time", ["steps", "ms"], [["5", "1.0"], ["100", "skipped: a|b"]],
                  ["the ratio matters"], load=1.5)

    printed = table.markdown("python -m bench.x --markdown", DAY)

    (heading,) = headings(printed)
    assert heading["title"] == "Render time" and heading["day"] == "2026-12-01"
    assert int(heading["cores"]) >= 1
    assert "`python -m bench.x --markdown`; load average 1.50 when it started." in printed
    assert "| steps | ms |\n| --- | ---: |\n| 5 | 1.0 |\n| 100 | skipped: a\\|b |" in printed
    assert printed.rstrip().endswith("the ratio matters")


def test_an_untimed_table_gives_no_load_and_short_rows_are_padded():
    table = Table("Sizes", ["style", "chars", "share"], [["full", "10"]], timed=False, load=3.0)

    assert "`python -m bench.prompts`.\n" in table.markdown("python -m bench.prompts", DAY)
    assert markdown_table(table.columns, table.rows).splitlines()[-1] == "| full | 10 |  |"


def test_the_engine_bench_prints_three_markdown_tables(capsys):
    assert engine_bench.main(["--only", "engine", "--latency", "0.01", "--markdown"]) == 0

    printed = capsys.readouterr().out
    titles = [h["title"] for h in headings(printed)]
    assert titles == ["4 independent LLM-bound steps + synthesis, 0.01s per call",
                      "LLM calls per plan (planning call not included)",
                      "Prompt size along a 20-step chain (each result ~5 kB)"]
    assert printed.count("`python -m bench --only engine --latency 0.01`; load average") == 1
    rows = markdown_rows(printed)
    assert ["max_parallel", "wall s", "LLM calls", "wall / bound"] in rows
    assert ["3 tool steps, missing args", "4", "4"] in rows  # counts, not timings


def test_the_parser_bench_prints_a_row_per_category(capsys):
    parser.main(["--per-category", "1", "--markdown"])  # its exit code counts slow inputs

    printed = capsys.readouterr().out
    (heading,) = headings(printed)
    assert heading["title"].startswith("Hostile planner replies:")
    rows = markdown_rows(printed)
    assert rows[0][:3] == ["category", "inputs", "plans"]
    assert all(row[1] == "1" for row in rows[2:]) and len(rows) > 5
    assert "`python -m bench.parser --per-category 1`; load average" in printed


def test_the_prompt_bench_in_markdown(capsys):
    assert prompts.main(["--markdown"]) == 0

    printed = capsys.readouterr().out
    sizes, cache = headings(printed)
    assert sizes["title"].startswith("Planner prompt (system + request) with 15 and with 100")
    assert cache["title"].startswith("Planning calls of one session against the fake endpoint")
    rows = markdown_rows(printed)
    assert [row[:3] for row in rows[2:10]] == [
        [str(count), style, lang] for count in ("15", "100") for style in ("full", "compact")
        for lang in ("en", "zh")]
    hundred = [row for row in rows[2:10] if row[0] == "100"]
    assert all(float(row[5]) < 1.25 for row in hundred)  # flat: the shortlist holds it
    assert all(int(row[6]) > 2 * int(row[4]) for row in hundred)  # every schema would not


def test_the_plan_page_table_compares_with_the_smallest_plan():
    table = ui_plan_page.render_table({"5": 0.2, "100": 0.5, "60 in 12 phases": 0.3}, 3,
                                      load=0.5)

    assert table.rows == [["5", "200.0", "1.00"], ["100", "500.0", "2.50"],
                          ["60 in 12 phases", "300.0", "1.50"]]
    assert table.columns[-1] == "vs 5 steps"
    assert table.notes == ["target: the plan in phases within 3 x the 5-step plan (one table "
                           "per phase, the graph open on the current phase)"]


def test_the_plan_page_bench_plan_in_phases_is_valid_and_twelve_by_five():
    plan = ui_plan_page.phased_plan(12, 5)
    assert plan.validate() == []
    assert len(plan.steps) == 60 and len(plan.phases) == 12
    assert {len(plan.steps_of(p.id)) for p in plan.phases} == {5}


def test_the_report_keeps_what_lies_outside_its_markers_and_other_sections():
    earlier = report.merge(None, {
        "parser": report.section(report.BENCHES[2], "### old parser table", ""),
        "prompts": report.section(report.BENCHES[3], "### old prompt table", "")}, DAY)
    kept = earlier.replace("## Plan quality with a real model",
                           "## Plan quality with a real model\n\nmeasured by hand")

    fresh = report.merge(kept, {"prompts": report.section(
        report.BENCHES[3], "### new prompt table", "`x` exited with 1: boom")}, DAY)

    assert fresh.count(report.BEGIN) == 1 and fresh.count(report.END) == 1
    assert "### old parser table" in fresh  # not run this time: kept
    assert "### old prompt table" not in fresh and "### new prompt table" in fresh
    assert "**`x` exited with 1: boom**" in fresh
    assert fresh.index("<!-- bench: parser -->") < fresh.index("<!-- bench: prompts -->")
    assert fresh.endswith("measured by hand\n" + kept.split("measured by hand\n", 1)[1])
    assert "Written on 2026-12-01 on " in fresh


def test_the_report_runs_a_benchmark_in_its_own_process(tmp_path):
    out = tmp_path / "benchmarks.md"

    assert report.main(["--only", "prompts", "--out", str(out)]) == 0

    written = out.read_text(encoding="utf-8")
    assert written.startswith("# Benchmarks")
    assert "<!-- bench: prompts -->\n\n## Planner prompt" in written
    assert markdown_rows(written)[2][:3] == ["15", "full", "en"]
    assert "<!-- bench: parser -->" not in written


def test_the_read_ahead_bench_calls_each_lookup_once_with_and_without(monkeypatch):
    from bench import read_ahead

    monkeypatch.setattr(read_ahead, "CHUNK_DELAY_S", 0.001)  # the figures, not the times
    monkeypatch.setattr(read_ahead, "READ_S", 0.01)
    table = read_ahead.scripted_table()
    assert [row[:2] for row in table.rows] == [["off", "4"], ["on", "4"]]
    assert table.rows[0][-1] == "1.00"

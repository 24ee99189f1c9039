"""The analytics toolset: deterministic churn data and a read-only run_sql."""

from __future__ import annotations

import json
import shutil
import sqlite3

import pytest
from hypothesis import given
from hypothesis import strategies as st

from core.errors import ToolExecutionError
from core.tools.toolsets import default_registry
from demo.analytics import ROW_LIMIT, analytics_db_path, ensure_analytics_db
from demo.data import reset_demo_data
from tests.support.fuzzing import FUZZ_WITH_FIXTURES

Q1 = "churned_at >= '2026-01-01' AND churned_at < '2026-04-01'"


@pytest.fixture(scope="module")
def built_database(tmp_path_factory):
    """Build the seeded database once; each test gets its own copy in its own home."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("PLANBOARD_HOME", str(tmp_path_factory.mktemp("analytics-template")))
        return ensure_analytics_db()


@pytest.fixture
def analytics(built_database):
    """The demo tools over a fresh copy of the analytics database (built once per module)."""
    shutil.copyfile(built_database, analytics_db_path())
    return default_registry({})


def test_describe_tables(analytics):
    tables = {t["name"]: t for t in analytics.call("describe_tables", {})["tables"]}
    assert set(tables) == {"users", "subscriptions", "churn_events", "support_feedback"}
    assert tables["users"]["row_count"] == 3000
    assert sum(t["row_count"] for t in tables.values()) > 5000
    assert {"name": "reason", "type": "TEXT"} in tables["churn_events"]["columns"]


def test_churn_question_gets_real_numbers(analytics):
    by_reason = analytics.call("run_sql", {"query": (
        f"SELECT reason, COUNT(*) AS n FROM churn_events WHERE {Q1} GROUP BY reason "
        "ORDER BY n DESC")})
    assert by_reason["columns"] == ["reason", "n"]
    assert by_reason["rows"][0][0] == "price"
    total = analytics.call("run_sql", {"query": f"SELECT COUNT(*) FROM churn_events WHERE {Q1}"})
    assert total["rows"][0][0] == sum(row[1] for row in by_reason["rows"]) > 100
    conn = sqlite3.connect(analytics_db_path())
    direct = conn.execute(f"SELECT COUNT(*) FROM churn_events WHERE {Q1}").fetchone()[0]
    conn.close()
    assert total["rows"][0][0] == direct


def test_data_is_deterministic(analytics):
    query = {"query": "SELECT COUNT(*), SUM(user_id) FROM churn_events"}
    before = analytics.call("run_sql", query)["rows"]
    reset_demo_data()
    assert analytics.call("run_sql", query)["rows"] == before


@pytest.mark.parametrize("query", [
    "DELETE FROM users",
    "UPDATE users SET plan = 'free'",
    "ATTACH DATABASE 'other.db' AS other",
    "SELECT 1; DELETE FROM users",
    "SELECT 1; SELECT 2",
    "INSERT INTO users VALUES (9999, '2026-01-01', 'free', 'CN', 'ads')",
    "DROP TABLE users",
    "PRAGMA writable_schema = 1",
    "WITH x AS (SELECT 1) DELETE FROM users",
    "/* hi */ DELETE FROM users",
    "",
])
def test_refusals(analytics, query):
    with pytest.raises(ToolExecutionError, match="run_sql"):
        analytics.call("run_sql", {"query": query})
    assert analytics.call("run_sql", {"query": "SELECT COUNT(*) FROM users"})["rows"] == [[3000]]


def test_bad_sql_is_explained(analytics):
    with pytest.raises(ToolExecutionError, match="describe_tables"):
        analytics.call("run_sql", {"query": "SELECT nope FROM users"})


def test_row_limit(analytics):
    result = analytics.call("run_sql", {"query": "SELECT user_id FROM users"})
    assert result["row_count"] == ROW_LIMIT == len(result["rows"])
    assert result["truncated"] is True


# ---- bounded values, rows and cells; every result storable ------------------------------


@pytest.mark.parametrize(("query", "message"), [
    ("SELECT replace(hex(zeroblob(4e8)), '0', 'x')", "grew past 1,000,000 bytes"),
    ("SELECT zeroblob(9e8)", "grew past 1,000,000 bytes"),
    ("SELECT printf('%.*c', 900000000, 'x')", "could not run printf/format"),
    ("SELECT printf('%.' || '900000000' || 'c', 'x')", "could not run printf/format"),
    ("SELECT format('%900000000.*c', '9e8', 'x')", "could not run printf/format"),
    ("SELECT " + ", ".join(["1"] * 101), "at most 100 columns"),
    ("WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT max(x) FROM c",
     "only reading"),
])
def test_oversized_queries_end_in_a_clear_error(analytics, query, message):
    with pytest.raises(ToolExecutionError, match=message):
        analytics.call("run_sql", {"query": query})


def test_blobs_come_back_as_hex_text(analytics):
    result = analytics.call("run_sql", {"query": "SELECT randomblob(8), x'00ff', zeroblob(300)"})
    small, literal, big = result["rows"][0]
    assert small.startswith("X'") and len(small) == 2 + 16 + 1
    assert literal == "X'00FF'"
    assert big.startswith("X'" + "00" * 256 + "…'") and big.endswith("(300 bytes)")
    assert result["truncated"] is True and "BLOBs are cut" in result["note"]
    assert json.loads(json.dumps(result, allow_nan=False)) == result


def test_long_cells_and_large_results_are_cut_with_a_note(analytics):
    result = analytics.call("run_sql", {"query": "SELECT printf('%.*c', 5000, 'x') FROM users"})
    assert all(len(row[0]) == 2000 and row[0].endswith("…") for row in result["rows"])
    assert result["row_count"] == len(result["rows"]) == 100
    assert "text cells are cut" in result["note"] and "200,000 characters" in result["note"]


def test_ordinary_formats_and_infinities_are_kept_storable(analytics):
    result = analytics.call("run_sql", {"query": (
        "SELECT printf('%d|%5.2f|%s|%%', 3, 2.345, 'a'), printf('%.1f%%', 12.345), "
        "format('%s', NULL), 1e999, -1e999")})
    assert result["rows"] == [["3| 2.35|a|%", "12.3%", "", "inf", "-inf"]]
    assert result["truncated"] is False and "note" not in result


def test_text_that_is_not_utf8_is_shown_with_replacement_characters(analytics):
    query = "SELECT char(55296), CAST(x'ff' AS TEXT), '\ud800'"
    result = analytics.call("run_sql", {"query": query})
    assert all(set(cell) == {"\ufffd"} for cell in result["rows"][0])


SQL_VALUES = st.one_of(
    st.integers(-(2**63), 2**63 - 1).map(str),
    st.sampled_from(["1e999", "-1e999", "NULL", "x'00ff'", "randomblob(8)", "zeroblob(3000)",
                     "'中文'", "char(0)", "char(55296)", "printf('%.*c', 3000, 'y')",
                     "hex(randomblob(600000))", "zeroblob(2e6)", "0.1", "user_id"]),
    st.text(max_size=20).map(lambda t: "'" + t.replace("'", "''") + "'"),
)


@FUZZ_WITH_FIXTURES
@given(st.lists(SQL_VALUES, min_size=1, max_size=4), st.sampled_from(["", " FROM users"]))
def test_every_run_sql_result_is_storable(analytics, values, source):
    try:
        result = analytics.call("run_sql", {"query": f"SELECT {', '.join(values)}{source}"})
    except ToolExecutionError as exc:
        assert "\n" not in str(exc)
        return
    stored = json.dumps(result, ensure_ascii=False, allow_nan=False)
    stored.encode("utf-8")  # no lone surrogates
    assert len(stored) < 400_000 and len(result["rows"]) <= ROW_LIMIT


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_run_sql_query_description_names_every_column(analytics, lang):
    """Models write SQL from the query's description: it must match the real tables."""
    from core.tools.tool_texts import tool_description, tool_parameters

    tool = analytics.get("run_sql")
    text = tool_parameters(tool, lang)["properties"]["query"]["description"]
    assert "churn_events(" not in tool_description(tool, lang)  # kept out of the summary
    for table in analytics.call("describe_tables", {})["tables"]:
        columns = ", ".join(column["name"] for column in table["columns"])
        assert f"{table['name']}({columns})" in text

"""The analytics toolset: deterministic churn data and a read-only run_sql."""

from __future__ import annotations

import shutil
import sqlite3

import pytest

from core.errors import ToolExecutionError
from core.tools.analytics import ROW_LIMIT, analytics_db_path, ensure_analytics_db
from core.tools.catalog import default_registry
from core.tools.demo import reset_demo_data

Q1 = "churned_at >= '2026-01-01' AND churned_at < '2026-04-01'"


@pytest.fixture(scope="module")
def built_database(tmp_path_factory):
    """Build the seeded database once; each test gets its own copy in its own home."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("PLANBOARD_HOME", str(tmp_path_factory.mktemp("analytics-template")))
        return ensure_analytics_db()


@pytest.fixture
def registry(built_database):
    shutil.copyfile(built_database, analytics_db_path())
    return default_registry({})


def test_describe_tables(registry):
    tables = {t["name"]: t for t in registry.call("describe_tables", {})["tables"]}
    assert set(tables) == {"users", "subscriptions", "churn_events", "support_feedback"}
    assert tables["users"]["row_count"] == 3000
    assert sum(t["row_count"] for t in tables.values()) > 5000
    assert {"name": "reason", "type": "TEXT"} in tables["churn_events"]["columns"]


def test_churn_question_gets_real_numbers(registry):
    by_reason = registry.call("run_sql", {"query": (
        f"SELECT reason, COUNT(*) AS n FROM churn_events WHERE {Q1} GROUP BY reason "
        "ORDER BY n DESC")})
    assert by_reason["columns"] == ["reason", "n"]
    assert by_reason["rows"][0][0] == "price"
    total = registry.call("run_sql", {"query": f"SELECT COUNT(*) FROM churn_events WHERE {Q1}"})
    assert total["rows"][0][0] == sum(row[1] for row in by_reason["rows"]) > 100
    conn = sqlite3.connect(analytics_db_path())
    direct = conn.execute(f"SELECT COUNT(*) FROM churn_events WHERE {Q1}").fetchone()[0]
    conn.close()
    assert total["rows"][0][0] == direct


def test_data_is_deterministic(registry):
    query = {"query": "SELECT COUNT(*), SUM(user_id) FROM churn_events"}
    before = registry.call("run_sql", query)["rows"]
    reset_demo_data()
    assert registry.call("run_sql", query)["rows"] == before


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
def test_refusals(registry, query):
    with pytest.raises(ToolExecutionError, match="run_sql"):
        registry.call("run_sql", {"query": query})
    assert registry.call("run_sql", {"query": "SELECT COUNT(*) FROM users"})["rows"] == [[3000]]


def test_bad_sql_is_explained(registry):
    with pytest.raises(ToolExecutionError, match="describe_tables"):
        registry.call("run_sql", {"query": "SELECT nope FROM users"})


def test_row_limit(registry):
    result = registry.call("run_sql", {"query": "SELECT user_id FROM users"})
    assert result["row_count"] == ROW_LIMIT == len(result["rows"])
    assert result["truncated"] is True

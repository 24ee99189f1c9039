"""The analytics toolset of seed 003: seeded churn data and a read-only SQL tool.

``run_sql`` is read-only by construction: the database is opened through a ``mode=ro`` file
URI, an authorizer allows only SELECT/READ/FUNCTION actions, one statement runs at a time,
a progress handler stops runaway queries and at most ``ROW_LIMIT`` rows come back.
"""

from __future__ import annotations

import random
import sqlite3
import time
from datetime import date, timedelta
from pathlib import Path
from typing import Any

from core.base.home import planboard_home
from core.errors import ToolExecutionError
from core.tools.db import connect, ensure_database
from core.tools.registry import ToolRegistry, tool

__all__ = [
    "ROW_LIMIT",
    "analytics_db_path",
    "describe_tables",
    "ensure_analytics_db",
    "register_analytics_tools",
    "run_sql",
]

ROW_LIMIT = 200
_TIME_LIMIT_S = 3.0
_SEED = 3
_PRICES = {"basic": 39.0, "pro": 79.0, "team": 199.0}
_TABLES = {
    "users": "one row per registered user (signup date, current plan, country, channel)",
    "subscriptions": "paid subscriptions: plan, monthly price, start and end; status active|"
                     "cancelled",
    "churn_events": "one row per cancelled subscription: when and the reason the user gave",
    "support_feedback": "support tickets and survey feedback: category, rating 1-5, comment",
}
_SCHEMA = """
CREATE TABLE users (user_id INTEGER PRIMARY KEY, signup_date TEXT NOT NULL, plan TEXT NOT NULL,
    country TEXT NOT NULL, channel TEXT NOT NULL);
CREATE TABLE subscriptions (subscription_id INTEGER PRIMARY KEY, user_id INTEGER NOT NULL
    REFERENCES users(user_id), plan TEXT NOT NULL, monthly_price REAL NOT NULL,
    started_at TEXT NOT NULL, ended_at TEXT, status TEXT NOT NULL);
CREATE TABLE churn_events (event_id INTEGER PRIMARY KEY, user_id INTEGER NOT NULL
    REFERENCES users(user_id), plan TEXT NOT NULL, churned_at TEXT NOT NULL,
    reason TEXT NOT NULL);
CREATE TABLE support_feedback (feedback_id INTEGER PRIMARY KEY, user_id INTEGER NOT NULL
    REFERENCES users(user_id), created_at TEXT NOT NULL, category TEXT NOT NULL,
    rating INTEGER NOT NULL, comment TEXT NOT NULL);
"""
_REASONS = ("price", "missing_feature", "bugs", "competitor", "support", "other")
_Q1_WEIGHTS = {"basic": (45, 15, 10, 20, 5, 5), "pro": (15, 25, 35, 15, 5, 5),
               "team": (10, 40, 20, 20, 5, 5)}
_USUAL_WEIGHTS = (20, 25, 15, 20, 10, 10)
_FEEDBACK = {
    "price": ("billing", "涨价后太贵了 / too expensive after the price rise"),
    "missing_feature": ("feature_request", "缺少团队协作功能 / missing collaboration features"),
    "bugs": ("bug", "同步经常失败 / sync keeps failing"),
    "competitor": ("usability", "别家更好用 / a competitor is easier to use"),
    "support": ("support", "客服回复太慢 / support replies too slowly"),
    "other": ("other", "暂时不需要了 / no longer needed"),
}
_ALLOWED_ACTIONS = {sqlite3.SQLITE_SELECT, sqlite3.SQLITE_READ, sqlite3.SQLITE_FUNCTION}


def analytics_db_path() -> Path:
    """Path of the analytics database under the PlanBoard home."""
    return planboard_home() / "analytics.db"


def ensure_analytics_db() -> Path:
    """Create and seed the analytics database on first use; return its path."""
    return ensure_database(analytics_db_path(), _seed, wal=False)


def _hazard(month: date, plan: str) -> float:
    base = {"basic": 0.035, "pro": 0.025, "team": 0.015}[plan]
    if date(2026, 1, 1) <= month < date(2026, 4, 1):  # the price rise and a buggy release
        return base * (2.6 if plan == "basic" else 1.9)
    return base


def _months(start: date, end: date) -> list[date]:
    months, current = [], date(start.year, start.month, 1)
    while current <= end:
        months.append(current)
        current = date(current.year + current.month // 12, current.month % 12 + 1, 1)
    return months


def _seed(conn: sqlite3.Connection) -> None:
    conn.executescript(_SCHEMA)
    rng = random.Random(_SEED)
    first, last = date(2025, 1, 1), date(2026, 6, 24)
    feedback_id = event_id = 0
    for user_id in range(1, 3001):
        signup = first + timedelta(days=rng.randrange((date(2026, 5, 31) - first).days))
        plan = rng.choices(("free", "basic", "pro", "team"), weights=(35, 35, 22, 8))[0]
        country = rng.choices(("CN", "SG", "US", "DE", "JP"), weights=(60, 10, 15, 8, 7))[0]
        channel = rng.choice(("organic", "ads", "referral", "partner"))
        conn.execute("INSERT INTO users VALUES (?, ?, ?, ?, ?)",
                     (user_id, signup.isoformat(), plan, country, channel))
        if plan == "free":
            continue
        ended, reason = None, None
        for month in _months(signup + timedelta(days=30), last):
            if rng.random() < _hazard(month, plan):
                in_q1 = date(2026, 1, 1) <= month < date(2026, 4, 1)
                weights = _Q1_WEIGHTS[plan] if in_q1 else _USUAL_WEIGHTS
                reason = rng.choices(_REASONS, weights=weights)[0]
                ended = month + timedelta(days=rng.randrange(28))
                break
        conn.execute(
            "INSERT INTO subscriptions VALUES (?, ?, ?, ?, ?, ?, ?)",
            (user_id, user_id, plan, _PRICES[plan], signup.isoformat(),
             ended.isoformat() if ended else None, "cancelled" if ended else "active"),
        )
        if ended and reason:
            event_id += 1
            conn.execute("INSERT INTO churn_events VALUES (?, ?, ?, ?, ?)",
                         (event_id, user_id, plan, ended.isoformat(), reason))
        for _ in range(rng.choice((0, 1, 1, 2)) + (1 if ended else 0)):
            feedback_id += 1
            category, comment = _FEEDBACK[reason] if ended and reason and rng.random() < 0.7 \
                else _FEEDBACK[rng.choice(_REASONS)]
            when = signup + timedelta(days=rng.randrange(max(1, ((ended or last) - signup).days)))
            rating = rng.choice((1, 2, 2, 3)) if ended else rng.choice((3, 4, 4, 5))
            conn.execute("INSERT INTO support_feedback VALUES (?, ?, ?, ?, ?, ?)",
                         (feedback_id, user_id, when.isoformat(), category, rating, comment))


@tool(keywords=("tables", "schema", "columns", "database", "表结构", "字段", "数据库", "有哪些表"))
def describe_tables() -> dict:
    """Describe the analytics tables (users, subscriptions, churn_events, support_feedback)."""
    conn = connect(ensure_analytics_db(), read_only=True)
    try:
        tables = []
        for name, description in _TABLES.items():
            columns = [{"name": row["name"], "type": row["type"]}
                       for row in conn.execute(f"PRAGMA table_info({name})")]
            count = conn.execute(f"SELECT COUNT(*) FROM {name}").fetchone()[0]
            tables.append({"name": name, "description": description, "columns": columns,
                           "row_count": count})
    finally:
        conn.close()
    return {"tables": tables, "dates": "ISO text 'YYYY-MM-DD'; data runs to 2026-06-24",
            "row_limit": ROW_LIMIT}


def _authorizer(action: int, *_args: Any) -> int:
    return sqlite3.SQLITE_OK if action in _ALLOWED_ACTIONS else sqlite3.SQLITE_DENY


def _first_keyword(query: str) -> str:
    text = query.lstrip(" \t\r\n(")
    while text.startswith(("--", "/*")):
        text = text.split("\n", 1)[1] if text.startswith("--") and "\n" in text else (
            text.split("*/", 1)[1] if "*/" in text else "")
        text = text.lstrip(" \t\r\n(")
    return (text.split(None, 1) or [""])[0].upper()


@tool(keywords=("sql", "query", "select", "churn", "analysis", "count", "rate", "统计", "查询",
                "流失", "分析", "留存", "数据"))
def run_sql(query: str) -> dict:
    """Run one read-only SELECT on the analytics tables; at most 200 rows come back.

    Args:
        query: a single SQLite SELECT (or WITH ... SELECT) statement.
    """
    keyword = _first_keyword(query)
    if keyword not in {"SELECT", "WITH", "VALUES"}:
        raise ToolExecutionError(
            f"run_sql refused {keyword or 'an empty query'}: only one read-only SELECT is "
            "allowed (no INSERT, UPDATE, DELETE, ATTACH, PRAGMA or DDL)"
        )
    conn = connect(ensure_analytics_db(), read_only=True)
    deadline = time.monotonic() + _TIME_LIMIT_S
    conn.set_authorizer(_authorizer)
    conn.set_progress_handler(lambda: int(time.monotonic() > deadline), 10_000)
    try:
        cursor = conn.execute(query)
        rows = cursor.fetchmany(ROW_LIMIT + 1)
        columns = [column[0] for column in cursor.description or ()]
    except sqlite3.ProgrammingError as exc:
        raise ToolExecutionError(
            f"run_sql runs exactly one statement; split the query ({exc})"
        ) from None
    except sqlite3.DatabaseError as exc:
        raise ToolExecutionError(_explain(exc)) from None
    finally:
        conn.close()
    return {"columns": columns, "rows": [list(row) for row in rows[:ROW_LIMIT]],
            "row_count": min(len(rows), ROW_LIMIT), "truncated": len(rows) > ROW_LIMIT}


def _explain(exc: sqlite3.DatabaseError) -> str:
    text = str(exc)
    if "not authorized" in text:
        return "run_sql refused the query: only reading with SELECT is allowed"
    if "interrupted" in text:
        return f"run_sql stopped the query after {_TIME_LIMIT_S:g} s; add filters or a LIMIT"
    return f"run_sql: bad SQL ({text}); call describe_tables to see tables and columns"


def register_analytics_tools(registry: ToolRegistry) -> None:
    """Add describe_tables and run_sql to ``registry``."""
    registry.add(describe_tables)
    registry.add(run_sql)

"""The analytics toolset of seed 003: seeded churn data and a read-only SQL tool.

``run_sql`` is read-only by construction: the database is opened through a ``mode=ro`` file
URI, an authorizer allows only SELECT/READ/FUNCTION actions, one statement runs at a time.
It is bounded too: SQLite refuses any value longer than ``_MAX_VALUE_BYTES`` (so
``zeroblob(9e8)`` fails at once instead of allocating), the sorter's cache is small, a
progress handler stops runaway queries, at most ``ROW_LIMIT`` rows and ``_MAX_RESULT_CHARS``
characters come back, long cells are cut, and BLOBs come back as hex text.
"""

from __future__ import annotations

import math
import random
import re
import sqlite3
import time
from datetime import date, timedelta
from pathlib import Path
from typing import Any

from core.base.home import planboard_home
from core.base.messages import Message
from core.errors import ToolExecutionError
from core.tools.registry import tool
from demo.db import connect, ensure_database
from demo.messages import said

__all__ = [
    "ANALYTICS_TOOLS",
    "DATA_UNTIL",
    "ROW_LIMIT",
    "analytics_db_path",
    "describe_tables",
    "ensure_analytics_db",
    "run_sql",
]

ROW_LIMIT = 200
DATA_UNTIL = date(2026, 6, 24)  # the last day the seeded data holds (the pack declares it)
_TIME_LIMIT_S = 1.5
_MAX_VALUE_BYTES = 1_000_000  # SQLITE_LIMIT_LENGTH: any string, BLOB or row
_MAX_COLUMNS = 100
_CACHE_KIB = 8_192  # page cache and in-memory sorting per query, before spilling to disk
_MAX_CELL_CHARS = 2_000
_MAX_BLOB_BYTES = 256
_MAX_RESULT_CHARS = 200_000
_SURROGATE = re.compile("[\ud800-\udfff]")
_FORMAT_SPEC = re.compile(r"%[-+ 0#,!]*(?P<width>\*|\d*)(?:\.(?P<precision>\*|\d*))?"
                          r"(?:ll|l)?(?P<kind>[a-zA-Z%])")
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
    first, last = date(2025, 1, 1), DATA_UNTIL
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


@tool(read_only=True,
      keywords=("tables", "schema", "columns", "database", "表结构", "字段", "数据库", "有哪些表"))
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
    return {"tables": tables,
            "dates": f"ISO text 'YYYY-MM-DD'; data runs to {DATA_UNTIL.isoformat()}",
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


@tool(read_only=True,
      keywords=("sql", "query", "select", "churn", "analysis", "count", "rate", "统计", "查询",
                "流失", "分析", "留存", "数据"))
def run_sql(query: str) -> dict:
    """Run one read-only SELECT on the analytics tables; at most 200 rows come back.

    The tables are listed in the query's description: in this summary, which the compact
    prompt shows, they made a 1.5B model stop choosing this tool for a churn count.

    Args:
        query: a single SQLite SELECT (or WITH ... SELECT) statement, for example
            "SELECT reason, COUNT(*) AS churned FROM churn_events GROUP BY reason".
            The tables are users(user_id, signup_date, plan, country, channel),
            subscriptions(subscription_id, user_id, plan, monthly_price, started_at,
            ended_at, status), churn_events(event_id, user_id, plan, churned_at, reason),
            support_feedback(feedback_id, user_id, created_at, category, rating, comment);
            dates are 'YYYY-MM-DD' text.
    """
    keyword = _first_keyword(query)
    if keyword not in {"SELECT", "WITH", "VALUES"}:
        raise ToolExecutionError(said("sql.refused", keyword=keyword or said("sql.empty_query")))
    conn, formatter = _bounded_connection()
    try:
        cursor = conn.execute(_SURROGATE.sub("\ufffd", query))  # SQLite takes only UTF-8
        columns = [column[0] for column in cursor.description or ()]
        return _result(columns, cursor)
    except sqlite3.ProgrammingError as exc:
        raise ToolExecutionError(said("sql.one_statement", error=str(exc))) from None
    except (sqlite3.DatabaseError, MemoryError, OverflowError) as exc:
        raise ToolExecutionError(_explain(exc)) from None
    finally:
        conn.close()
        formatter.close()


def _bounded_connection() -> tuple[sqlite3.Connection, sqlite3.Connection]:
    """A read-only connection with length, column, cache, format and time limits set.

    The second connection (in memory) runs the real ``printf``/``format`` after the
    checked stand-ins registered here have looked at the format: SQLite 3.40 spends
    seconds in ``printf('%.*c', 900000000, 'x')`` where no progress handler can stop it.
    """
    conn = connect(ensure_analytics_db(), read_only=True)
    formatter = sqlite3.connect(":memory:")
    for target in (conn, formatter):
        target.setlimit(sqlite3.SQLITE_LIMIT_LENGTH, _MAX_VALUE_BYTES)
    conn.setlimit(sqlite3.SQLITE_LIMIT_COLUMN, _MAX_COLUMNS)
    # text that is not valid UTF-8 (char(55296), CAST(x'ff' AS TEXT)) is shown, not fatal
    conn.text_factory = lambda raw: raw.decode("utf-8", "replace")
    conn.execute(f"PRAGMA cache_size=-{_CACHE_KIB}")
    for name in ("printf", "format"):
        conn.create_function(name, -1, _checked_format(formatter, name))
    conn.set_authorizer(_authorizer)
    deadline = time.monotonic() + _TIME_LIMIT_S
    conn.set_progress_handler(lambda: int(time.monotonic() > deadline), 10_000)
    return conn, formatter


def _checked_format(formatter: sqlite3.Connection, name: str) -> Any:
    def call(*args: Any) -> Any:
        if args and isinstance(args[0], str):
            _check_format_sizes(args[0], args[1:])
        marks = ", ".join("?" * len(args))
        return formatter.execute(f"SELECT {name}({marks})", args).fetchone()[0]

    return call


def _check_format_sizes(pattern: str, args: tuple[Any, ...]) -> None:
    """Refuse a width or precision past ``_MAX_VALUE_BYTES`` (``*`` takes it from ``args``)."""
    position = 0
    for spec in _FORMAT_SPEC.finditer(pattern):
        for size in (spec["width"], spec["precision"]):
            if size == "*":
                size, position = args[position] if position < len(args) else 0, position + 1
            if abs(_as_number(size)) > _MAX_VALUE_BYTES:
                raise ValueError(f"format width or precision {size} is too large")
        position += spec["kind"] != "%"


def _as_number(value: Any) -> float:
    """A printf size as SQLite reads it: numbers, numeric text, anything else 0."""
    try:
        return float(value or 0)
    except (TypeError, ValueError, OverflowError):
        return 0.0


def _result(columns: list[str], cursor: sqlite3.Cursor) -> dict:
    """The rows as JSON-safe lists within the row and size budgets, with notes on any cut.

    Rows are read one at a time and cut at once, so a query of many huge values never
    holds more than one of them.
    """
    kept: list[list[Any]] = []
    notes: list[str] = []
    size = 0
    for row in cursor:
        if len(kept) == ROW_LIMIT:
            notes.append(f"only the first {ROW_LIMIT} rows are shown; aggregate or add a LIMIT")
            break
        cells = [_cell(value, notes) for value in row]
        size += sum(len(str(cell)) for cell in cells)
        if size > _MAX_RESULT_CHARS:
            notes.append(f"only the first {len(kept)} rows fit in {_MAX_RESULT_CHARS:,} "
                         "characters; select fewer columns or add a LIMIT")
            break
        kept.append(cells)
    result: dict[str, Any] = {"columns": columns, "rows": kept, "row_count": len(kept),
                              "truncated": bool(notes)}
    if notes:
        result["note"] = "; ".join(dict.fromkeys(notes))
    return result


def _cell(value: Any, notes: list[str]) -> Any:
    """One value as JSON-safe data: BLOBs as X'hex' text, long text cut, inf as text."""
    if isinstance(value, bytes):
        if len(value) > _MAX_BLOB_BYTES:
            notes.append(f"BLOBs are cut to their first {_MAX_BLOB_BYTES} bytes")
            return f"X'{value[:_MAX_BLOB_BYTES].hex().upper()}…' ({len(value)} bytes)"
        return f"X'{value.hex().upper()}'"
    if isinstance(value, str) and len(value) > _MAX_CELL_CHARS:
        notes.append(f"text cells are cut to {_MAX_CELL_CHARS:,} characters")
        return value[: _MAX_CELL_CHARS - 1] + "…"
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    return value


def _explain(exc: Exception) -> Message:
    text = str(exc)
    if isinstance(exc, MemoryError) or "too big" in text or "out of memory" in text:
        return said("sql.too_big", limit=f"{_MAX_VALUE_BYTES:,}")
    if "user-defined function raised exception" in text:  # only the printf/format checks
        return said("sql.printf", limit=f"{_MAX_VALUE_BYTES:,}")
    if "too many columns" in text:
        return said("sql.too_many_columns", limit=_MAX_COLUMNS)
    if "not authorized" in text:
        return said("sql.not_read_only")
    if "interrupted" in text:
        return said("sql.timed_out", seconds=f"{_TIME_LIMIT_S:g}")
    return said("sql.bad", error=text)


ANALYTICS_TOOLS = (describe_tables, run_sql)

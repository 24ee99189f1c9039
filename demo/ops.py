"""The operations toolset of seed 004: a simulated fleet of 15 micro-services in SQLite.

Metrics are fixed seed data, so health checks are deterministic. Every tool that takes a
service also takes a list of services (or "all"), and check_health always returns an
``unhealthy`` list, so one fixed plan covers the fleet: list_services → check_health over
``{{s1.names}}`` → diagnose and suggest_scale over ``{{s2.unhealthy}}``.
"""

from __future__ import annotations

import json
import math
import sqlite3
from pathlib import Path
from typing import Any

from core.base.home import planboard_home
from core.errors import ToolExecutionError
from core.tools.registry import ToolHints, tool
from demo.db import connect, ensure_database
from demo.messages import said

__all__ = [
    "OPS_TOOLS",
    "check_health",
    "diagnose",
    "ensure_ops_db",
    "list_services",
    "ops_db_path",
    "suggest_scale",
]

# name, team, replicas, ready, cpu %, memory %, p99 ms, error %, requests/s, last deploy
_FLEET: list[tuple[Any, ...]] = [
    ("api-gateway", "platform", 4, 4, 48, 55, 120, 0.2, 2400, "2026-06-20"),
    ("auth-service", "platform", 3, 3, 35, 40, 80, 0.1, 900, "2026-06-10"),
    ("user-service", "account", 3, 3, 42, 50, 150, 0.3, 700, "2026-06-18"),
    ("order-service", "trade", 4, 4, 93, 78, 1450, 1.2, 1100, "2026-06-23"),
    ("payment-service", "trade", 3, 3, 61, 66, 980, 7.8, 420, "2026-06-23"),
    ("inventory-service", "supply", 3, 3, 38, 45, 140, 0.4, 600, "2026-06-15"),
    ("shipping-service", "supply", 2, 2, 30, 41, 160, 0.2, 260, "2026-06-12"),
    ("cart-service", "trade", 3, 3, 52, 58, 130, 0.3, 980, "2026-06-19"),
    ("search-service", "discovery", 3, 0, 0, 0, 0, 100.0, 0, "2026-06-24"),
    ("recommendation-service", "discovery", 2, 2, 71, 94, 640, 0.9, 350, "2026-06-08"),
    ("review-service", "discovery", 2, 2, 25, 35, 110, 0.1, 150, "2026-05-30"),
    ("coupon-service", "marketing", 2, 2, 33, 39, 95, 0.2, 210, "2026-06-05"),
    ("notification-service", "platform", 2, 2, 44, 52, 210, 0.5, 330, "2026-06-17"),
    ("report-service", "data", 1, 1, 58, 61, 820, 0.6, 40, "2026-06-01"),
    ("config-service", "platform", 2, 2, 12, 30, 40, 0.0, 120, "2026-04-28"),
]
_LOGS = {
    "order-service": "GC pauses up to 900 ms; thread pool saturated on POST /orders",
    "payment-service": "timeouts calling third-party gateway (pay-channel) after 2026-06-23 deploy",
    "search-service": "all 3 pods in CrashLoopBackOff: OOMKilled after index rebuild",
    "recommendation-service": "heap usage climbing steadily since 2026-06-08 deploy",
    "report-service": "slow aggregate queries: the daily report job overlaps peak traffic",
}


def ops_db_path() -> Path:
    """Path of the operations database under the PlanBoard home."""
    return planboard_home() / "ops.db"


def _seed(conn: sqlite3.Connection) -> None:
    conn.executescript(
        "CREATE TABLE services (name TEXT PRIMARY KEY, team TEXT, replicas INTEGER,"
        " ready_replicas INTEGER, cpu_pct REAL, memory_pct REAL, p99_latency_ms REAL,"
        " error_rate_pct REAL, requests_per_s REAL, last_deploy TEXT, recent_log TEXT);"
    )
    conn.executemany(
        "INSERT INTO services VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        [(*row, _LOGS.get(row[0], "no errors in the last hour")) for row in _FLEET],
    )


def ensure_ops_db() -> Path:
    """Create and seed the operations database on first use; return its path."""
    return ensure_database(ops_db_path(), _seed)


def _rows() -> dict[str, dict[str, Any]]:
    conn = connect(ensure_ops_db())
    try:
        return {row["name"]: dict(row) for row in conn.execute("SELECT * FROM services")}
    finally:
        conn.close()


def _status(row: dict[str, Any]) -> str:
    if row["ready_replicas"] == 0 or row["error_rate_pct"] >= 50:
        return "down"
    if (row["cpu_pct"] > 85 or row["memory_pct"] > 90 or row["p99_latency_ms"] > 800
            or row["error_rate_pct"] >= 5):
        return "degraded"
    return "healthy"


def _names(service: str | list[str], fleet: dict[str, dict[str, Any]]) -> list[str]:
    """Resolve a service name, a list of names, "all", or a JSON/comma list to known names."""
    if isinstance(service, str):
        text = service.strip()
        if text.startswith("["):
            try:
                service = json.loads(text)
            except ValueError:
                service = text.strip("[]").replace('"', "").replace("'", "").split(",")
        elif text.lower() in {"all", "*", "全部", "所有"}:
            return sorted(fleet)
        else:
            service = text.split(",") if text else []
    names = []
    for raw in service:
        name = str(raw).strip().lower()
        if not name:
            continue
        if name not in fleet and f"{name}-service" in fleet:
            name = f"{name}-service"
        if name not in fleet:
            raise ToolExecutionError(said("ops.unknown_service", name=repr(raw),
                                         known=", ".join(sorted(fleet))))
        names.append(name)
    return list(dict.fromkeys(names))


def _health(row: dict[str, Any]) -> dict[str, Any]:
    return {
        "service": row["name"], "status": _status(row),
        "replicas": row["replicas"], "ready_replicas": row["ready_replicas"],
        "cpu_pct": row["cpu_pct"], "memory_pct": row["memory_pct"],
        "p99_latency_ms": row["p99_latency_ms"], "error_rate_pct": row["error_rate_pct"],
    }


@tool(read_only=True,
      keywords=("services", "list", "fleet", "microservices", "服务列表", "所有服务", "微服务",
                "哪些服务"))
def list_services() -> dict:
    """List every micro-service in the fleet with its team and replica count."""
    fleet = _rows()
    services = [
        {"name": name, "team": row["team"], "replicas": row["replicas"]}
        for name, row in sorted(fleet.items())
    ]
    return {"services": services, "names": [s["name"] for s in services], "count": len(services)}


@tool(read_only=True,
      keywords=("health", "check", "status", "healthy", "down", "健康", "检查", "巡检", "状态",
                "异常"),
      hints=ToolHints(field_labels={"异常服务": "unhealthy"}))
def check_health(service: str | list[str] = "all") -> dict:
    """Check the health (healthy | degraded | down) and key metrics of one service, a list, or all.

    Args:
        service: a service name such as "example-service", a list of names, or "all".
    """
    fleet = _rows()
    names = _names(service, fleet)
    checks = [_health(fleet[name]) for name in names]
    unhealthy = [c["service"] for c in checks if c["status"] != "healthy"]
    result: dict[str, Any] = {
        "checked": len(checks),
        "healthy": [c["service"] for c in checks if c["status"] == "healthy"],
        "unhealthy": unhealthy,
        "down": [c["service"] for c in checks if c["status"] == "down"],
        "degraded": [c["service"] for c in checks if c["status"] == "degraded"],
        "services": checks,
    }
    if len(checks) == 1:
        result = {**checks[0], **result}
    return result


def _findings(row: dict[str, Any]) -> tuple[list[str], str, list[str]]:
    findings, actions = [], []
    if row["ready_replicas"] == 0:
        findings.append(f"0 of {row['replicas']} replicas are ready")
        actions.append("restore the minimum replicas, then fix the crash (see recent log)")
    if row["error_rate_pct"] >= 5 and row["ready_replicas"]:
        findings.append(f"error rate {row['error_rate_pct']}% (threshold 5%)")
        actions.append(f"check the {row['last_deploy']} deploy and downstream dependencies")
    if row["cpu_pct"] > 85:
        findings.append(f"CPU at {row['cpu_pct']}% (threshold 85%)")
        actions.append("scale out and profile the hottest endpoint")
    if row["memory_pct"] > 90:
        findings.append(f"memory at {row['memory_pct']}% (threshold 90%)")
        actions.append("look for a memory leak; raise the limit temporarily")
    if row["p99_latency_ms"] > 800:
        findings.append(f"p99 latency {row['p99_latency_ms']:g} ms (threshold 800 ms)")
    cause = row["recent_log"] if findings else "no problem found"
    return findings, cause, actions


def _diagnosis(row: dict[str, Any]) -> dict[str, Any]:
    findings, cause, actions = _findings(row)
    return {
        "service": row["name"], "status": _status(row), "findings": findings,
        "likely_cause": cause, "recommended_actions": actions,
        "last_deploy": row["last_deploy"],
    }


@tool(read_only=True,
      keywords=("diagnose", "diagnosis", "root cause", "why", "report", "诊断", "原因", "排查",
                "报告"))
def diagnose(service: str | list[str]) -> dict:
    """Diagnose one service or a list: findings against thresholds, likely cause, next actions.

    Args:
        service: a service name, a list of names (for example the unhealthy ones), or "all".
    """
    return _per_service(service, _diagnosis, "diagnoses")


def _scale(row: dict[str, Any]) -> dict[str, Any]:
    current, status = row["replicas"], _status(row)
    if row["ready_replicas"] == 0:
        target, reason = current, "fix the crash first; scaling a crashing service adds nothing"
    elif row["error_rate_pct"] >= 5:
        target, reason = current, "errors come from a dependency, not load: keep replicas"
    elif row["cpu_pct"] > 85 or row["p99_latency_ms"] > 800:
        target = max(current + 1, math.ceil(current * 1.5))
        reason = f"CPU {row['cpu_pct']}% / p99 {row['p99_latency_ms']:g} ms: scale out ×1.5"
    elif row["memory_pct"] > 90:
        target, reason = current + 1, "memory pressure: add one replica while the leak is fixed"
    elif row["cpu_pct"] < 20 and current > 1:
        target, reason = current - 1, f"CPU only {row['cpu_pct']}%: one replica can go"
    else:
        target, reason = current, "load is within limits"
    return {"service": row["name"], "status": status, "current_replicas": current,
            "suggested_replicas": target, "change": target - current, "reason": reason}


@tool(read_only=True,
      keywords=("scale", "scaling", "capacity", "replicas", "扩容", "缩容", "容量", "副本",
                "扩缩容"))
def suggest_scale(service: str | list[str]) -> dict:
    """Suggest a replica count for one service or a list, from CPU, latency, memory and errors.

    Args:
        service: a service name, a list of names (for example the unhealthy ones), or "all".
    """
    return _per_service(service, _scale, "suggestions")


def _per_service(service: str | list[str], report: Any, key: str) -> dict[str, Any]:
    """``report`` for each named service under ``key``; one service's fields also on top."""
    fleet = _rows()
    reports = [report(fleet[name]) for name in _names(service, fleet)]
    result: dict[str, Any] = {key: reports, "count": len(reports)}
    return {**reports[0], **result} if len(reports) == 1 else result


OPS_TOOLS = (list_services, check_health, diagnose, suggest_scale)

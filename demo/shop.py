"""The shop toolset of seed 000: orders, logistics tracks and refunds in a seeded SQLite file.

The return window is measured against a fixed shop date, ``DEMO_TODAY`` (2026-06-24), not the
wall clock: the seeded orders were signed for on fixed dates, so order 88231 stays inside its
7-day window and the demo gives the same answers whatever day it is run.
"""

from __future__ import annotations

import random
import sqlite3
from datetime import date, datetime, timedelta
from pathlib import Path
from typing import Any

from core.base.home import planboard_home
from core.base.messages import Both
from core.errors import ToolExecutionError
from core.tools.registry import ToolHints, current_idempotency_key, tool
from demo.db import connect, ensure_database, transaction
from demo.messages import said

__all__ = [
    "DEMO_TODAY",
    "ORDER_STATUSES",
    "RETURN_WINDOW_DAYS",
    "SHOP_TOOLS",
    "apply_refund",
    "ensure_shop_db",
    "query_logistics",
    "query_order",
    "shop_db_path",
]

DEMO_TODAY = date(2026, 6, 24)
RETURN_WINDOW_DAYS = 7
_DELIVERY_DAYS = 4  # the carriers' promise: days from placing an order to its delivery
ORDER_STATUSES = (
    "pending", "shipped", "in_transit", "delivered", "refunding", "refunded", "cancelled",
)
STATUS_ZH = {
    "pending": "待发货", "shipped": "已发货", "in_transit": "运输中", "delivered": "已签收",
    "refunding": "退款中", "refunded": "已退款", "cancelled": "已取消",
}
ACTIVE_REFUND = ("processing", "completed")
# what a person calls the shop's result fields, for success criteria written in Chinese
_LABELS = {"订单号": "order_id", "运单号": "tracking_no", "物流单号": "tracking_no"}
_SCHEMA = """
CREATE TABLE orders (
    order_id TEXT PRIMARY KEY, product TEXT NOT NULL, product_en TEXT NOT NULL,
    price REAL NOT NULL, status TEXT NOT NULL, tracking_no TEXT, carrier TEXT,
    ordered_at TEXT NOT NULL, signed_at TEXT
);
CREATE TABLE logistics_events (
    tracking_no TEXT NOT NULL, seq INTEGER NOT NULL, time TEXT NOT NULL,
    location TEXT NOT NULL, status TEXT NOT NULL, description TEXT NOT NULL,
    PRIMARY KEY (tracking_no, seq)
);
CREATE TABLE refunds (
    refund_id TEXT PRIMARY KEY, order_id TEXT NOT NULL REFERENCES orders(order_id),
    amount REAL NOT NULL, reason TEXT NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('processing', 'completed', 'rejected', 'cancelled')),
    idempotency_key TEXT UNIQUE, created_at TEXT NOT NULL
);
CREATE UNIQUE INDEX refunds_one_active ON refunds(order_id)
    WHERE status IN ('processing', 'completed');
"""
_CARRIERS = {"SF": "顺丰速运", "YT": "圆通速递", "ZT": "中通快递", "JD": "京东物流"}
_PRODUCTS = [
    ("比特 S10 Lite 扫地机", "Bit S10 Lite robot vacuum", 1599),
    ("比特 X20 洗地机", "Bit X20 wet-dry vacuum", 2499),
    ("比特 AirPure 空气净化器", "Bit AirPure air purifier", 1299),
    ("比特 Buds 2 蓝牙耳机", "Bit Buds 2 earbuds", 399),
    ("比特 Watch 5 智能手表", "Bit Watch 5 smartwatch", 899),
    ("比特 M1 电饭煲", "Bit M1 rice cooker", 459),
    ("比特 K3 电热水壶", "Bit K3 kettle", 129),
    ("比特 S10 Pro 扫地机", "Bit S10 Pro robot vacuum", 1999),
    ("比特 尘盒滤网套装", "Bit dust-bin filter kit", 89),
]
_CITIES = ["深圳", "广州", "长沙", "武汉", "郑州", "北京"]
_CITY_EN = {"深圳": "Shenzhen", "广州": "Guangzhou", "长沙": "Changsha", "武汉": "Wuhan",
            "郑州": "Zhengzhou", "北京": "Beijing"}  # the English half of each scan


def shop_db_path() -> Path:
    """Path of the shop database under the PlanBoard home."""
    return planboard_home() / "shop.db"


def ensure_shop_db() -> Path:
    """Create and seed the shop database on first use; return its path."""
    return ensure_database(shop_db_path(), _seed)


def _named_orders() -> list[tuple[Any, ...]]:
    return [
        ("88231", "比特 S10 Pro 扫地机", "Bit S10 Pro robot vacuum", 1999, "delivered",
         "SF1234567890", "2026-06-18 10:12", "2026-06-22 15:30"),
        ("70412", "比特 AirPure 空气净化器", "Bit AirPure air purifier", 1299, "in_transit",
         "YT9876543210", "2026-06-21 20:45", None),
        ("66001", "比特 Buds 2 蓝牙耳机", "Bit Buds 2 earbuds", 399, "refunding",
         "SF1122334455", "2026-06-14 09:03", "2026-06-17 11:20"),
    ]


def _generated_orders() -> list[tuple[Any, ...]]:
    rng = random.Random(0)
    statuses = [
        "pending", "pending", "shipped", "shipped", "in_transit", "in_transit", "delivered",
        "delivered", "delivered", "delivered", "delivered", "delivered", "refunded",
        "refunded", "cancelled", "cancelled", "delivered", "in_transit", "shipped", "pending",
    ]
    orders = []
    for index, status in enumerate(statuses):
        order_id = str(50000 + index * 1371 + rng.randint(0, 900))
        product, product_en, price = rng.choice(_PRODUCTS)
        ordered = datetime(2026, 6, 23, 9, 0) - timedelta(days=2 + index * 2, minutes=index * 37)
        prefix = rng.choice(sorted(_CARRIERS))
        tracking = None if status in {"pending", "cancelled"} else (
            f"{prefix}{rng.randint(10**9, 10**10 - 1)}"
        )
        signed = None
        if status in {"delivered", "refunded"}:
            signed = (ordered + timedelta(days=3, hours=5)).strftime("%Y-%m-%d %H:%M")
        orders.append((order_id, product, product_en, price, status, tracking,
                       ordered.strftime("%Y-%m-%d %H:%M"), signed))
    return orders


def _track(order: tuple[Any, ...]) -> list[tuple[Any, ...]]:
    order_id, _p, _pe, _price, status, tracking, ordered_at, signed_at = order
    start = datetime.strptime(ordered_at, "%Y-%m-%d %H:%M") + timedelta(hours=6)
    seed_cities = _CITIES[int(order_id) % 3:][:3]
    first = seed_cities[0]
    events = [(start, first, "picked_up",
               f"快件已在【{first}】揽收 / picked up in {_CITY_EN[first]}")]
    hops = 1 if status == "shipped" else 3
    for hop in range(1, hops):
        city = seed_cities[min(hop, len(seed_cities) - 1)]
        events.append((start + timedelta(hours=14 * hop), city, "in_transit",
                       f"快件到达【{city}转运中心】 / arrived at {_CITY_EN[city]} hub"))
    if signed_at:
        signed = datetime.strptime(signed_at, "%Y-%m-%d %H:%M")
        events.append((signed - timedelta(hours=3), "北京", "out_for_delivery",
                       "快递员正在派送 / out for delivery"))
        events.append((signed, "北京", "delivered", "已签收，签收人：本人 / delivered, signed by"
                       " recipient"))
    return [(tracking, seq, when.strftime("%Y-%m-%d %H:%M"), city, state, text)
            for seq, (when, city, state, text) in enumerate(events, start=1)]


def _seed(conn: sqlite3.Connection) -> None:
    conn.executescript(_SCHEMA)
    orders = _named_orders() + _generated_orders()
    for order in orders:
        carrier = _CARRIERS.get(order[5][:2]) if order[5] else None
        conn.execute(
            "INSERT INTO orders (order_id, product, product_en, price, status, tracking_no,"
            " carrier, ordered_at, signed_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (*order[:6], carrier, order[6], order[7]),
        )
        if order[5]:
            conn.executemany(
                "INSERT INTO logistics_events VALUES (?, ?, ?, ?, ?, ?)", _track(order)
            )
    conn.execute(
        "INSERT INTO refunds VALUES ('RF20260620001', '66001', 399, '耳机左耳无声 / left earbud"
        " silent', 'processing', NULL, '2026-06-20 10:00:00')"
    )
    for number, order in enumerate((o for o in orders if o[4] == "refunded"), start=1):
        conn.execute(
            "INSERT INTO refunds VALUES (?, ?, ?, '七天无理由退货 / 7-day return', 'completed',"
            " NULL, ?)",
            (f"RF2026060{number}00{number}", order[0], order[3], f"2026-06-0{number} 12:00:00"),
        )


def _order_row(conn: sqlite3.Connection, order_id: str) -> sqlite3.Row:
    row = conn.execute("SELECT * FROM orders WHERE order_id = ?", (order_id,)).fetchone()
    if row is None:
        recent = [r[0] for r in conn.execute(
            "SELECT order_id FROM orders ORDER BY ordered_at DESC LIMIT 6")]
        known = dict.fromkeys(["88231", "70412", "66001", *recent])  # each id once
        raise ToolExecutionError(said("shop.order_unknown", order_id=repr(order_id),
                                     known=", ".join(known)))
    return row


def _active_refund(conn: sqlite3.Connection, order_id: str) -> sqlite3.Row | None:
    return conn.execute(
        "SELECT * FROM refunds WHERE order_id = ? AND status IN (?, ?)",
        (order_id, *ACTIVE_REFUND),
    ).fetchone()


_TEXT = {"type": "string"}
_MAYBE_TEXT = {"type": ["string", "null"]}
# the shapes of the shop's results, so that a rehearsal can check what a plan reads of them
ORDER_RESULT = {
    "type": "object",
    "properties": {
        "order_id": _TEXT, "product": _TEXT, "product_en": _TEXT, "price": {"type": "number"},
        "currency": {"type": "string", "const": "CNY"},
        "status": {"type": "string", "enum": list(STATUS_ZH)}, "status_zh": _TEXT,
        "tracking_no": _MAYBE_TEXT, "carrier": _MAYBE_TEXT, "ordered_at": _TEXT,
        "signed_at": _MAYBE_TEXT, "expected_delivery": _MAYBE_TEXT,
        "return_deadline": _MAYBE_TEXT, "refundable": {"type": "boolean"},
        "refund": {"type": ["object", "null"], "properties": {
            "refund_id": _TEXT, "status": _TEXT, "amount": {"type": "number"}}},
        "summary": _TEXT,
    },
}
_SCAN = {"type": "object", "properties": {
    "time": _TEXT, "location": _TEXT, "status": _TEXT, "description": _TEXT}}
LOGISTICS_RESULT = {
    "type": "object",
    "properties": {
        "tracking_no": _TEXT, "carrier": _MAYBE_TEXT, "order_id": _TEXT,
        "latest_status": _TEXT, "latest_event": {**_SCAN, "type": ["object", "null"]},
        "delivered": {"type": "boolean"}, "expected_delivery": _MAYBE_TEXT,
        "events": {"type": "array", "items": _SCAN},
    },
}
REFUND_RESULT = {
    "type": "object",
    "properties": {
        "refund_id": _TEXT, "order_id": _TEXT, "amount": {"type": "number"}, "status": _TEXT,
        "created": {"type": "boolean"}, "existing": {"type": "boolean"},
        "expected_days": _TEXT, "message": _TEXT, "message_zh": _TEXT,
    },
}


def _return_deadline(signed_at: str | None) -> date | None:
    if not signed_at:
        return None
    return datetime.strptime(signed_at, "%Y-%m-%d %H:%M").date() + timedelta(
        days=RETURN_WINDOW_DAYS
    )


def _clean_id(value: str) -> str:
    return str(value).strip().lstrip("#").strip()


@tool(read_only=True,
      keywords=("order", "status", "arrived", "delivered", "订单", "查订单", "签收", "到了",
                "到货", "状态", "购买"),
      hints=ToolHints(field_labels=_LABELS), output_schema=ORDER_RESULT)
def query_order(order_id: str) -> dict:
    """Look up an order: product, price, status, tracking number, sign-off time or expected
    delivery date, and any refund.

    Args:
        order_id: the order number, for example "10001".
    """
    order_id = _clean_id(order_id)
    conn = connect(ensure_shop_db())
    try:
        row = _order_row(conn, order_id)
        refund = _active_refund(conn, order_id)
    finally:
        conn.close()
    deadline = _return_deadline(row["signed_at"])
    refundable = row["status"] == "delivered" and deadline is not None and deadline >= DEMO_TODAY
    status_zh = STATUS_ZH[row["status"]]
    expected = _expected_delivery(row["status"], row["ordered_at"])
    return {
        "order_id": row["order_id"], "product": row["product"], "product_en": row["product_en"],
        "price": row["price"], "currency": "CNY", "status": row["status"],
        "status_zh": status_zh, "tracking_no": row["tracking_no"], "carrier": row["carrier"],
        "ordered_at": row["ordered_at"], "signed_at": row["signed_at"],
        "expected_delivery": expected,
        "return_deadline": deadline.isoformat() if deadline else None,
        "refundable": refundable,
        "refund": _refund_brief(refund) if refund else None,
        "summary": f"订单 {order_id}：{row['product']}（¥{row['price']:g}），{status_zh}"
                   + (f"，预计 {expected} 送达" if expected else "")
                   + f" / order {order_id}: {row['product_en']}, {row['status'].replace('_', ' ')}"
                   + (f", expected on {expected}" if expected else ""),
    }


def _expected_delivery(status: str, ordered_at: str) -> str | None:
    """The carrier's estimate for an order not yet delivered (None once it arrived or ended)."""
    if status not in {"pending", "shipped", "in_transit"}:
        return None
    ordered = datetime.strptime(ordered_at, "%Y-%m-%d %H:%M")
    return (ordered + timedelta(days=_DELIVERY_DAYS)).date().isoformat()


def _refund_brief(row: sqlite3.Row) -> dict:
    return {"refund_id": row["refund_id"], "status": row["status"], "amount": row["amount"]}


@tool(read_only=True,
      keywords=("logistics", "tracking", "shipment", "courier", "where is", "物流", "快递",
                "运单", "轨迹", "配送"),
      hints=ToolHints(field_labels=_LABELS), output_schema=LOGISTICS_RESULT)
def query_logistics(tracking_no: str) -> dict:
    """Track a parcel by tracking number: carrier, every scan event, the latest status and
    the expected delivery date.

    Args:
        tracking_no: the tracking number from the order, for example "SF0000000000".
    """
    tracking_no = _clean_id(tracking_no).upper()
    conn = connect(ensure_shop_db())
    try:
        order = conn.execute(
            "SELECT order_id, carrier, status, ordered_at FROM orders WHERE tracking_no = ?",
            (tracking_no,)).fetchone()
        events = conn.execute(
            "SELECT time, location, status, description FROM logistics_events "
            "WHERE tracking_no = ? ORDER BY seq", (tracking_no,)
        ).fetchall()
    finally:
        conn.close()
    if order is None:
        raise ToolExecutionError(said("shop.tracking_unknown", tracking_no=repr(tracking_no)))
    latest = events[-1] if events else None
    return {
        "tracking_no": tracking_no, "carrier": order["carrier"], "order_id": order["order_id"],
        "latest_status": latest["status"] if latest else "no_events",
        "latest_event": dict(latest) if latest else None,
        "delivered": bool(latest and latest["status"] == "delivered"),
        "expected_delivery": _expected_delivery(order["status"], order["ordered_at"]),
        "events": [dict(e) for e in events],
    }


@tool(idempotent=True,
      keywords=("refund", "return", "send back", "money back", "退款", "退货",
                "退掉", "退了", "申请退"),
      # an order that is refunding or refunded, or holds a refund that is processing or
      # completed, is already refunded: a second call returns the same refund
      hints=ToolHints(id_fields=("refund_id",),
                      in_progress=("refunding", "refunded", *ACTIVE_REFUND),
                      field_labels={**_LABELS, "退款单号": "refund_id", "金额": "amount"}),
      output_schema=REFUND_RESULT)
def apply_refund(order_id: str, reason: str = "customer request") -> dict:
    """Request a refund for a delivered order within its 7-day return window (idempotent).

    An existing refund for the order is returned instead of creating a second one.

    Args:
        order_id: the order number to refund, for example "10001".
        reason: why the customer wants the refund.
    """
    order_id = _clean_id(order_id)
    key = current_idempotency_key()
    with transaction(ensure_shop_db()) as conn:
        if key:
            row = conn.execute(
                "SELECT * FROM refunds WHERE idempotency_key = ?", (key,)
            ).fetchone()
            if row is not None:
                return _refund_result(row, created=False)
        order = _order_row(conn, order_id)
        existing = _active_refund(conn, order_id)
        if existing is not None:
            return _refund_result(existing, created=False)
        _check_refundable(order)
        refund_id = _next_refund_id(conn)
        conn.execute(
            "INSERT INTO refunds VALUES (?, ?, ?, ?, 'processing', ?, ?)",
            (refund_id, order_id, order["price"], reason.strip() or "customer request", key,
             datetime.now().isoformat(timespec="seconds")),
        )
        conn.execute("UPDATE orders SET status = 'refunding' WHERE order_id = ?", (order_id,))
        row = conn.execute("SELECT * FROM refunds WHERE refund_id = ?", (refund_id,)).fetchone()
    return _refund_result(row, created=True)


def _check_refundable(order: sqlite3.Row) -> None:
    status = order["status"]
    if status != "delivered":
        worded = Both(en=f"{status.replace('_', ' ')} ({STATUS_ZH[status]})", zh=STATUS_ZH[status])
        raise ToolExecutionError(said("shop.refund_not_delivered", order_id=order["order_id"],
                                     status=worded))
    deadline = _return_deadline(order["signed_at"])
    if deadline is None or deadline < DEMO_TODAY:
        raise ToolExecutionError(said("shop.refund_window_passed", order_id=order["order_id"],
                                     days=RETURN_WINDOW_DAYS, deadline=deadline))


def _next_refund_id(conn: sqlite3.Connection) -> str:
    prefix = "RF" + DEMO_TODAY.strftime("%Y%m%d")
    count = conn.execute(
        "SELECT COUNT(*) FROM refunds WHERE refund_id LIKE ?", (prefix + "%",)
    ).fetchone()[0]
    return f"{prefix}{count + 1:03d}"


def _refund_result(row: sqlite3.Row, *, created: bool) -> dict:
    refund_id, amount = row["refund_id"], row["amount"]
    if created:
        message = f"Refund {refund_id} submitted: ¥{amount:g} back to the original payment in 1-3 "
        message += "business days"
        message_zh = f"退款申请已提交，退款单号 {refund_id}，¥{amount:g} 预计 1-3 个工作日原路退回"
    else:
        message = f"A refund already exists for this order: {refund_id} ({row['status']}); no "
        message += "second refund was created"
        message_zh = f"该订单已有退款 {refund_id}（{row['status']}），未重复申请"
    return {
        "refund_id": refund_id, "order_id": row["order_id"], "amount": amount,
        "status": row["status"], "created": created, "existing": not created,
        "expected_days": "1-3", "message": message, "message_zh": message_zh,
    }


SHOP_TOOLS = (query_order, query_logistics, apply_refund)

"""What the demo shop recorded (the refunds of an order), and a refunder racing others in a
spawned process (which imports this light module to find it, not a test module)."""

from __future__ import annotations

import sqlite3
from typing import Any

from core.tools.toolsets import default_registry
from demo.shop import ensure_shop_db


def refunds_for(order_id: str) -> list[tuple]:
    with sqlite3.connect(ensure_shop_db()) as conn:
        return conn.execute(
            "SELECT refund_id FROM refunds WHERE order_id = ?", (order_id,)
        ).fetchall()


def refund_in_a_process(barrier: Any, queue: Any) -> None:
    """Refund order 88231 through the tool registry once every racer is at ``barrier``; put
    the refund's id on ``queue``."""
    barrier.wait()
    registry = default_registry({})
    queue.put(registry.call("apply_refund", {"order_id": "88231", "reason": "race"})["refund_id"])

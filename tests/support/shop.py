"""What the demo shop recorded: the refunds of an order."""

from __future__ import annotations

import sqlite3

from demo.shop import ensure_shop_db


def refunds_for(order_id: str) -> list[tuple]:
    with sqlite3.connect(ensure_shop_db()) as conn:
        return conn.execute(
            "SELECT refund_id FROM refunds WHERE order_id = ?", (order_id,)
        ).fetchall()

"""The shop toolset: seeded orders, logistics, and idempotent, race-safe refunds."""

from __future__ import annotations

import multiprocessing
import sqlite3

import pytest

from core.base.home import planboard_home
from core.errors import ToolExecutionError
from demo.data import ensure_demo_data, reset_demo_data
from demo.shop import (
    DEMO_TODAY,
    apply_refund,
    query_order,
    shop_db_path,
)
from tests.support.shop import refund_in_a_process
from tests.support.waiting import DEFAULT_TIMEOUT_S, results_of

RACERS = 4  # refunders at once: more than the 2 cores of CI, so they do overlap


def test_home_follows_planboard_home(isolated_environment):
    assert planboard_home() == isolated_environment
    assert isolated_environment.is_dir()


def test_home_defaults_to_dot_planboard(monkeypatch, tmp_path):
    monkeypatch.delenv("PLANBOARD_HOME")
    assert planboard_home() == tmp_path / ".planboard"


def test_seeded_orders(registry):
    order = registry.call("query_order", {"order_id": "88231"})
    assert order["product"] == "比特 S10 Pro 扫地机"
    assert order["price"] == 1999
    assert order["status"] == "delivered"
    assert order["tracking_no"] == "SF1234567890"
    assert order["refundable"] is True
    assert order["refund"] is None
    assert registry.call("query_order", {"order_id": "70412"})["status"] == "in_transit"
    refunding = registry.call("query_order", {"order_id": "66001"})
    assert refunding["status"] == "refunding"
    assert refunding["refund"]["refund_id"] == "RF20260620001"
    conn = sqlite3.connect(shop_db_path())
    assert conn.execute("SELECT COUNT(*) FROM orders").fetchone()[0] >= 20
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    conn.close()


def test_query_order_schema_is_pinned():
    assert query_order.parameters == {
        "additionalProperties": False,
        "properties": {"order_id": {
            "description": 'the order number, for example "10001".', "type": "string"}},
        "required": ["order_id"],
        "type": "object",
    }
    assert apply_refund.side_effect is True


def test_unknown_order_names_known_ones(registry):
    with pytest.raises(ToolExecutionError, match="88231"):
        registry.call("query_order", {"order_id": "12345"})


def test_logistics_track(registry):
    track = registry.call("query_logistics", {"tracking_no": "SF1234567890"})
    assert track["carrier"] == "顺丰速运"
    assert track["delivered"] is True
    assert track["latest_status"] == "delivered"
    assert len(track["events"]) >= 3
    in_transit = registry.call("query_logistics", {"tracking_no": "YT9876543210"})
    assert in_transit["delivered"] is False
    with pytest.raises(ToolExecutionError, match="unknown"):
        registry.call("query_logistics", {"tracking_no": "XX000"})


def test_refund_is_created_once(registry):
    first = registry.call("apply_refund", {"order_id": "88231", "reason": "broken"})
    assert first["created"] is True
    assert first["refund_id"].startswith("RF" + DEMO_TODAY.strftime("%Y%m%d"))
    assert first["amount"] == 1999
    second = registry.call("apply_refund", {"order_id": "88231", "reason": "again"})
    assert second["created"] is False
    assert second["refund_id"] == first["refund_id"]
    order = registry.call("query_order", {"order_id": "88231"})
    assert order["status"] == "refunding"
    assert order["refund"]["refund_id"] == first["refund_id"]


def test_existing_refund_is_returned_for_66001(registry):
    result = registry.call("apply_refund", {"order_id": "66001", "reason": "x"})
    assert result == {**result, "refund_id": "RF20260620001", "created": False}


def test_refund_refuses_orders_not_delivered(registry):
    with pytest.raises(ToolExecutionError, match="not delivered"):
        registry.call("apply_refund", {"order_id": "70412", "reason": "x"})


def test_refund_refuses_orders_past_the_window(registry):
    registry.call("query_order", {"order_id": "88231"})
    conn = sqlite3.connect(shop_db_path())
    old = conn.execute(
        "SELECT order_id FROM orders WHERE status = 'delivered' AND signed_at < '2026-06-10'"
    ).fetchone()[0]
    conn.close()
    with pytest.raises(ToolExecutionError, match="return window"):
        registry.call("apply_refund", {"order_id": old, "reason": "x"})


def test_idempotency_key_returns_the_same_refund(registry):
    first = registry.call("apply_refund", {"order_id": "88231"}, idempotency_key="run1:s3:v1")
    again = registry.call("apply_refund", {"order_id": "88231"}, idempotency_key="run1:s3:v1")
    assert again["refund_id"] == first["refund_id"]
    conn = sqlite3.connect(shop_db_path())
    keys = conn.execute("SELECT idempotency_key FROM refunds WHERE order_id = '88231'").fetchall()
    conn.close()
    assert keys == [("run1:s3:v1",)]


def test_processes_at_once_create_one_refund():
    # spawned, never forked: a fork copies the locks other threads of this process hold
    # (DBOS's, SQLite's), and a child can wait on one for ever
    context = multiprocessing.get_context("spawn")
    barrier, queue = context.Barrier(RACERS), context.Queue()
    workers = [context.Process(target=refund_in_a_process, args=(barrier, queue))
               for _ in range(RACERS)]
    try:
        for worker in workers:
            worker.start()
        ids = results_of(workers, queue)
        for worker in workers:
            worker.join(timeout=DEFAULT_TIMEOUT_S)
            assert worker.exitcode == 0
    finally:
        for worker in workers:
            if worker.is_alive():
                worker.kill()
    assert len(set(ids)) == 1
    conn = sqlite3.connect(shop_db_path())
    count = conn.execute("SELECT COUNT(*) FROM refunds WHERE order_id = '88231'").fetchone()[0]
    conn.close()
    assert count == 1


def test_reset_demo_data_recreates_the_databases(registry):
    paths = ensure_demo_data()
    assert all(path.exists() for path in paths.values())
    registry.call("apply_refund", {"order_id": "88231", "reason": "broken"})
    assert reset_demo_data() == planboard_home()
    assert registry.call("query_order", {"order_id": "88231"})["status"] == "delivered"


def test_an_order_on_its_way_says_when_it_is_expected_and_a_delivered_one_does_not(registry):
    on_its_way = registry.call("query_order", {"order_id": "70412"})
    assert on_its_way["expected_delivery"] == "2026-06-25"
    assert "预计 2026-06-25 送达" in on_its_way["summary"]
    assert "expected on 2026-06-25" in on_its_way["summary"]
    tracking = registry.call("query_logistics", {"tracking_no": on_its_way["tracking_no"]})
    assert tracking["expected_delivery"] == "2026-06-25"
    delivered = registry.call("query_order", {"order_id": "88231"})
    assert delivered["expected_delivery"] is None and "expected" not in delivered["summary"]

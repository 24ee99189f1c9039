"""AppTest of the Plan page's demo helpers: "Reset demo data" (asked twice) and route reasons
worded in the UI's language whatever the request's language."""

from __future__ import annotations

import re

import pytest

from core.tools.toolsets import default_registry
from tests.support.app import open_app
from tests.support.shown import shown

_CJK = re.compile(r"[\u4e00-\u9fff]")


def call(tool: str, **args: object) -> dict:
    return default_registry({}).call(tool, args)


def query_order(order_id: str) -> dict:
    return call("query_order", order_id=order_id)


def test_reset_demo_data_asks_first_then_restores_order_88231(runner):
    call("apply_refund", order_id="88231", reason="broken")
    assert query_order("88231")["refund"] is not None  # one demo already refunded it
    at = open_app(language="en")
    assert _has(at, "reset_demo") and not _has(at, "reset_demo_confirm")
    at.button(key="reset_demo").click().run()
    assert "Refunds made in demos are lost" in shown("\n".join(w.value for w in at.warning))
    assert query_order("88231")["refund"] is not None  # nothing happens before the "yes"
    at.button(key="reset_demo_cancel").click().run()
    assert not _has(at, "reset_demo_confirm")
    assert query_order("88231")["refund"] is not None

    at.button(key="reset_demo").click().run()
    at.button(key="reset_demo_confirm").click().run()
    assert not at.exception, [e.value for e in at.exception]
    order = query_order("88231")
    assert order["refund"] is None and order["status"] == "delivered"
    assert "Demo data reset" in shown("\n".join(s.value for s in at.success))
    assert not _has(at, "reset_demo_confirm")


def test_reset_demo_is_worded_in_chinese(runner):
    at = open_app(language="zh")
    assert at.button(key="reset_demo").label == "重置演示数据"
    at.button(key="reset_demo").click().run()
    assert at.button(key="reset_demo_confirm").label == "确定重置"


def _has(at, key: str) -> bool:
    return any(getattr(b, "key", None) == key for b in at.button)


@pytest.mark.parametrize(("language", "expected"), [
    ("en", "Mode: Plan — one lookup needs what another finds first"),
    ("zh", "要先查到一个结果，再用它查下一个"),
])
def test_a_chinese_request_gets_its_route_reason_in_the_ui_language(
        runner, language: str, expected: str):
    at = open_app(language=language)
    at.text_area(key="request").set_value("订单 88231 什么时候到").run()
    at.button(key="generate_plan").click().run()
    assert not at.exception, [e.value for e in at.exception]
    reason = next(shown(i.value) for i in at.info if "—" in i.value)
    assert expected in reason
    if language == "en":
        assert not _CJK.search(reason), reason

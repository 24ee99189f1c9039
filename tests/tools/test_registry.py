"""Tests of the tool registry: derived schemas, argument checks, errors, toolsets, built-ins."""

from __future__ import annotations

import re
from datetime import datetime
from typing import Literal

import pytest

from core.errors import ToolArgumentError, ToolExecutionError, UnknownToolError
from core.tools.builtin import calculate, get_current_time, register_builtin_tools
from core.tools.registry import (
    ToolRegistry,
    current_idempotency_key,
    idempotency_scope,
    make_tool,
    tool,
)


@tool(keywords=("refund",))
def apply_refund(order_id: str, amount: float, reason: str = "not given") -> dict:
    """Ask for a refund of an order.

    A longer explanation that is not part of the summary.

    Args:
        order_id: the order to refund.
        amount: how much to refund,
            in yuan.
        reason: why the customer wants the refund.
    """
    return {"order_id": order_id, "amount": amount, "key": current_idempotency_key()}


@tool(read_only=True)
def explode(n: int) -> int:
    """Always fails.

    Args:
        n: any number.
    """
    raise RuntimeError(f"kaboom {n}")


class Shop:
    """A toolset: methods marked with @tool become tools bound to the instance."""

    def __init__(self, prefix: str) -> None:
        self.prefix = prefix

    @tool(read_only=True)
    def query_order(self, order_id: str) -> dict:
        """Look up an order.

        Args:
            order_id: the order number.
        """
        return {"order_id": f"{self.prefix}{order_id}", "status": "delivered"}

    @tool(name="shop_ping", read_only=True)
    def ping(self) -> str:
        """Say pong."""
        return "pong"

    def helper(self) -> str:
        """Not a tool."""
        return "no"


@pytest.fixture
def own_tools() -> ToolRegistry:
    """The built-in tools plus this module's apply_refund and explode."""
    registry = ToolRegistry()
    register_builtin_tools(registry)
    registry.add(apply_refund)
    registry.add(explode)
    return registry


def test_calculate_schema_is_pinned():
    assert calculate.openai_spec() == {
        "type": "function",
        "function": {
            "name": "calculate",
            "description": (
                "Evaluate an arithmetic expression safely "
                "(numbers, + - * / // % **, sqrt, log, round ...)."
            ),
            "parameters": {
                "type": "object",
                "properties": {
                    "expression": {
                        "type": "string",
                        "description": 'the arithmetic expression, for example "1999 * 0.9 + 15".',
                    }
                },
                "required": ["expression"],
                "additionalProperties": False,
            },
        },
    }


def test_schema_from_hints_and_docstring():
    assert apply_refund.name == "apply_refund"
    assert apply_refund.description == "Ask for a refund of an order."
    assert apply_refund.side_effect is True
    assert apply_refund.keywords == ("refund",)
    assert apply_refund.required == ["order_id", "amount"]
    props = apply_refund.parameters["properties"]
    assert props["order_id"] == {"type": "string", "description": "the order to refund."}
    assert props["amount"] == {"type": "number", "description": "how much to refund, in yuan."}
    assert props["reason"]["default"] == "not given"
    assert "title" not in repr(apply_refund.parameters)


def test_postponed_annotations_from_typing_are_resolved():
    def pay(channel: Literal["card", "wallet"] = "card") -> dict:
        """Pay.

        Args:
            channel: how to pay.
        """
        return {"channel": channel}

    built = make_tool(pay, read_only=True)
    assert built.parameters["properties"]["channel"] == {
        "enum": ["card", "wallet"], "type": "string", "default": "card",
        "description": "how to pay.",
    }
    with pytest.raises(ToolArgumentError, match="channel: Input should be"):
        built.validate_args({"channel": "cash"})


def test_catalogue_entry_tells_the_planner_about_side_effects(own_tools):
    entries = {e["name"]: e for e in own_tools.catalogue()}
    assert entries["apply_refund"]["side_effect"] is True
    assert entries["calculate"]["side_effect"] is False
    assert entries["calculate"]["parameters"] == calculate.parameters


def test_call_validates_and_coerces(own_tools):
    result = own_tools.call("apply_refund", {"order_id": "88231", "amount": "12.5"})
    assert result == {"order_id": "88231", "amount": 12.5, "key": None}


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ({"amount": 1}, r"order_id: Field required"),
        ({"order_id": "1", "amount": "lots"}, r"amount: Input should be a valid number"),
        ({"order_id": "1", "amount": 1, "bogus": 2}, r"bogus: Extra inputs are not permitted"),
    ],
)
def test_bad_arguments_raise_tool_argument_error(own_tools, args, message):
    with pytest.raises(ToolArgumentError, match=message) as caught:
        own_tools.call("apply_refund", args)
    assert str(caught.value).startswith("apply_refund: ")
    assert "check the tool's parameter schema" in str(caught.value)


def test_arguments_must_be_an_object():
    with pytest.raises(ToolArgumentError, match="arguments must be a JSON object, got list"):
        calculate.validate_args(["1+1"])  # type: ignore[arg-type]


def test_a_raising_tool_becomes_tool_execution_error(own_tools):
    with pytest.raises(ToolExecutionError, match="explode failed: RuntimeError: kaboom 3"):
        own_tools.call("explode", {"n": 3})


def test_unknown_tool_lists_the_registered_ones(own_tools):
    with pytest.raises(
        UnknownToolError,
        match=re.escape(
            "unknown tool 'fly'; registered tools are: apply_refund, calculate, explode, "
            "get_current_time"
        ),
    ):
        own_tools.call("fly", {})
    assert "fly" not in own_tools and "calculate" in own_tools


def test_toolset_methods_become_bound_tools():
    registry = ToolRegistry()
    registry.add_toolset(Shop(prefix="#"))
    assert registry.names() == ["query_order", "shop_ping"]
    assert registry.call("query_order", {"order_id": "7"}) == {
        "order_id": "#7", "status": "delivered",
    }
    assert registry.call("shop_ping", {}) == "pong"
    assert "self" not in registry.get("query_order").parameters["properties"]


def test_registry_order_length_and_replacement(own_tools):
    assert [t.name for t in own_tools] == own_tools.names()
    assert len(own_tools) == 4
    replacement = tool(name="calculate", read_only=True)(lambda expression: {"value": 0})
    own_tools.add(replacement)
    assert len(own_tools) == 4
    assert own_tools.call("calculate", {"expression": "1+1"}) == {"value": 0}


def test_idempotency_key_is_visible_inside_the_call_only(own_tools):
    result = own_tools.call("apply_refund", {"order_id": "1", "amount": 1},
                           idempotency_key="run1:s2:v1")
    assert result["key"] == "run1:s2:v1"
    assert current_idempotency_key() is None
    with idempotency_scope("k"):
        assert current_idempotency_key() == "k"
    assert current_idempotency_key() is None


def test_builtin_calculate_tool(own_tools):
    assert own_tools.call("calculate", {"expression": "1999 * 0.9 + 15"}) == {
        "expression": "1999 * 0.9 + 15", "value": pytest.approx(1814.1),
    }
    with pytest.raises(ToolArgumentError, match=r"calculate: expression: .*not allowed"):
        own_tools.call("calculate", {"expression": "__import__('os')"})
    with pytest.raises(ToolExecutionError, match=r"calculate: division by zero in '1 / 0'"):
        own_tools.call("calculate", {"expression": "1 / 0"})  # arithmetic: the run reports it


def test_builtin_time_tool(own_tools):
    result = own_tools.call("get_current_time", {})
    assert result["timezone"] == "Asia/Shanghai"
    assert datetime.fromisoformat(result["iso"]).utcoffset().total_seconds() == 8 * 3600
    with pytest.raises(ToolArgumentError, match="unknown time zone 'Mars/Base'"):
        get_current_time.function(timezone="Mars/Base")

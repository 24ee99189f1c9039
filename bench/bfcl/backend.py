"""One entry's backends: BFCL's executable classes, loaded with the entry's starting state,
as a PlanBoard toolset whose every call is logged in BFCL's call format.

Each entry gets fresh instances of its involved classes (``_load_scenario`` with a copy of
the entry's ``initial_config``, as BFCL's checker loads them), shared by all its turns: a
later turn sees what an earlier one changed. A call reaches the instance under one lock (a
plan's parallel steps share the state) and is logged as ``name(arg=value, ...)`` before it
runs, the string BFCL's checker executes again on fresh instances; a call refused before it
reached the backend (arguments that fail the tool's schema) is not logged, since it changed
nothing.

A function is read-only when it only reports state: :data:`READ_ONLY` names them, read from
the backends' source (``tests/bench/test_bfcl.py`` runs every ground-truth call of the
category and checks that none of them changed what BFCL's checker compares). Everything else
changes the backend's state (``cd`` included: a later call reads the directory it chose) and
is a side effect under PlanBoard's approval boundary. Of those, :data:`IDEMPOTENT` are the
ones that set a state to the value their arguments give (a directory to be in, doors locked,
a budget, a login), so that making the same call again is harmless.

A function doc's types are BFCL's; where an entry's own data contradicts one, the entry's
data wins: BFCL's ticket docs type ``ticket_id`` as an integer, and one entry
(``multi_turn_base_173``) holds a ticket whose id is the string ``'ticket_001'``, which its
ground truth closes. The ticket tools of an entry whose tickets have string ids take a
string.
"""

from __future__ import annotations

import ast
import copy
import importlib
import inspect
import json
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from bench.bfcl.data import Entry, entry_tools, json_schema
from core.tools.mcp.arguments import schema_validator
from core.tools.registry import Tool, ToolRegistry

__all__ = ["IDEMPOTENT", "READ_ONLY", "TOOLSET", "Call", "EntryBackends", "call_text", "read_call",
           "result_text"]

TOOLSET = "bfcl"
READ_ONLY = frozenset({
    # GorillaFileSystem
    "cat", "diff", "du", "find", "grep", "ls", "pwd", "sort", "tail", "wc",
    # MathAPI (stateless)
    "absolute_value", "add", "divide", "imperial_si_conversion", "logarithm", "max_value",
    "mean", "min_value", "multiply", "percentage", "power", "round_number",
    "si_unit_conversion", "square_root", "standard_deviation", "subtract", "sum_values",
    # MessageAPI
    "get_message_stats", "get_user_id", "list_users", "message_get_login_status",
    "search_messages", "view_messages_sent",
    # TwitterAPI
    "get_tweet", "get_tweet_comments", "get_user_stats", "get_user_tweets",
    "list_all_following", "posting_get_login_status", "search_tweets",
    # TicketAPI
    "get_ticket", "get_user_tickets", "ticket_get_login_status",
    # TradingBot
    "filter_stocks_by_price", "get_account_info", "get_available_stocks", "get_current_time",
    "get_order_details", "get_order_history", "get_stock_info", "get_symbol_by_name",
    "get_transaction_history", "get_watchlist", "notify_price_change",
    "trading_get_login_status",
    # TravelAPI
    "compute_exchange_rate", "get_all_credit_cards", "get_booking_history",
    "get_budget_fiscal_year", "get_credit_card_balance", "get_flight_cost",
    "get_nearest_airport_by_city", "list_all_airports", "retrieve_invoice",
    "travel_get_login_status", "verify_traveler_information",
    # VehicleControlAPI
    "check_tire_pressure", "displayCarStatus", "display_log", "estimate_distance",
    "estimate_drive_feasibility_by_mileage", "find_nearest_tire_shop", "gallon_to_liter",
    "get_current_speed", "get_outside_temperature_from_google",
    "get_outside_temperature_from_weather_com", "get_zipcode_based_on_city",
    "liter_to_gallon",
})


IDEMPOTENT = frozenset({
    "cd", "activateParkingBrake", "adjustClimateControl", "lockDoors", "pressBrakePedal",
    "releaseBrakePedal", "setCruiseControl", "setHeadlights", "set_navigation", "startEngine",
    "message_login", "ticket_login", "logout", "trading_login", "trading_logout",
    "authenticate_twitter", "authenticate_travel", "set_budget_limit", "follow_user",
    "unfollow_user", "add_to_watchlist", "remove_stock_from_watchlist", "cancel_order",
    "cancel_booking", "close_ticket", "resolve_ticket", "edit_ticket",
})
_TICKET_ID = "ticket_id"


@dataclass(frozen=True)
class Call:
    """A call by function name with its arguments by parameter name."""

    name: str
    args: dict[str, Any]


def call_text(name: str, args: dict[str, Any]) -> str:
    """The call as BFCL writes it: ``name(arg=value, ...)``, values as Python literals."""
    return f"{name}({', '.join(f'{key}={value!r}' for key, value in args.items())})"


def result_text(result: Any) -> str:
    """A call's result as BFCL's own loop hands it back to the model (JSON for a dict)."""
    if isinstance(result, str):
        return result
    if isinstance(result, dict):
        try:
            return json.dumps(result)
        except (TypeError, ValueError):
            return str(result)
    return str(result)


class EntryBackends:
    """The backend instances of one entry, its toolset, and the log of calls made on them."""

    def __init__(self, entry: Entry) -> None:
        from bfcl_eval.constants.executable_backend_config import (
            CLASS_FILE_PATH_MAPPING,
            STATELESS_CLASSES,
        )

        self.entry = entry
        self.instances: dict[str, Any] = {}
        for class_name in entry.involved_classes:
            module = importlib.import_module(CLASS_FILE_PATH_MAPPING[class_name])
            instance = getattr(module, class_name)()
            if class_name not in STATELESS_CLASSES:
                instance._load_scenario(copy.deepcopy(entry.initial_config.get(class_name, {})),
                                        long_context=False)
            self.instances[class_name] = instance
        self.docs = {doc["name"]: (class_name, doc) for class_name, doc in entry_tools(entry)}
        self._lock = threading.Lock()
        self._log: list[str] = []

    def method(self, name: str) -> Callable[..., Any]:
        """The bound backend method of the function ``name``."""
        class_name, _ = self.docs[name]
        return getattr(self.instances[class_name], name)

    def call(self, name: str, args: dict[str, Any]) -> Any:
        """Run one call on the entry's state, logged first; a backend's exception is the
        call's result, as BFCL's executor reports it."""
        with self._lock:
            self._log.append(call_text(name, args))
            try:
                return self.method(name)(**args)
            except Exception as exc:  # the backend's own failure: the model reads it
                return {"error": f"Error during execution: {exc}"}

    def take_calls(self) -> list[str]:
        """The calls logged since the last ``take_calls``, in the order they ran."""
        with self._lock:
            taken, self._log = self._log, []
        return taken

    def registry(self) -> ToolRegistry:
        """The entry's functions as PlanBoard tools (toolset ``bfcl``)."""
        registry = ToolRegistry()
        with registry.loading(TOOLSET):
            for name, (_, doc) in self.docs.items():
                registry.add(self._tool(name, doc))
        return registry

    def _tool(self, name: str, doc: dict[str, Any]) -> Tool:
        parameters = json_schema(doc.get("parameters") or {"type": "dict", "properties": {}})
        parameters["type"] = "object"
        ticket = parameters.get("properties", {}).get(_TICKET_ID)
        if ticket is not None and self._string_ticket_ids():
            ticket["type"] = "string"
        response = doc.get("response")

        def run(**args: Any) -> Any:
            return self.call(name, args)

        return Tool(
            name=name, description=doc.get("description", ""), parameters=parameters,
            function=run, side_effect=name not in READ_ONLY, idempotent=name in IDEMPOTENT,
            schema_validator=schema_validator(parameters),
            output_schema=json_schema(response) if isinstance(response, dict) else None,
        )

    def _string_ticket_ids(self) -> bool:
        queue = (self.entry.initial_config.get("TicketAPI") or {}).get("ticket_queue") or []
        return any(isinstance(ticket.get("id"), str) for ticket in queue)

    def read_call(self, text: str) -> Call:
        """A call string of BFCL's ground truth, its positional arguments named by the
        backend method's signature."""
        return read_call(text, lambda name: inspect.signature(self.method(name)))


def read_call(text: str, signature: Callable[[str], inspect.Signature]) -> Call:
    """``name(a, b=c)`` as a :class:`Call`: literals only; positional arguments take the
    names of ``signature(name)``'s parameters in order."""
    node = ast.parse(text.strip(), mode="eval").body
    if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Name):
        raise ValueError(f"not a call of a function by name: {text!r}")
    name = node.func.id
    args: dict[str, Any] = {}
    if node.args:
        names = list(signature(name).parameters)
        for position, value in enumerate(node.args):
            args[names[position]] = ast.literal_eval(value)
    for keyword in node.keywords:
        if keyword.arg is None:
            raise ValueError(f"**arguments are not a call's literal arguments: {text!r}")
        args[keyword.arg] = ast.literal_eval(keyword.value)
    return Call(name, args)

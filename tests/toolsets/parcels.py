"""A person's parcel tools that declare their results and count their calls: each call
appends its tool's name to the file ``PLANBOARD_TEST_CALLS`` names (as tests.toolsets.counted
does), so that a test can tell that a rehearsal called none of them."""

from __future__ import annotations

import os

from core.tools.registry import tool
from tests.toolsets.counted import CALLS_ENV

SHIPMENT = {
    "type": "object",
    "properties": {
        "shipment_id": {"type": "string"},
        "status": {"type": "string", "enum": ["label_created", "in_transit", "delivered"]},
        "carrier": {"type": "string"},
        "weight_kg": {"type": "number"},
    },
    "required": ["shipment_id", "status"],
}


def _count(name: str) -> None:
    with open(os.environ[CALLS_ENV], "a", encoding="utf-8") as handle:
        handle.write(name + "\n")


@tool(read_only=True, output_schema=SHIPMENT)
def find_shipment(shipment_id: str) -> dict:
    """Find a shipment by its id.

    Args:
        shipment_id: the shipment's id, for example P-1.
    """
    _count("find_shipment")
    return {"shipment_id": shipment_id, "status": "in_transit", "carrier": "ACME"}


@tool
def notify_customer(message: str, carrier: str = "") -> dict:
    """Text the customer (a side effect).

    Args:
        message: what to tell them.
        carrier: the carrier to name.
    """
    _count("notify_customer")
    return {"sent": True}


@tool(output_schema={"type": "object", "properties": {"claim_id": {"type": "string"}}})
def file_claim(shipment_id: str, weight_kg: int = 0) -> dict:
    """File a claim for a lost shipment (a side effect).

    Args:
        shipment_id: the shipment's id.
        weight_kg: its weight in whole kilograms.
    """
    _count("file_claim")
    return {"claim_id": "C-1"}


@tool(read_only=True)
def weather(city: str) -> dict:
    """Today's weather in a city (it declares no result shape).

    Args:
        city: the city.
    """
    _count("weather")
    return {"sky": "clear"}

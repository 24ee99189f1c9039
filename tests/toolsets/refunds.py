"""A person's side-effecting tool that counts its calls where tests/toolsets/counted.py
counts (the file ``PLANBOARD_TEST_CALLS`` names), so that a test can tell whether a refund
was made again."""

from __future__ import annotations

import os

from core.tools.registry import tool
from tests.toolsets.counted import CALLS_ENV


@tool
def refund_ticket(ticket_id: str, amount: float) -> dict:
    """Refund the customer of a support ticket.

    Args:
        ticket_id: the ticket's number, for example T-7.
        amount: how much to refund, in euros.
    """
    with open(os.environ[CALLS_ENV], "a", encoding="utf-8") as handle:
        handle.write("refund_ticket\n")
    return {"ticket_id": ticket_id, "refunded": amount}

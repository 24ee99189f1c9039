"""A person's toolset: plain @tool functions, no register()."""

from __future__ import annotations

from core.tools.registry import tool

CALLS: list[str] = []


@tool(read_only=True)
def greet(name: str) -> dict:
    """Greet someone by name.

    Args:
        name: who to greet.
    """
    return {"greeting": f"Hello, {name}!"}


@tool
def send_card(name: str) -> dict:
    """Send a greeting card (a side effect: it is not declared read-only).

    Args:
        name: who gets the card.
    """
    CALLS.append(name)
    return {"card_id": f"C-{len(CALLS)}", "to": name}

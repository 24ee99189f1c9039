"""Three plans of one request, one per variant angle, and the fake model's responder that
answers each angle's planning request with its own plan (for the variants' tests)."""

from __future__ import annotations

import json
from typing import Any

from core.prompts.variants import ANGLES
from tests.support.fake_openai import FakeReply, text

__all__ = ["PLANS", "REQUEST", "by_angle"]

REQUEST = "Check order 88231 and the return policy, and refund the order if it was delivered"


def step(number: int, description: str, tool: str | None = None, *after: int,
         **extra: Any) -> dict[str, Any]:
    return {"id": f"s{number}", "description": description, "tool": tool,
            "depends_on": [f"s{n}" for n in after], **extra}


LOOKUP = step(1, "Look up order 88231", "query_order", args={"order_id": "88231"})
POLICY = {"description": "Search the return policy", "tool": "search_knowledge",
          "args": {"query": "return policy"}}
REFUND = {"description": "Refund order 88231 if it was delivered", "tool": "apply_refund",
          "args": {"order_id": "88231", "reason": "customer request"},
          "condition": "s1.status == 'delivered'"}

# the plan each angle's prompt gets from the model: three decompositions of one request
PLANS = {
    "parallel": [LOOKUP, {**step(2, "", None), **POLICY}, {**step(3, "", None, 1), **REFUND},
                 step(4, "Answer the user", None, 2, 3)],
    "few_tools": [LOOKUP, step(2, "Recall the shop's return policy"),
                  {**step(3, "", None, 1), **REFUND}, step(4, "Answer the user", None, 2, 3)],
    "cheap": [LOOKUP, {**step(2, "", None, 1), **POLICY}, {**step(3, "", None, 1, 2), **REFUND},
              step(4, "Answer the user", None, 3)],
}


def by_angle(plans: dict[str, list[dict[str, Any]]]):
    """A responder that answers each request with the plan of the angle its prompt names
    (the variants are asked in parallel, so the order of arrival is not theirs)."""
    def respond(body: dict[str, Any]) -> FakeReply:
        prompts = "\n".join(str(message["content"]) for message in body["messages"])
        angle = next(name for name, words in ANGLES.items() if words in prompts)
        return text(json.dumps({"goal": REQUEST, "steps": plans[angle]}))
    return respond

"""The model calls a plan may spend: counted at the one place every call passes, capped.

On a small local model each call costs tens of seconds, and a plan's calls add up: the
planning call and its corrective retry, a forced call per step whose arguments the plan
left open, up to three ReAct rounds per reasoning step, success checks, checkpoints,
replans, the answer and its rewrite into the request's language. A run wraps its model in
a :class:`BudgetedModel` over one :class:`CallBudget` (``RunOptions.max_model_calls``,
``PLANBOARD_MAX_MODEL_CALLS``), with the calls already spent on it (its planning) counted
in. Past the limit a call is not made: :class:`core.errors.LLMBudgetError` says so, the
step that wanted it fails with that message, and the run ends failed with what it found so
far, never skipping the work as if it had been done.
"""

from __future__ import annotations

import threading
from typing import Any

from core.base.messages import msg
from core.errors import LLMBudgetError
from core.llm.client import ChatModel, ChatReply, ModelRole
from core.llm.engine import Engine

__all__ = ["BUDGET_ENV", "DEFAULT_MODEL_CALLS", "BudgetedModel", "CallBudget", "budgeted"]

BUDGET_ENV = "PLANBOARD_MAX_MODEL_CALLS"
# the largest runs of the quality suite made 15 calls; a plan of ten steps whose arguments
# are all open, checked and checkpointed makes about 40
DEFAULT_MODEL_CALLS = 50


class CallBudget:
    """``limit`` model calls, ``spent`` of them already; safe to share between threads."""

    def __init__(self, limit: int, spent: int = 0) -> None:
        self.limit = limit
        self._spent = spent
        self._lock = threading.Lock()

    @property
    def spent(self) -> int:
        """The calls made (or counted in) so far."""
        with self._lock:
            return self._spent

    def spend(self) -> None:
        """Count one call; LLMBudgetError (and nothing counted) when none is left."""
        with self._lock:
            if self._spent >= self.limit:
                raise LLMBudgetError(msg("llm.budget_spent", limit=self.limit,
                                         variable=BUDGET_ENV))
            self._spent += 1


class BudgetedModel:
    """A chat model that spends one call of ``budget`` per request before making it; what
    else the engine reads of a model (its provider profile ...) is the wrapped model's."""

    def __init__(self, model: ChatModel, budget: CallBudget) -> None:
        self.model = model
        self.budget = budget

    def __getattr__(self, name: str) -> Any:
        return getattr(self.model, name)

    def chat(self, messages: list[dict[str, Any]], *, role: ModelRole = "executor",
             **kwargs: Any) -> ChatReply:
        """Spend a call, then make it (LLMBudgetError when the budget is spent)."""
        self.budget.spend()
        return self.model.chat(messages, role=role, **kwargs)


def budgeted(engine: Engine, limit: int, spent: int = 0) -> Engine:
    """``engine`` whose model spends a budget of ``limit`` calls with ``spent`` already
    counted; an engine without a model, or already on a budget, is returned as it is."""
    if engine.model is None or isinstance(engine.model, BudgetedModel):
        return engine
    return Engine(registry=engine.registry,
                  model=BudgetedModel(engine.model, CallBudget(limit, spent)))

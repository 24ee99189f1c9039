"""Tools whose behaviour a test steers (a hook or a failure per key), recording every call."""

from __future__ import annotations

import threading

from core.errors import ToolExecutionError
from core.tools.registry import ToolRegistry, current_idempotency_key, make_tool


class Tools:
    """Tools whose behaviour a test can steer, recording every call."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, dict, str | None]] = []
        self.lock = threading.Lock()
        self.on_call: dict[str, object] = {}
        self.fail: set[str] = set()

    def registry(self) -> ToolRegistry:
        registry = ToolRegistry()

        def lookup(key: str) -> dict:
            """Look something up.

            Args:
                key: what to look up.
            """
            return self._run("lookup", {"key": key})

        def refund(order_id: str) -> dict:
            """Refund an order.

            Args:
                order_id: the order.
            """
            return self._run("refund", {"order_id": order_id})

        registry.add(make_tool(lookup, read_only=True))
        registry.add(make_tool(refund))
        return registry

    def _run(self, name: str, args: dict) -> dict:
        with self.lock:
            self.calls.append((name, args, current_idempotency_key()))
        hook = self.on_call.get(args.get("key", name))
        if callable(hook):
            hook()
        if args.get("key") in self.fail:
            raise ToolExecutionError(f"{name} could not find {args['key']}")
        return {"value": f"{name}:{next(iter(args.values()))}"}

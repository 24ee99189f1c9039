"""What only an admin does: put the demo's data back, start a failed tool server again.

Each checks the person first (core.access.policy) and records the act in the audit log.
"""

from __future__ import annotations

from typing import Any

from core.access.audit import record_act
from core.access.identity import Actor
from core.access.policy import access_for
from core.planning.packs import data_resets
from core.store.run_store import RunStore
from core.tools.registry import ToolRegistry
from core.tools.sources import retry_server

__all__ = ["reset_data", "restart_server"]


def reset_data(registry: ToolRegistry, store: RunStore, actor: Actor | None) -> list[Any]:
    """Run every data reset the toolsets offer (the demo shop as it was); return what each
    reset wrote. AccessDeniedError, resetting nothing, for anyone but an admin."""
    access = access_for(actor, store)
    access.require("admin")
    written = [reset.run() for reset in data_resets(registry)]
    if written:
        record_act(store, access.actor, "reset_demo", detail={"paths": [str(p) for p in written]})
    return written


def restart_server(name: str, store: RunStore, actor: Actor | None) -> bool:
    """Have MCP server ``name`` started again at the next draw (an admin's to ask); False
    when no failed server has that name."""
    access_for(actor, store).require("admin")
    return retry_server(name)

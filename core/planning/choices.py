"""The typed choices of a request and of a run: request modes, routes, checkpoint policies.

Each list is written once, as a ``Literal`` type; the tuples are read from the types, so
the CLI's choices, the dashboard's options and the checks in core cannot drift apart.
"""

from __future__ import annotations

from typing import Literal, get_args

__all__ = [
    "CHECKPOINT_POLICIES",
    "DEFAULT_POLICY",
    "PLANNED_MODES",
    "REQUEST_MODES",
    "ROUTE_MODES",
    "CheckpointPolicy",
    "RequestMode",
    "RouteMode",
]

RouteMode = Literal["plan", "knowledge", "direct", "hierarchical"]
"""How a request is handled: planned, answered from the knowledge base, answered directly,
or planned in two levels (a plan of phases, each expanded into steps when it is reached)."""

PLANNED_MODES: frozenset[RouteMode] = frozenset({"plan", "hierarchical"})
"""The routes that make a plan (the others answer without one)."""

RequestMode = Literal["auto", RouteMode]
"""What a person may ask for: a route, or "auto" to let the router decide."""

CheckpointPolicy = Literal["rigid", "on_failure", "adaptive", "every_step"]
"""When a run changes its plan (seed 003): ``rigid`` never replans, ``on_failure`` replans
after a fatal failure or a missed success criterion, ``adaptive`` also checks the pending
steps after completed steps, ``every_step`` replans after them (steps that finished together
share one checkpoint)."""

ROUTE_MODES: tuple[RouteMode, ...] = get_args(RouteMode)
REQUEST_MODES: tuple[RequestMode, ...] = get_args(RequestMode)
CHECKPOINT_POLICIES: tuple[CheckpointPolicy, ...] = get_args(CheckpointPolicy)
DEFAULT_POLICY: CheckpointPolicy = "on_failure"

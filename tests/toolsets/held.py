"""The demo pack with its analytics tools held: each call waits until a file exists. A test
keeps a run of the churn scenario live (its plan and graph the same as ever) for as long as
it looks at it, without a demo pace, and lets it go on by creating the file
``PLANBOARD_TEST_GATE`` names. Load it instead of ``demo``
(``PLANBOARD_TOOLSETS=builtin,tests.toolsets.held``).
"""

from __future__ import annotations

import dataclasses
import functools
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import demo
from core.tools.registry import ToolRegistry

GATE_ENV = "PLANBOARD_TEST_GATE"
HELD = ("describe_tables", "run_sql")
HOLD_S = 120.0  # pytest-timeout's budget for a test: then the call goes on anyway


def _held(function: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(function)
    def held(**args: Any) -> Any:
        gate = Path(os.environ[GATE_ENV])
        deadline = time.monotonic() + HOLD_S
        while not gate.exists() and time.monotonic() < deadline:
            time.sleep(0.05)  # the test's process creates it: a file is the signal it sees
        return function(**args)

    return held


def register(registry: ToolRegistry) -> None:
    """Add the demo's tools and pack, the analytics tools held at the gate."""
    demo.register(registry)
    for name in HELD:
        demo_tool = registry.get(name)
        registry.add(dataclasses.replace(demo_tool, function=_held(demo_tool.function)))

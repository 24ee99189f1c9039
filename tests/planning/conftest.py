"""The planning tests' fixtures: the scripted planner's own tools (the demo's are ``registry``)."""

from __future__ import annotations

import pytest

from core.tools.registry import ToolRegistry
from tests.support import planning


@pytest.fixture
def planner_registry() -> ToolRegistry:
    """The built-in tools plus the scripted planner's order lookup and refund."""
    return planning.planner_registry()

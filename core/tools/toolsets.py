"""Toolsets: what ``PLANBOARD_TOOLSETS`` names, loaded into one registry.

A toolset is ``builtin`` (the calculator, the clock, and web search when SearXNG is set),
the name of an installed package's entry point in the ``planboard.toolsets`` group (as
``llm`` plugins are found), or an importable module: its ``register(registry)`` is called,
or else every ``@tool`` function it defines is added. ``demo`` is such a module, the demo
pack beside ``core/``. After them come the MCP servers of the MCP configuration
(:mod:`core.tools.mcp`), their tools named ``SERVER__TOOL``. A toolset or server that cannot
be loaded is named in ``registry.problems`` and the others still load.
"""

from __future__ import annotations

import importlib
import logging
import os
from collections.abc import Callable, Mapping
from importlib.metadata import entry_points
from types import ModuleType
from typing import Any

from core.base.messages import msg
from core.errors import ToolsetError
from core.tools.builtin import register_builtin_tools
from core.tools.mcp.toolset import register_mcp_servers
from core.tools.registry import Tool, ToolRegistry
from core.tools.research import register_research_tools

__all__ = ["DEFAULT_TOOLSETS", "ENTRY_POINT_GROUP", "TOOLSETS_ENV", "default_registry",
           "toolset_names"]

logger = logging.getLogger(__name__)

TOOLSETS_ENV = "PLANBOARD_TOOLSETS"
DEFAULT_TOOLSETS = "builtin,demo"
ENTRY_POINT_GROUP = "planboard.toolsets"
BUILTIN = "builtin"


def toolset_names(environ: Mapping[str, str] | None = None) -> list[str]:
    """The toolsets ``PLANBOARD_TOOLSETS`` names (comma-separated), in order, once each."""
    env = os.environ if environ is None else environ
    raw = env.get(TOOLSETS_ENV) or DEFAULT_TOOLSETS
    return list(dict.fromkeys(name.strip() for name in raw.split(",") if name.strip()))


def default_registry(environ: Mapping[str, str] | None = None) -> ToolRegistry:
    """A registry of every toolset ``PLANBOARD_TOOLSETS`` names (default ``builtin,demo``),
    then the tools of the MCP servers the MCP configuration names."""
    env = os.environ if environ is None else environ
    registry = ToolRegistry()
    for name in toolset_names(env):
        with registry.loading(name):
            try:
                _load(name, registry, env)
            except ToolsetError as exc:
                logger.warning("%s", exc)
                registry.problems.append(exc.message)
    register_mcp_servers(registry, env)
    return registry


def _load(name: str, registry: ToolRegistry, environ: Mapping[str, str]) -> None:
    if name == BUILTIN:
        register_builtin_tools(registry)
        register_research_tools(registry, environ)
        return
    target = _entry_point(name) or _module(name)
    before = len(registry)
    try:
        _register(target, registry)
    except ToolsetError:
        raise
    except Exception as exc:  # a person's toolset failing must not take the others down
        raise ToolsetError(msg("toolset.failed", name=name,
                               error=f"{type(exc).__name__}: {exc}")) from exc
    if len(registry) == before:
        raise ToolsetError(msg("toolset.empty", name=name))


def _entry_point(name: str) -> Any:
    found = entry_points(group=ENTRY_POINT_GROUP, name=name)
    for point in found:
        try:
            return point.load()
        except Exception as exc:
            raise ToolsetError(msg("toolset.failed", name=name,
                                   error=f"{type(exc).__name__}: {exc}")) from exc
    return None


def _module(name: str) -> ModuleType:
    try:
        return importlib.import_module(name)
    except ImportError as exc:
        raise ToolsetError(msg("toolset.unknown", name=name, error=str(exc),
                               variable=TOOLSETS_ENV)) from None
    except Exception as exc:
        raise ToolsetError(msg("toolset.failed", name=name,
                               error=f"{type(exc).__name__}: {exc}")) from exc


def _register(target: Any, registry: ToolRegistry) -> None:
    """Call the toolset's ``register(registry)``, or add the tools it defines."""
    register: Callable[[ToolRegistry], Any] | None = getattr(target, "register", None)
    if callable(register):
        register(registry)
    elif isinstance(target, ModuleType):
        for value in vars(target).values():
            if isinstance(value, Tool):
                registry.add(value)
    elif callable(target):  # an entry point naming a register function
        target(registry)

"""Where PlanBoard keeps its data: PLANBOARD_HOME, or ./.planboard when it is not set."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from core.base.messages import msg
from core.errors import ConfigError

__all__ = ["home_path", "planboard_home"]

_DEFAULT_HOME = ".planboard"


def home_path(environ: Mapping[str, str] | None = None) -> Path:
    """Where the home directory is (PLANBOARD_HOME of ``environ``, else ./.planboard), without
    creating it: for a reader that only looks for a file there."""
    env = os.environ if environ is None else environ
    configured = env.get("PLANBOARD_HOME", "").strip()
    return Path(configured).expanduser() if configured else Path.cwd() / _DEFAULT_HOME


def planboard_home() -> Path:
    """The PlanBoard home directory (PLANBOARD_HOME or ./.planboard), created if missing."""
    home = home_path()
    try:
        home.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ConfigError(msg("config.home_unwritable", home=home, reason=exc.strerror)) from None
    return home

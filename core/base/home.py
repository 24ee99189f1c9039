"""Where PlanBoard keeps its data: PLANBOARD_HOME, or ./.planboard when it is not set."""

from __future__ import annotations

import os
from pathlib import Path

from core.base.messages import msg
from core.errors import ConfigError

__all__ = ["planboard_home"]

_DEFAULT_HOME = ".planboard"


def planboard_home() -> Path:
    """The PlanBoard home directory (PLANBOARD_HOME or ./.planboard), created if missing."""
    configured = os.environ.get("PLANBOARD_HOME", "").strip()
    home = Path(configured).expanduser() if configured else Path.cwd() / _DEFAULT_HOME
    try:
        home.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ConfigError(msg("config.home_unwritable", home=home, reason=exc.strerror)) from None
    return home

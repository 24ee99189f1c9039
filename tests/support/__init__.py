"""What the tests share: fake servers, stored-run builders, waiting, app and browser helpers.

A test module imports helpers from here (or gets fixtures from a conftest), never from
another test module. Importing this package imports nothing else: ``fake_openai`` and
``hostile_plans`` stay importable without pytest (bench/ uses them).
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["REPO"]

REPO = Path(__file__).resolve().parents[2]
"""The repository's root folder."""

"""The page tests' fixtures: in tests/ui/ the runner is the app's own."""

from __future__ import annotations

import pytest

from core.runs.runner import Runner


@pytest.fixture
def runner(app_runner: Runner) -> Runner:
    """The runner the pages use (``app_runner``), on this test's home."""
    return app_runner

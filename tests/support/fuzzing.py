"""Shared hypothesis settings for the fuzz tests (the session profile is in conftest.py)."""

from __future__ import annotations

import contextlib
import warnings

from hypothesis import HealthCheck, settings

__all__ = ["FUZZ", "FUZZ_WITH_FIXTURES"]

# Determinism (or exploration) comes from the profile: see tests/conftest.py.
FUZZ = settings(max_examples=200, deadline=None)
# for tests whose function-scoped fixture is read-only, so sharing it across examples is fine
FUZZ_WITH_FIXTURES = settings(FUZZ, suppress_health_check=[HealthCheck.function_scoped_fixture])

# When a property fails, hypothesis's pytest plugin imports its patch writer (libcst), which
# warns about mypy_extensions; with warnings as errors that turns the failure report into
# an INTERNALERROR. Importing it once here, quietly, keeps failures readable.
# (Without libcst the plugin skips the patch writer, and so does this.)
with warnings.catch_warnings(), contextlib.suppress(ImportError):
    warnings.simplefilter("ignore", DeprecationWarning)
    import hypothesis.extra._patching  # noqa: F401

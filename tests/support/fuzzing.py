"""Shared hypothesis settings for the fuzz tests (the session profile is in conftest.py)."""

from __future__ import annotations

from hypothesis import HealthCheck, settings

__all__ = ["FUZZ", "FUZZ_WITH_FIXTURES"]

# Determinism (or exploration) comes from the profile: see tests/conftest.py.
FUZZ = settings(max_examples=200, deadline=None)
# for tests whose function-scoped fixture is read-only, so sharing it across examples is fine
FUZZ_WITH_FIXTURES = settings(FUZZ, suppress_health_check=[HealthCheck.function_scoped_fixture])

"""bench.checks: its replies are the megabyte it says, and each goes through every check to
a plan (never a timing)."""

from __future__ import annotations

import pytest

from bench import checks
from core.tools.toolsets import default_registry


@pytest.mark.parametrize("shape", list(checks.SHAPES))
def test_each_reply_is_a_megabyte_and_goes_through_every_check(shape):
    reply = checks.SHAPES[shape]()
    assert 0.97 <= len(reply.encode()) / 1_000_000 <= 1.0
    for weak in (True, False):
        _, _, ended = checks.run_once(reply, default_registry({}), weak=weak)
        assert ended.startswith("plan"), ended

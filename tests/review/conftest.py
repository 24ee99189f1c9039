"""The review API's routes in this process (Starlette's TestClient: no server, no network)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from starlette.applications import Starlette
from starlette.testclient import TestClient

from ui.review_api import api_routes


@pytest.fixture
def api() -> Iterator[TestClient]:
    with TestClient(Starlette(routes=api_routes())) as client:
        yield client

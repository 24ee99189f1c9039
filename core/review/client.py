"""A small client of PlanBoard's review API for agents built elsewhere (standard library only).

It imports nothing of PlanBoard, so an agent's project may copy this one file::

    from core.review.client import ReviewClient

    client = ReviewClient("http://localhost:8501", token=None)   # or PLANBOARD_URL/_TOKEN
    decision = client.review({"goal": "...", "steps": [...]}, tools=[...], timeout=600)
    if decision.approved:
        for step in decision.plan["steps"]: ...                   # exactly what was approved
            client.report(decision.id, {"type": "STEP_STARTED", "stepName": step["id"]})

:meth:`ReviewClient.review` sends the plan and waits for the person's decision in long
polls; past ``timeout`` it returns the decision still ``pending``. :meth:`ReviewClient.report`
sends one AG-UI event (a dict, or an ``ag_ui.core`` model), giving it a ``metadata.eventId``
when it has none, so that sending it again after a lost answer applies it once. A refusal is
a :class:`ReviewError` carrying the API's one-line reason; a server that cannot be reached
is :class:`UnreachableError`.
"""

from __future__ import annotations

import json
import os
import time
import urllib.error
import urllib.request
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

__all__ = ["DEFAULT_URL", "Decision", "ReviewClient", "ReviewError", "Send", "UnreachableError"]

DEFAULT_URL = "http://localhost:8501"
_POLL_S = 30  # the longest wait the server holds a request for

Send = Callable[[str, str, "bytes | None", dict[str, str], float], tuple[int, bytes]]
"""How a call reaches the server: (method, url, body, headers, timeout) -> (status, body);
UnreachableError when it cannot. The default is urllib's; a test passes its own."""


class ReviewError(Exception):
    """The API refused a call: ``http_status`` and ``code`` with its one-line reason."""

    def __init__(self, reason: str, http_status: int = 0, code: str | None = None) -> None:
        super().__init__(reason)
        self.http_status = http_status
        self.code = code


class UnreachableError(ReviewError):
    """PlanBoard could not be reached (stopped, a wrong address, no answer in time)."""


@dataclass(frozen=True)
class Decision:
    """A review's decision: ``pending``, ``approved`` (``plan``: the exact version
    approved, ``version`` its number) or ``rejected`` (``comment``: the reviewer's)."""

    id: str
    status: str
    plan: dict[str, Any] | None = None
    version: int | None = None
    comment: str | None = None
    step_names: dict[str, str] = field(default_factory=dict)

    @property
    def approved(self) -> bool:
        return self.status == "approved"

    @property
    def rejected(self) -> bool:
        return self.status == "rejected"


class ReviewClient:
    """The review API of the PlanBoard at ``url`` (``PLANBOARD_URL``, else
    :data:`DEFAULT_URL`), called with a person's ``token`` (``PLANBOARD_TOKEN``) when given."""

    def __init__(self, url: str | None = None, *, token: str | None = None,
                 timeout: float = 10.0, send: Send | None = None) -> None:
        self.url = (url or os.environ.get("PLANBOARD_URL") or DEFAULT_URL).rstrip("/")
        self.token = token if token is not None else os.environ.get("PLANBOARD_TOKEN")
        self.timeout = timeout  # of one call that does not wait for a person
        self._send = send or _urllib_send

    def submit(self, plan: Any, *, tools: list[dict[str, Any]] | None = None,
               agent: str | None = None) -> str:
        """Send ``plan`` (plan JSON, a list of steps or Markdown text) for review; its id."""
        body: dict[str, Any] = {"plan": plan}
        for key, value in (("tools", tools), ("agent", agent)):
            if value is not None:
                body[key] = value
        return self._call("POST", "/api/v1/reviews", body)["id"]

    def decision(self, review_id: str, *, wait: float = 0) -> Decision:
        """The review's decision, waiting up to ``wait`` seconds (at most 30) for it."""
        wait = max(0, min(int(wait), _POLL_S))
        data = self._call("GET", f"/api/v1/reviews/{review_id}?wait={wait}",
                          timeout=self.timeout + wait)
        return Decision(id=data["id"], status=data["status"], plan=data.get("plan"),
                        version=data.get("version"), comment=data.get("comment"),
                        step_names=data.get("step_names") or {})

    def review(self, plan: Any, *, timeout: float = 600.0, **sent: Any) -> Decision:
        """Send ``plan`` and wait for the decision up to ``timeout`` seconds (then it is
        returned still pending); ``sent``: ``tools``, ``agent``."""
        deadline = time.monotonic() + timeout
        review_id = self.submit(plan, **sent)
        while True:
            left = deadline - time.monotonic()
            decision = self.decision(review_id, wait=max(0, min(left, _POLL_S)))
            if decision.status != "pending" or left <= 0:
                return decision

    def report(self, run_id: str, event: Any) -> bool:
        """Send one AG-UI event of the approved run ``run_id``; False when the server had
        applied it already (the same ``metadata.eventId``)."""
        if hasattr(event, "model_dump"):
            event = event.model_dump(mode="json", by_alias=True, exclude_none=True)
        event = dict(event)
        metadata = dict(event.get("metadata") or {})
        metadata.setdefault("eventId", uuid.uuid4().hex)
        event["metadata"] = metadata
        return bool(self._call("POST", f"/api/v1/runs/{run_id}/events", event)["applied"])

    def _call(self, method: str, path: str, body: Any = None, *,
              timeout: float | None = None) -> dict[str, Any]:
        headers = {"Accept": "application/json"}
        data = None
        if body is not None:
            data = json.dumps(body, ensure_ascii=False).encode("utf-8")
            headers["Content-Type"] = "application/json"
        if self.token:
            headers["Authorization"] = f"Bearer {self.token}"
        status, answer = self._send(method, self.url + path, data, headers,
                                    timeout or self.timeout)
        try:
            found = json.loads(answer or b"{}")
        except ValueError:
            found = {}
        if status >= 400 or not isinstance(found, dict):
            reason = found.get("error") if isinstance(found, dict) else None
            raise ReviewError(reason or f"PlanBoard answered {status}", status,
                              found.get("code") if isinstance(found, dict) else None)
        return found


def _urllib_send(method: str, url: str, data: bytes | None, headers: dict[str, str],
                 timeout: float) -> tuple[int, bytes]:
    request = urllib.request.Request(url, data=data, headers=headers, method=method)
    try:
        with urllib.request.urlopen(request, timeout=timeout) as answer:
            return answer.status, answer.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read()
    except (urllib.error.URLError, TimeoutError, ConnectionError) as exc:
        reason = getattr(exc, "reason", exc)
        raise UnreachableError(f"PlanBoard at {url.split('/api/')[0]} cannot be reached "
                               f"({reason})") from None

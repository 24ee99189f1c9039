"""The review API on the dashboard's own server: ``/api/v1/`` routes that call core.review.

An agent built elsewhere sends its plan (``POST /api/v1/reviews``), waits for the person's
decision (``GET /api/v1/reviews/{id}?wait=S``), reports its steps as AG-UI events (``POST
/api/v1/runs/{id}/events``) and any AG-UI front-end follows any run (``GET
/api/v1/runs/{id}/events``, server-sent events); ``POST /api/v1/reviews/{id}/decision``
decides a review as the Plan page would. The routes hold no logic: each reads the request,
calls core in a worker thread and answers JSON; an error is one line (English ``error``,
Chinese ``error_zh``, its ``code``) with the status of its kind (:data:`STATUS_OF`),
logged as one line, no traceback.
The caller is a person's API token, or without sign-in the server's OS user, as on the
pages (:mod:`core.access.tokens`).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

import anyio
import streamlit as st
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from core.access.identity import Actor
from core.access.tokens import api_actor
from core.base.messages import Message, render
from core.errors import (
    AccessDeniedError,
    ConflictError,
    InputError,
    InputTooLargeError,
    MalformedInputError,
    NotIdentifiedError,
    PlanBoardError,
    RunExistsError,
    RunNotFoundError,
    StoreError,
)
from core.review.agent_events import accept_event
from core.review.agui_stream import MEDIA_TYPE, open_stream
from core.review.intake import MAX_BODY_BYTES, check_body_size, read_body
from core.review.reviews import decide, submit_body, wait_for_decision
from core.runs.live_views import process_store

__all__ = ["API_PATH", "STATUS_OF", "api_routes", "status_of"]

API_PATH = "/api/v1"
# The status each kind of error answers with (core.errors); an error of a kind not named
# here answers with its nearest named base's.
STATUS_OF: dict[type[PlanBoardError], int] = {
    MalformedInputError: 400,  # the body is not JSON, or not an object
    NotIdentifiedError: 401,
    AccessDeniedError: 403,
    RunNotFoundError: 404,
    ConflictError: 409,  # right request, wrong moment
    RunExistsError: 409,  # the id is taken: asking again is the same conflict
    InputTooLargeError: 413,
    InputError: 422,  # read, but not acceptable
    StoreError: 503,  # the store cannot be read or written now: the caller tries again later
    PlanBoardError: 500,  # the server cannot serve it (its settings, say): not the caller's
}
_log = logging.getLogger(__name__)


def api_routes() -> list[Route]:
    """The API's routes (mounted by app.py, under the server's base path)."""
    base = str(st.get_option("server.baseUrlPath") or "").strip("/")
    root = f"/{base}{API_PATH}" if base else API_PATH
    return [
        Route(f"{root}/reviews", _submit, methods=["POST"]),
        Route(f"{root}/reviews/{{review_id}}", _decision, methods=["GET"]),
        Route(f"{root}/reviews/{{review_id}}/decision", _decide, methods=["POST"]),
        Route(f"{root}/runs/{{run_id}}/events", _report, methods=["POST"]),
        Route(f"{root}/runs/{{run_id}}/events", _follow, methods=["GET"]),
    ]


async def _submit(request: Request) -> Response:
    async def call(actor: Actor) -> Response:
        body = await _body(request)
        review_id = await _core(submit_body, process_store(), body, actor)
        page = str(request.base_url).rstrip("/") + f"/?review={review_id}"  # the Plan page
        return JSONResponse({"id": review_id, "status": "pending", "review_url": page},
                            status_code=201)
    return await _answer(request, call)


async def _decision(request: Request) -> Response:
    async def call(actor: Actor) -> Response:
        wait = _seconds(request.query_params.get("wait"))
        found = await _core(wait_for_decision, process_store(),
                            request.path_params["review_id"], wait, actor)
        return JSONResponse(found.to_json())
    return await _answer(request, call)


async def _decide(request: Request) -> Response:
    async def call(actor: Actor) -> Response:
        data = read_body(await _body(request))
        found = await _core(decide, process_store(), request.path_params["review_id"], data,
                            actor)
        return JSONResponse(found.to_json())
    return await _answer(request, call)


async def _report(request: Request) -> Response:
    async def call(actor: Actor) -> Response:
        data = read_body(await _body(request))
        applied = await _core(accept_event, process_store(), request.path_params["run_id"],
                              data, actor)
        return JSONResponse({"applied": applied}, status_code=202 if applied else 200)
    return await _answer(request, call)


async def _follow(request: Request) -> Response:
    async def call(actor: Actor) -> Response:
        stream = await _core(open_stream, process_store(), request.path_params["run_id"],
                             actor)
        return StreamingResponse(stream, media_type=MEDIA_TYPE,
                                 headers={"Cache-Control": "no-store", "X-Accel-Buffering": "no"})
    return await _answer(request, call)


async def _answer(request: Request, call: Callable[[Actor], Any]) -> Response:
    """``call``'s answer, as the caller; an error as one JSON line with its kind's status."""
    try:
        actor = api_actor(request.headers.get("authorization"), sign_in=_sign_in_on())
        return await call(actor)
    except PlanBoardError as exc:
        status = status_of(exc)
        _log.info("%s %s: %s %s", request.method, request.url.path, status, exc)
        return _error(exc, status)


def status_of(exc: PlanBoardError) -> int:
    """The HTTP status of ``exc``: its kind's in :data:`STATUS_OF`, by its class first,
    then its bases."""
    return next(STATUS_OF[kind] for kind in type(exc).__mro__ if kind in STATUS_OF)


def _error(exc: PlanBoardError, status: int) -> JSONResponse:
    code = exc.message.code if isinstance(exc.message, Message) else None
    return JSONResponse({"error": render(exc, "en"), "error_zh": render(exc, "zh"),
                         "code": code}, status_code=status)


async def _core(function: Callable[..., Any], *args: Any) -> Any:
    return await anyio.to_thread.run_sync(lambda: function(*args))


async def _body(request: Request) -> bytes:
    """The request's body, refused once it passes MAX_BODY_BYTES (not read whole first)."""
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > MAX_BODY_BYTES:
        check_body_size(int(declared))
    chunks, size = [], 0
    async for chunk in request.stream():
        size += len(chunk)
        check_body_size(size)
        chunks.append(chunk)
    return b"".join(chunks)


def _seconds(raw: str | None) -> float:
    try:
        return max(0.0, float(raw)) if raw else 0.0
    except ValueError:
        return 0.0


def _sign_in_on() -> bool:
    from streamlit.auth_util import get_secrets_auth_section

    return bool(get_secrets_auth_section())

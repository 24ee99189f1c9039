"""The one exception tree of PlanBoard; every message says what happened and what to do.

    PlanBoardError                  base: anything PlanBoard reports to a user
    ├── AccessDeniedError           a person's role does not allow what they asked
    │   └── NotIdentifiedError      an API call names no person (no token, a wrong one)
    ├── ConfigError                 settings are missing or wrong (no API key, bad number)
    ├── InputError                  what a caller sent cannot be taken (invalid, unknown)
    │   ├── MalformedInputError     what a caller sent cannot be read (not JSON, no object)
    │   ├── ConflictError           what a caller sent comes at the wrong moment (decided)
    │   └── InputTooLargeError      what a caller sent is larger than PlanBoard takes
    ├── LLMError                    talking to the OpenAI-compatible endpoint failed
    │   ├── LLMAuthError            the endpoint refused the API key (401/403)
    │   ├── LLMBudgetError          the run has made every model call its budget allows
    │   ├── LLMConnectionError      the endpoint could not be reached or timed out
    │   ├── LLMModelNotFoundError   the endpoint does not serve the configured model
    │   └── LLMResponseError        any other error answer, or an unusable reply
    │       └── LLMBadRequestError  the endpoint rejected the request itself (400/422)
    ├── PlanError                   a plan could not be produced or is not acceptable
    │   ├── PlanParseError          model output holds no recognisable plan (keeps ``raw``)
    │   ├── PlanValidationError     a plan has problems (keeps ``problems``)
    │   ├── PlanTooLargeError       a plan has more steps than a run takes
    │   └── UnservableRequestError  no tool can serve the request (keeps ``reasons``)
    ├── ToolError                   a tool could not be used
    │   ├── UnknownToolError        no tool of that name is registered
    │   ├── ToolArgumentError       arguments do not match the tool's schema
    │   ├── ToolExecutionError      the tool ran and failed (a refused request, bad input)
    │   └── ToolsetError            a toolset or tool server could not be loaded or reached
    └── StoreError                  the run store could not do what was asked
        ├── RunNotFoundError        no run has that id
        └── RecordLostError         the run engine's record (dbos.sqlite) is missing or damaged

An error raised with a :class:`core.base.messages.Message` (``ToolExecutionError(msg(
"tool.calculate_failed", error=...))``) keeps it as ``message``: ``str(exc)`` is the
English one-liner (logs, records, the command line in English), and
``core.base.messages.render(exc, language)`` words it in the reader's language. An error
raised with a plain string has no ``message`` and reads the same in every language.

A step's recorded error is text; :func:`is_transport_error` says whether it reports that a
service failed to answer (a timeout, a 429 or 5xx, an unreachable endpoint), which says
nothing about the call itself: trying it again may well succeed.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from core.base.messages import Message, msg

__all__ = [
    "LLM_FAILURE",
    "AccessDeniedError",
    "ConfigError",
    "ConflictError",
    "InputError",
    "InputTooLargeError",
    "LLMAuthError",
    "LLMBadRequestError",
    "LLMBudgetError",
    "LLMConnectionError",
    "LLMError",
    "LLMModelNotFoundError",
    "LLMResponseError",
    "MalformedInputError",
    "NotIdentifiedError",
    "PlanBoardError",
    "PlanError",
    "PlanParseError",
    "PlanTooLargeError",
    "PlanValidationError",
    "RecordLostError",
    "RunExistsError",
    "RunNotFoundError",
    "StoreError",
    "ToolArgumentError",
    "ToolError",
    "ToolExecutionError",
    "ToolsetError",
    "UnknownToolError",
    "UnservableRequestError",
    "is_transport_error",
]

# The executor prefixes every LLMError with LLM_FAILURE; tools and old records say it in
# their own words. Matching too much only makes a failure count as a failure.
LLM_FAILURE = "the model endpoint failed"
_TRANSPORT = re.compile(
    LLM_FAILURE + r"|time(?:d)? ?out|超时|did not answer within|rate limit|限流|\b429\b"
    r"|\b5\d\d\b|temporar|connection|cannot reach|unreachable|unavailable|try again later"
    r"|稍后再试|无法连接", re.IGNORECASE,
)


class PlanBoardError(Exception):
    """Base of every error PlanBoard shows to a user as one line; ``message`` is its code
    and parameters when it was raised with one (None for a plain string)."""

    def __init__(self, text: str | Message = "") -> None:
        self.message: Message | None = text if isinstance(text, Message) else None
        super().__init__(str(text))


class AccessDeniedError(PlanBoardError):
    """Raised when a person's role (core.access.policy) does not allow what they asked;
    nothing has happened when it is raised."""


class NotIdentifiedError(AccessDeniedError):
    """Raised when an API call needs a person's token and holds none, or a wrong one."""


class ConfigError(PlanBoardError):
    """Raised when settings are missing or invalid."""


class InputError(PlanBoardError):
    """Raised when what a caller sent (a plan for review, an agent's event) cannot be
    taken: invalid, inconsistent or naming what does not exist; nothing was stored."""


class MalformedInputError(InputError):
    """Raised when what a caller sent cannot be read at all: it is not JSON, or not the JSON
    object expected."""


class ConflictError(InputError):
    """Raised when what a caller sent is well formed but comes at the wrong moment: a
    decision on a review decided already, events for a run not approved, an event out of
    order."""


class InputTooLargeError(InputError):
    """Raised when what a caller sent passes a stated limit (body size, steps, events)."""


class LLMError(PlanBoardError):
    """Raised when a call to the language model endpoint fails."""


class LLMAuthError(LLMError):
    """Raised when the endpoint rejects the API key."""


class LLMBudgetError(LLMError):
    """Raised instead of a model call when the run has spent its model-call budget."""


class LLMConnectionError(LLMError):
    """Raised when the endpoint cannot be reached or does not answer in time."""


class LLMModelNotFoundError(LLMError):
    """Raised when the endpoint does not know the configured model."""


class LLMResponseError(LLMError):
    """Raised for any other error status, or a reply PlanBoard cannot use."""


class LLMBadRequestError(LLMResponseError):
    """Raised when the endpoint rejects the request (for example an unsupported tool_choice)."""


class PlanError(PlanBoardError):
    """Raised when a plan cannot be produced or accepted."""


class PlanParseError(PlanError):
    """Raised when text holds no recognisable plan; ``raw`` keeps the text."""

    def __init__(self, message: str | Message, raw: str = "") -> None:
        super().__init__(message)
        self.raw = raw


class PlanValidationError(PlanError):
    """Raised when a plan has problems; ``problems`` lists them by step id."""

    def __init__(self, problems: Sequence[Message | str]) -> None:
        super().__init__(msg("plan.problems", problems=list(problems)))
        self.problems = list(problems)


class PlanTooLargeError(PlanError):
    """Raised before a run starts when its plan (or one of its phases) has more steps than
    a run takes (core.plan.size)."""


class UnservableRequestError(PlanError):
    """Raised before any run is recorded when nothing can serve the request (the offline
    rules map no part of it to a tool); ``reasons`` says why, part by part."""

    def __init__(self, message: str | Message, reasons: list[str] | None = None) -> None:
        super().__init__(message)
        self.reasons = list(reasons or [])


class ToolError(PlanBoardError):
    """Raised when a tool cannot be used."""


class UnknownToolError(ToolError):
    """Raised when no tool of the given name is registered."""


class ToolArgumentError(ToolError):
    """Raised when arguments do not match a tool's parameter schema."""


class ToolExecutionError(ToolError):
    """Raised when a tool runs and fails for a reason it can explain."""


class ToolsetError(ToolError):
    """Raised when a toolset named in PLANBOARD_TOOLSETS, or a tool server of the MCP
    configuration, cannot be loaded, started or reached."""


class StoreError(PlanBoardError):
    """Raised when the run store cannot do what was asked."""


class RunNotFoundError(StoreError):
    """Raised when no run has the given id."""


class RunExistsError(StoreError):
    """Raised when a run would be recorded under the id of one that exists: ``run_id``.

    An approval of a plan version gives its run the version's id
    (:func:`core.runs.dispatch.version_run_id`), so a second approval of the same version
    (a second click, another tab or process) finds the first run instead of starting one.
    """

    def __init__(self, text: str | Message, run_id: str) -> None:
        super().__init__(text)
        self.run_id = run_id


class RecordLostError(StoreError):
    """Raised when the run engine's record of runs (its SQLite file) is missing or damaged:
    runs cannot be started, resumed or steered until it is restored or made afresh."""


def is_transport_error(error: str | None) -> bool:
    """True when ``error`` says the endpoint or a service failed to answer."""
    return bool(_TRANSPORT.search(error or ""))

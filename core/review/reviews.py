"""A plan from another agent stored as a run waiting for a person, and the person's decision.

A review is a run like PlanBoard's own (the History, Audit and run pages list it): its
plan is version 1 (``draft``), its status ``planned``, and its options hold ``review``:
the agent, the declared tools, the agent's step names and the
decision. The decision moves once, from ``pending``: ``approved`` names the exact version
approved (a person's edit is a new version, ``manual``, stored before the decision), and
``rejected`` carries the reviewer's comment and cancels the run. Approving a plan with a
side effect needs the approver role, as on the Plan page (:mod:`core.access.policy`); a
tool the agent did not declare read-only counts as a side effect. The decision is written
in one transaction that first takes the run's write lock, so of two people deciding at
once one is told that the review is already decided.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import ValidationError

from core.access.audit import Act, insert_act
from core.access.identity import Actor
from core.access.policy import access_for, start_action
from core.base.language import Language
from core.base.messages import Message, msg, render
from core.errors import ConflictError, InputError, RunNotFoundError
from core.execution.events import RunEvent
from core.lifecycle import TERMINAL_STATUSES, Control
from core.plan.model import Plan
from core.review.declared_tools import declared_problems, declared_registry
from core.review.intake import Submission, read_body, read_submission
from core.store.run_store import RunRecord, RunStore
from core.store.schema import insert_event, runs, scrub_options, update_run, upsert_plan, utc_now
from core.tools.registry import ToolRegistry

__all__ = ["MAX_WAIT_S", "REVIEW", "Decision", "approve_review", "decide", "decision_of",
           "declared_tools", "is_review", "pending_review", "reject_review", "review_on_page",
           "review_plan", "review_problems", "review_record", "review_registry",
           "review_text", "run_agent", "run_controls", "submit_body", "submit_review",
           "wait_for_decision"]

REVIEW = "review"  # the run option that makes a run a review, and holds it
MAX_WAIT_S = 30.0  # a long poll holds a request (and a server thread) at most this long
_POLL_S = 0.1
State = Literal["pending", "approved", "rejected"]


@dataclass(frozen=True)
class Decision:
    """Where a review stands: ``pending``, ``approved`` (with the approved ``version``
    and its canonical ``plan``) or ``rejected`` (with the reviewer's ``comment``)."""

    review_id: str
    status: State
    agent: str = ""
    version: int | None = None
    plan: dict[str, Any] | None = None
    comment: str | None = None
    decided_by: str | None = None
    step_names: dict[str, str] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        """What the API answers (fields without a value left out)."""
        data = {"id": self.review_id, "status": self.status, "agent": self.agent,
                "version": self.version, "plan": self.plan, "comment": self.comment,
                "decided_by": self.decided_by, "step_names": self.step_names or None}
        return {key: value for key, value in data.items() if value is not None}


def submit_review(store: RunStore, submission: Submission, actor: Actor | None) -> str:
    """Store ``submission`` as a review waiting for a person; return its id. ``actor``
    (the agent's person; None: the OS user) needs the planner's role."""
    access = access_for(actor, store)
    access.require("plan")
    review = {"agent": submission.agent,
              # kept as text: the schemas are not secrets, and a parameter named "token"
              # must keep its schema (options drop text under secret-looking names)
              "tools": json.dumps(submission.tools, ensure_ascii=False),
              "step_names": submission.step_names, "state": "pending"}
    return store.create_run(submission.plan.goal, plan=submission.plan,
                            options={REVIEW: review, "owner": access.actor.record()})


def is_review(record: RunRecord) -> bool:
    """True when ``record`` is a plan another agent sent for review."""
    return isinstance(record.options.get(REVIEW), dict)


def review_record(store: RunStore, review_id: str) -> RunRecord:
    """The review's run; RunNotFoundError for an id that is no review."""
    try:
        record = store.get_run(review_id)
    except RunNotFoundError:
        record = None
    if record is None or not is_review(record):
        raise RunNotFoundError(msg("review.not_found", review_id=json.dumps(review_id)))
    return record


def declared_tools(record: RunRecord) -> list[dict[str, Any]]:
    """The tools the review's agent declared (:func:`read_declared_tools`' shape)."""
    return json.loads(record.options[REVIEW].get("tools") or "[]")


def pending_review(record: RunRecord) -> bool:
    """True when ``record`` is a review still waiting for a person's decision."""
    return (is_review(record) and record.status == "planned"
            and record.options[REVIEW].get("state", "pending") == "pending")


def review_text(record: RunRecord, language: Language) -> str | None:
    """"Plan sent for review by the agent …: approved" for a review's run (None for a run
    of PlanBoard's own)."""
    if not is_review(record):
        return None
    review = record.options[REVIEW]
    state = review.get("state", "pending")
    if state == "pending" and record.status in TERMINAL_STATUSES:
        state = "rejected"
    agent = review.get("agent") or msg("review.unnamed_agent")
    return render(msg("review.sent_by", agent=agent, state=msg(f"review.state.{state}")),
                  language)


def run_agent(record: RunRecord, language: Language) -> str:
    """Who sent the run's plan: the agent's name for a review's run (its word for an
    unnamed one), PlanBoard for a run of PlanBoard's own planner."""
    if not is_review(record):
        return "PlanBoard"
    return record.options[REVIEW].get("agent") or render(msg("review.unnamed_agent"), language)


def review_registry(record: RunRecord) -> ToolRegistry:
    """The tools the review's agent declared, as a registry (never called)."""
    return declared_registry(declared_tools(record), record.options[REVIEW].get("agent", ""))


def review_plan(record: RunRecord) -> Plan:
    """The review's plan: as the agent sent it (version 1), or as approved."""
    return record.plan or Plan(goal=record.request)


def review_on_page(store: RunStore, review_id: str, actor: Actor | None) -> RunRecord:
    """The review ``review_id`` for ``actor`` to see; RunNotFoundError for no review,
    AccessDeniedError for one they may not see."""
    record = review_record(store, review_id)
    access_for(actor, store).require("read", record)
    return record


def review_problems(record: RunRecord, plan: Plan) -> list[Message]:
    """``plan``'s problems as a version of the review ``record``: against the tools its
    agent declared, as the plan was checked when it was sent."""
    return declared_problems(plan, declared_tools(record), record.options[REVIEW].get("agent", ""))


def run_controls(record: RunRecord, controls: frozenset[Control]) -> frozenset[Control]:
    """The controls of ``controls`` that reach the run: none for a review's run, which its
    agent carries out (PlanBoard can neither pause, resume nor cancel it, nor run a step of
    it again)."""
    return frozenset() if is_review(record) else controls


def decision_of(store: RunStore, review_id: str, actor: Actor | None = None) -> Decision:
    """The review's decision as it stands (``actor`` must be allowed to see the run)."""
    record = review_record(store, review_id)
    access_for(actor, store).require("read", record)
    review = record.options[REVIEW]
    state: State = review.get("state", "pending")
    comment = review.get("comment")
    if state == "pending" and record.status in TERMINAL_STATUSES:  # cancelled undecided
        state, comment = "rejected", render(msg("review.cancelled_undecided"), "en")
    version = review.get("approved_version")
    plan = None
    if state == "approved" and version is not None:
        plan = next(v.plan for v in store.plan_versions(review_id) if v.version == version)
    return Decision(review_id=review_id, status=state, agent=review.get("agent", ""),
                    version=version, plan=plan.canonical() if plan else None,
                    comment=comment, decided_by=review.get("decided_by"),
                    step_names=review.get("step_names") or {})


def wait_for_decision(store: RunStore, review_id: str, wait_s: float,
                      actor: Actor | None = None) -> Decision:
    """The decision, once it is no longer pending or ``wait_s`` (at most
    :data:`MAX_WAIT_S`) has passed; the store is read again only when the run changed."""
    deadline = time.monotonic() + max(0.0, min(wait_s, MAX_WAIT_S))
    marker = store.run_marker(review_id)  # before the decision: a change after it shows
    decision = decision_of(store, review_id, actor)
    while decision.status == "pending" and time.monotonic() < deadline:
        time.sleep(min(_POLL_S, max(0.0, deadline - time.monotonic())))
        now = store.run_marker(review_id)
        if now != marker:
            marker, decision = now, decision_of(store, review_id, actor)
    return decision


def approve_review(store: RunStore, review_id: str, actor: Actor | None,
                   edited: Plan | None = None) -> Decision:
    """Approve the review's plan, or ``edited`` (the person's edit of it, stored as a new
    version first); needs the approver role when a step has a side effect."""
    record = review_record(store, review_id)
    registry = review_registry(record)
    current = review_plan(record)
    approved = current
    if edited is not None and edited.canonical() != current.canonical():
        approved = _edit_version(edited, current, record)
    access = access_for(actor, store)
    access.require(start_action(approved, registry), record)
    decided = {"state": "approved", "approved_version": approved.version}
    acts: list[Act] = []
    if approved is not current:  # the person's edit is the version they approved
        acts.append(Act.by(access.actor, "edit", run_id=review_id, version=approved.version))
    acts.append(Act.by(access.actor, "approve", run_id=review_id, version=approved.version,
                       detail={"agent": record.options[REVIEW].get("agent", "")}))
    _decide(store, review_id, access.actor, decided, acts,
            new_version=approved if approved is not current else None)
    return decision_of(store, review_id, actor)


def reject_review(store: RunStore, review_id: str, actor: Actor | None,
                  comment: str) -> Decision:
    """Reject the review's plan with ``comment`` (the agent receives it); the run is
    cancelled. Anyone who may approve the plan may reject it."""
    record = review_record(store, review_id)
    access = access_for(actor, store)
    access.require(start_action(review_plan(record), review_registry(record)), record)
    decided = {"state": "rejected", "comment": comment.strip()}
    rejected = Act.by(access.actor, "reject_plan", run_id=review_id,
                      version=record.plan.version if record.plan else None,
                      detail={"comment": comment.strip()})
    _decide(store, review_id, access.actor, decided, [rejected],
            event=RunEvent(kind="cancelled", data={"reason": comment.strip()}))
    return decision_of(store, review_id, actor)


def _edit_version(edited: Plan, current: Plan, record: RunRecord) -> Plan:
    """``edited`` as the next version of ``current`` (the plan of the review ``record``),
    every step pending; InputError for an edit with problems."""
    version = Plan.model_validate({**edited.canonical(), "id": current.id,
                                   "version": current.version + 1})
    problems = review_problems(record, version)
    if problems:
        more = msg("review.more_problems", count=len(problems) - 1) if len(problems) > 1 else ""
        raise InputError(msg("review.edit_changes_steps", first=problems[0], more=more))
    return version


def _decide(store: RunStore, review_id: str, actor: Actor, decided: dict[str, Any],
            acts: list[Act], *, new_version: Plan | None = None,
            event: RunEvent | None = None) -> None:
    """Write the decision, its audit entries ``acts`` (and the edited version, or the
    rejection's cancel) in one transaction, if the review is still pending; ConflictError
    when it was decided first."""
    at = utc_now()

    def write(conn: Any) -> None:
        update_run(conn, review_id, updated_at=at)  # the run's write lock, taken first
        options = conn.execute(runs.select().with_only_columns(runs.c.options, runs.c.status)
                               .where(runs.c.id == review_id)).first()
        review = dict((options[0] or {}).get(REVIEW) or {})
        if review.get("state", "pending") != "pending" or options[1] != "planned":
            state = review.get("state", "pending")
            state = "rejected" if state == "pending" else state  # cancelled undecided
            raise ConflictError(msg("review.decided", review_id=review_id,
                                 status=msg(f"review.state.{state}")))
        review.update(decided, decided_by=actor.name, decided_at=at.isoformat())
        values: dict[str, Any] = {"options": scrub_options({**options[0], REVIEW: review})}
        if event is not None:
            values.update(status="cancelled", finished_at=at)
        update_run(conn, review_id, **values)
        if new_version is not None:
            upsert_plan(conn, review_id, new_version, None, at, "manual")
        if event is not None:
            insert_event(conn, review_id, event)
        for act in acts:
            insert_act(conn, act)

    store.transaction(write)


def decide(store: RunStore, review_id: str, data: dict[str, Any],
           actor: Actor | None) -> Decision:
    """A person's decision sent as JSON: ``{"decision": "approve"}`` (with ``plan``, the
    edited plan, when they changed it) or ``{"decision": "reject", "comment": "..."}``."""
    choice = data.get("decision")
    if choice == "reject":
        comment = data.get("comment")
        if not isinstance(comment, str) or not comment.strip():
            raise InputError(msg("review.bad_field", field="comment",
                                 detail="say why the plan is rejected"))
        return reject_review(store, review_id, actor, comment)
    if choice != "approve":
        raise InputError(msg("review.bad_field", field="decision",
                             detail='"approve" or "reject"'))
    edited = None
    if data.get("plan") is not None:
        try:
            edited = Plan.model_validate(data["plan"])
        except ValidationError as exc:
            error = exc.errors()[0]
            where = ".".join(str(part) for part in error["loc"])
            raise InputError(msg("review.bad_field", field=f"plan.{where}",
                                 detail=error["msg"])) from None
    return approve_review(store, review_id, actor, edited)


def submit_body(store: RunStore, body: bytes, actor: Actor | None) -> str:
    """Read a request body (:mod:`core.review.intake`) and store it as a review; its id."""
    return submit_review(store, read_submission(read_body(body)), actor)

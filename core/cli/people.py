"""Who may do what from a terminal: each command's role, ``roles`` and ``audit``.

The command line acts as the OS user. When roles are configured (core.access.roles) a
command is checked before it does anything (:func:`require_for_command`), and the runner
checks each run it changes the same way the dashboard's pages are checked.
"""

from __future__ import annotations

import argparse
from typing import Any

from core.access.audit import AUDIT_ACTIONS, act_text, acts
from core.access.policy import Action, access_for, grant_role, revoke_role
from core.access.roles import ROLES, RoleBook
from core.cli.output import print_json
from core.cli.text import cli_language, say

__all__ = ["add_people_commands", "require_for_command"]

# what a command needs at the least; the runner checks the run itself (its side effects,
# its owner) when the command gets there
_COMMAND_NEEDS: dict[str, Action] = {
    "plan": "plan", "refine": "plan", "run": "run_read_only", "followup": "steer",
    "rerun": "steer", "resume": "steer", "pause": "steer", "cancel": "steer",
    "runs": "read", "show": "read", "export": "read", "audit": "read", "demo": "admin",
}


def require_for_command(args: argparse.Namespace) -> None:
    """AccessDeniedError when the OS user's role does not reach what ``args.command``
    needs at the least (roles not configured: nothing is checked, nothing opened)."""
    needed = _COMMAND_NEEDS.get(args.command)
    if args.command == "templates":
        needed = "plan" if args.templates_command in ("save", "delete") else "read"
    if args.command == "roles":
        needed = "read" if args.roles_command == "list" else "admin"
    if needed is None:
        return
    from core.store.database import default_store_exists
    from core.store.run_store import RunStore

    if not default_store_exists() and not RoleBook(None).configured:
        return  # no roles file and no store to hold a grant: nothing is checked or made

    store = RunStore()
    try:
        access_for(None, store).require(needed)
    finally:
        store.close()


def add_people_commands(subparsers: Any) -> None:
    """Add ``roles list|grant|revoke`` and ``audit`` to the ``python -m core`` parser."""
    roles = subparsers.add_parser("roles", help="the roles given in the run store")
    verbs = roles.add_subparsers(dest="roles_command", required=True)
    listing = verbs.add_parser("list", help="list the roles given, and yours")
    listing.add_argument("--json", action="store_true", help="print JSON")
    listing.set_defaults(handler=cmd_roles_list)
    grant = verbs.add_parser("grant", help="give a person a role (admins)")
    grant.add_argument("person", help="an e-mail, or an OS user name")
    grant.add_argument("role", choices=ROLES)
    grant.set_defaults(handler=cmd_roles_grant)
    revoke = verbs.add_parser("revoke", help="take back the role given to a person (admins)")
    revoke.add_argument("person")
    revoke.set_defaults(handler=cmd_roles_revoke)

    audit = subparsers.add_parser("audit", help="who did what: approvals, confirmations ...")
    audit.add_argument("--person", help="only this person's acts")
    audit.add_argument("--action", choices=AUDIT_ACTIONS, help="only this kind of act")
    audit.add_argument("--run", dest="run_id", help="only the acts on this run")
    audit.add_argument("--json", action="store_true", help="print JSON")
    audit.set_defaults(handler=cmd_audit)


def cmd_roles_list(args: argparse.Namespace) -> int:
    runner = args.runner()
    book = RoleBook(runner.store)
    mine = runner.access(None)
    if args.json:
        print_json({"you": {**mine.actor.record(), "role": mine.role},
                    "configured": book.configured, "file": str(book.path),
                    "grants": [g.model_dump(mode="json") for g in book.grants()]})
        return 0
    print(say("roles_you", person=mine.actor.name, role=mine.role or "-")
          if book.configured else say("roles_off", path=book.path))
    for grant in book.grants():
        print(f"{grant.subject}  {grant.role}  ({grant.granted_by}, "
              f"{grant.granted_at.isoformat(timespec='seconds')})")
    return 0


def cmd_roles_grant(args: argparse.Namespace) -> int:
    grant = grant_role(args.runner().store, args.person, args.role, None)
    print(say("role_granted", person=grant.subject, role=grant.role))
    return 0


def cmd_roles_revoke(args: argparse.Namespace) -> int:
    if not revoke_role(args.runner().store, args.person, None):
        print(say("role_none", person=args.person))
        return 1
    print(say("role_revoked", person=args.person))
    return 0


def _sees(access: Any, store: Any, run_id: str | None) -> bool:
    """Whether the person sees the acts on ``run_id`` (a run since deleted: admins only)."""
    from core.errors import RunNotFoundError

    if run_id is None:
        return True
    try:
        return access.sees(store.get_run(run_id))
    except RunNotFoundError:
        return access.allows("admin")


def cmd_audit(args: argparse.Namespace) -> int:
    runner = args.runner()
    access = runner.access(None)
    found = [act for act in acts(runner.store, person=args.person, action=args.action,
                                 run_id=args.run_id)
             if access.visibility == "team" or _sees(access, runner.store, act.run_id)]
    if args.json:
        print_json([act.model_dump(mode="json") for act in found])
        return 0
    for act in found:
        run = f"{act.run_id}  " if act.run_id else ""
        print(f"{run}{act_text(act, cli_language())}")
    return 0

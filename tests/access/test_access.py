"""Who may do what (core.access): the roles file, the store's grants, the policy, the
runner's refusals with nothing done, who did what in show --json and the export, and the
command line acting as the OS user."""

from __future__ import annotations

import getpass
import json

import pytest

from core.access.audit import acts
from core.access.identity import Actor, os_actor, signed_in_actor
from core.access.policy import access_for, grant_role, start_action
from core.access.roles import RoleBook, roles_file
from core.cli.main import main
from core.errors import AccessDeniedError, ConfigError
from core.execution.scheduler import RunOptions
from core.llm.engine import Engine
from core.plan.model import Plan, Step
from core.runs.export import export_run
from tests.support.durable_runs import refund_plan
from tests.support.shop import refunds_for
from tests.support.waiting import DEFAULT_TIMEOUT_S

pytestmark = pytest.mark.usefixtures("dbos_of_the_module")

VIEWER = Actor("vic@example.com", "sign-in")
EDITOR = Actor("eve@example.com", "sign-in")
APPROVER = Actor("ann@example.com", "sign-in")
ROLES = """
default = "viewer"
[emails]
"Eve@Example.com" = "editor"
"ann@example.com" = "approver"
[claims.groups]
planboard-admins = "admin"
"""


def write_roles(text: str = ROLES) -> None:
    path = roles_file()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def read_only_plan() -> Plan:
    return Plan(goal="look up order 88231", steps=[
        Step(id="s1", description="look up order 88231", tool="query_order",
             args={"order_id": "88231"}),
        Step(id="s2", description="say what it is", tool=None, depends_on=["s1"])])


# ---- roles and the policy ---------------------------------------------------------------

def test_without_roles_everyone_may_everything(store):
    access = access_for(VIEWER, store)
    assert not access.checked and access.allows("admin")


def test_roles_come_from_emails_claims_and_the_default(store, registry):
    write_roles()
    book = RoleBook(store)
    assert book.role_of(EDITOR) == "editor"  # e-mails are matched without case
    assert book.role_of(Actor("zed@example.com", "sign-in")) == "viewer"
    admin = signed_in_actor({"email": "x@example.com", "groups": ["a", "planboard-admins"]})
    assert book.role_of(admin) == "admin"
    assert start_action(refund_plan(), registry) == "approve"
    assert start_action(read_only_plan(), registry) == "run_read_only"
    assert start_action(read_only_plan(), registry, RunOptions(new_versions="approve")) == \
        "approve"


def test_a_grant_in_the_store_overrides_the_file_and_is_an_admins_to_give(store):
    write_roles('[emails]\n"boss@example.com" = "admin"\n')
    with pytest.raises(AccessDeniedError, match="has no role"):
        grant_role(store, "eve@example.com", "approver", EDITOR)
    grant_role(store, "Eve@example.com", "approver", Actor("boss@example.com", "sign-in"))
    assert RoleBook(store).role_of(EDITOR) == "approver"
    [given] = acts(store, action="grant_role")
    assert (given.person, given.detail) == ("boss@example.com",
                                            {"subject": "eve@example.com", "role": "approver"})


def test_a_broken_roles_file_is_one_line_naming_it(store):
    write_roles('default = "boss"\n')
    with pytest.raises(ConfigError, match=r"roles file .* cannot be read"):
        RoleBook(store)


# ---- the runner refuses, and nothing happens -----------------------------------------

def test_an_approval_posted_by_a_viewer_or_an_editor_runs_nothing(runner, registry):
    write_roles()
    for person in (VIEWER, EDITOR):
        with pytest.raises(AccessDeniedError, match="needs the approver role"):
            runner.start("refund", refund_plan(), engine=Engine(registry=registry),
                         actor=person)
    assert runner.store.list_runs() == [] and refunds_for("88231") == []
    assert acts(runner.store) == []


def test_an_editor_starts_a_read_only_run_and_owns_it(runner, registry):
    write_roles()
    run_id = runner.start("look", read_only_plan(), engine=Engine(registry=registry),
                          actor=EDITOR)
    record = runner.wait(run_id, timeout=DEFAULT_TIMEOUT_S)
    assert record.status == "completed"
    assert record.options["owner"] == {"name": "eve@example.com", "via": "sign-in"}
    other = Actor("ed@example.com", "sign-in")
    write_roles(ROLES.replace("[emails]", '[emails]\n"ed@example.com" = "editor"'))
    with pytest.raises(AccessDeniedError, match="only its owner"):
        runner.cancel(run_id, actor=other)


def test_each_approval_and_confirmation_names_the_person(runner, registry, capsys):
    write_roles()
    engine = Engine(registry=registry)
    run_id = runner.start("refund", refund_plan(), engine=engine, actor=APPROVER,
                          options=RunOptions(confirm_side_effects=True))
    record = runner.wait(run_id, timeout=DEFAULT_TIMEOUT_S, until_confirmation=True)
    assert record.status == "waiting_confirmation"
    with pytest.raises(AccessDeniedError, match=r"vic@example.com \(role: viewer\) may not "
                                                 "approve side effects"):
        runner.confirm(run_id, "s2", actor=VIEWER)
    assert refunds_for("88231") == []
    runner.confirm(run_id, "s2", actor=APPROVER)
    assert runner.wait(run_id, timeout=DEFAULT_TIMEOUT_S).status == "completed"
    assert len(refunds_for("88231")) == 1

    assert main(["show", run_id, "--json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert shown["owner"] == {"name": "ann@example.com", "via": "sign-in"}
    assert [(a["action"], a["person"], a["version"], a["step_id"]) for a in shown["audit"]] == [
        ("approve", "ann@example.com", 1, None), ("confirm", "ann@example.com", 1, "s2")]
    report = export_run(runner.store, run_id, "md", language="en")
    assert "Started by ann@example.com (signed in)" in report
    assert "ann@example.com (signed in) approved version 1" in report
    assert "ann@example.com (signed in) confirmed step s2" in report
    exported = json.loads(export_run(runner.store, run_id, "json"))
    assert [a["action"] for a in exported["audit"]] == ["approve", "confirm"]


# ---- the command line acts as the OS user ----------------------------------------------

def test_the_cli_as_a_user_without_the_role_is_refused(capsys):
    write_roles(f'[os_users]\n"{getpass.getuser()}" = "editor"\n')
    plan = roles_file().parent / "refund.json"
    plan.write_text(json.dumps(refund_plan().canonical()), encoding="utf-8")
    assert main(["run", "--plan", str(plan), "--yes", "--offline"]) == 1
    error = capsys.readouterr().err
    assert f"{getpass.getuser()} (role: editor) may not approve side effects" in error
    assert refunds_for("88231") == []
    assert main(["demo", "reset"]) == 1
    assert "needs the admin role" in capsys.readouterr().err


def test_the_cli_records_the_os_user(capsys):
    plan = roles_file().parent / "look.json"
    plan.parent.mkdir(parents=True, exist_ok=True)
    plan.write_text(json.dumps(read_only_plan().canonical()), encoding="utf-8")
    assert main(["run", "--plan", str(plan), "--yes", "--offline", "--json"]) == 0
    run_id = json.loads(capsys.readouterr().out)["run_id"]
    assert main(["audit", "--run", run_id, "--json"]) == 0
    [approved] = json.loads(capsys.readouterr().out)
    assert (approved["person"], approved["via"]) == (os_actor().name, "os")

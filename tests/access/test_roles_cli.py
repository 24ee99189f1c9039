"""``roles list|grant|revoke`` and ``audit`` from a terminal, as the OS user: the first
grant configures roles, only an admin gives or takes one back, every grant is in the log,
and the log shows only the acts on runs the reader may see."""

from __future__ import annotations

import getpass
import json

import pytest

from core.access.audit import record_act
from core.access.identity import Actor
from core.access.roles import roles_file
from core.cli.main import main

pytestmark = pytest.mark.usefixtures("dbos_of_the_module")

ME = getpass.getuser()


def test_roles_are_given_listed_and_taken_back_and_each_is_in_the_log(capsys):
    assert main(["roles", "list"]) == 0
    assert "Roles are not configured" in capsys.readouterr().out
    assert main(["roles", "grant", ME, "admin"]) == 0  # the first grant configures roles
    assert capsys.readouterr().out == f"{ME} now has the role admin.\n"
    assert main(["roles", "grant", "bob@example.com", "viewer"]) == 0
    capsys.readouterr()

    assert main(["roles", "list", "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert (listed["you"]["name"], listed["you"]["role"], listed["configured"]) == (
        ME, "admin", True)
    assert sorted((g["subject"], g["kind"], g["role"], g["granted_by"])
                  for g in listed["grants"]) == sorted([
        (ME, "os_user", "admin", ME), ("bob@example.com", "email", "viewer", ME)])
    assert main(["roles", "list"]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"You are {ME}, with the role admin.\n")
    assert f"bob@example.com  viewer  ({ME}, " in out

    assert main(["roles", "revoke", "bob@example.com"]) == 0
    assert capsys.readouterr().out == "bob@example.com's role was taken back.\n"
    assert main(["roles", "revoke", "bob@example.com"]) == 1  # nothing to take back
    assert capsys.readouterr().out == "bob@example.com was given no role in the run store.\n"

    assert main(["audit", "--json", "--person", ME]) == 0
    logged = json.loads(capsys.readouterr().out)
    assert [(a["action"], a["detail"]) for a in logged] == [
        ("grant_role", {"subject": ME, "role": "admin"}),
        ("grant_role", {"subject": "bob@example.com", "role": "viewer"}),
        ("revoke_role", {"subject": "bob@example.com"})]
    assert main(["audit", "--action", "revoke_role"]) == 0
    [line] = capsys.readouterr().out.splitlines()
    assert line.endswith(f" · {ME} (OS user) took a role back")


def test_only_an_admin_gives_a_role(capsys):
    assert main(["roles", "grant", ME, "viewer"]) == 0
    capsys.readouterr()
    assert main(["roles", "grant", ME, "admin"]) == 1
    assert "needs the admin role" in capsys.readouterr().err
    assert main(["roles", "revoke", ME]) == 1
    assert "needs the admin role" in capsys.readouterr().err
    assert main(["roles", "list"]) == 0  # reading them needs a role, not admin
    assert capsys.readouterr().out.startswith(f"You are {ME}, with the role viewer.\n")


def test_the_log_shows_acts_on_a_run_since_deleted_to_admins_only(capsys, store):
    path = roles_file()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f'visibility = "owner"\n[os_users]\n"{ME}" = "viewer"\n', encoding="utf-8")
    record_act(store, Actor("ann@example.com", "sign-in"), "approve", run_id="gone", version=1)
    record_act(store, Actor("ann@example.com", "sign-in"), "cancel")
    assert main(["audit", "--json"]) == 0
    assert [a["action"] for a in json.loads(capsys.readouterr().out)] == ["cancel"]
    path.write_text(f'visibility = "owner"\n[os_users]\n"{ME}" = "admin"\n', encoding="utf-8")
    assert main(["audit", "--json"]) == 0
    assert [a["action"] for a in json.loads(capsys.readouterr().out)] == ["approve", "cancel"]

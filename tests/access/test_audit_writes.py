"""Who did what is written like every other write of the run store: a database blip is
ridden out, a lasting failure is one line, and an act that writes to the store lands with
its audit entry or not at all."""

from __future__ import annotations

import pytest

from core.access.audit import acts, record_act
from core.access.identity import Actor
from core.access.policy import grant_role, revoke_role
from core.access.roles import RoleBook
from core.errors import StoreError
from tests.support.failing_writes import failing_inserts

ADMIN = Actor("boss@example.com", "sign-in")


def test_a_blip_while_an_act_is_recorded_is_ridden_out(store):
    with failing_inserts(store.engine, "audit_log", "database is locked", times=1) as failed:
        record_act(store, ADMIN, "reset_demo", detail={"paths": []})
    assert len(failed) == 1
    assert [(a.person, a.action) for a in acts(store)] == [(ADMIN.name, "reset_demo")]


def test_an_act_that_cannot_be_recorded_is_a_one_line_store_error(store):
    with failing_inserts(store.engine, "audit_log", "disk I/O error"), \
            pytest.raises(StoreError) as raised:
        record_act(store, ADMIN, "reset_demo")
    assert "disk I/O error" in str(raised.value) and "\n" not in str(raised.value)
    assert acts(store) == []


def test_a_role_given_lands_with_its_audit_entry_or_not_at_all(store):
    with failing_inserts(store.engine, "audit_log", "disk I/O error"), \
            pytest.raises(StoreError):
        grant_role(store, "eve@example.com", "editor", ADMIN)
    assert RoleBook(store).grants() == [] and acts(store) == []
    with failing_inserts(store.engine, "audit_log", "database is locked", times=1):
        grant_role(store, "eve@example.com", "editor", ADMIN)
    assert [g.subject for g in RoleBook(store).grants()] == ["eve@example.com"]
    assert [a.action for a in acts(store)] == ["grant_role"]


def test_a_role_taken_back_lands_with_its_audit_entry_or_not_at_all(store):
    grant_role(store, "boss@example.com", "admin", ADMIN)
    grant_role(store, "eve@example.com", "editor", ADMIN)
    with failing_inserts(store.engine, "audit_log", "disk I/O error"), \
            pytest.raises(StoreError):
        revoke_role(store, "eve@example.com", ADMIN)
    assert "eve@example.com" in {g.subject for g in RoleBook(store).grants()}
    assert [a.action for a in acts(store)] == ["grant_role", "grant_role"]

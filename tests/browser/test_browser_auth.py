"""Sign-in and roles in a real browser, against a real OpenID Connect provider.

The provider is ``oidc-provider-mock`` (a standalone OIDC server made for tests, on the
package index, built on Authlib like Streamlit's own client): started here as its own
process on a free local port (its Authlib calls warn, which this process treats as
errors), it serves discovery, authorization (a form that takes the subject to sign in as),
tokens and keys, so ``st.login`` runs its whole flow, cookies and all, with nothing
patched. The dashboard is served with an ``[auth]`` section pointing at it and a roles
file naming a viewer, an editor and an approver; each person signs in in a browser
context of their own (their own cookies).
"""

from __future__ import annotations

import getpass
import json
import re
import secrets
import subprocess
import sys
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from core.cli.main import main
from tests.support.browser import (
    SCRIPT_IDLE_JS,
    VIEWPORT,
    WAIT_MS,
    button,
    free_port,
    needs_chromium,
    open_sidebar_section,
    serve_app,
)
from tests.support.durable_runs import refund_plan
from tests.support.shop import refunds_for
from tests.support.waiting import DEFAULT_TIMEOUT_S, wait_until

pytestmark = needs_chromium

REQUEST = ("Check whether order 88231 has arrived, and if it has, refund the broken one.")
PEOPLE = {"vic": "viewer", "eve": "editor", "ann": "approver"}
RUN_WAIT_MS = int(DEFAULT_TIMEOUT_S * 1000)  # a run's progress drawn, on a loaded machine too


@pytest.fixture(scope="module")
def provider(tmp_path_factory) -> Iterator[str]:
    """The OpenID Connect provider, in a process of its own on a free local port, knowing
    vic, eve and ann; its address."""
    pytest.importorskip("oidc_provider_mock")
    port = free_port()
    users = [f'{{"sub": "{sub}", "email": "{sub}@example.com", "name": "{sub.title()}"}}'
             for sub in PEOPLE]
    log = tmp_path_factory.mktemp("oidc") / "provider.log"
    with log.open("w", encoding="utf-8") as output:
        server = subprocess.Popen(
            [sys.executable, "-m", "oidc_provider_mock", "--host", "127.0.0.1", "--port",
             str(port), *(arg for user in users for arg in ("--user-claims", user))],
            stdout=output, stderr=subprocess.STDOUT)
    address = f"http://127.0.0.1:{port}"

    def answering() -> bool:
        if server.poll() is not None:
            raise AssertionError(f"the provider exited:\n{log.read_text('utf-8')}")
        try:
            with urllib.request.urlopen(f"{address}/.well-known/openid-configuration",
                                        timeout=2) as answer:
                return answer.status == 200
        except OSError:
            return False

    try:
        wait_until(answering, what="the OpenID Connect provider to answer", poll_s=0.1)
        yield address
    finally:
        server.terminate()
        server.wait(timeout=15)


@pytest.fixture(scope="module")
def signed_app(module_home: Path, provider: str, tmp_path_factory) -> Iterator[str]:
    """PlanBoard with sign-in through ``provider`` and roles for vic, eve and ann."""
    folder = tmp_path_factory.mktemp("auth")
    secrets_file = folder / "secrets.toml"
    secrets_file.write_text(
        "[auth]\n"
        'redirect_uri = "http://127.0.0.1:{port}/oauth2callback"\n'
        f'cookie_secret = "{secrets.token_hex(16)}"\n'
        'client_id = "planboard"\nclient_secret = "planboard-secret"\n'
        f'server_metadata_url = "{provider}/.well-known/openid-configuration"\n',
        encoding="utf-8")
    module_home.mkdir(parents=True, exist_ok=True)
    (module_home / "roles.toml").write_text(
        "[emails]\n" + "".join(f'"{sub}@example.com" = "{role}"\n'
                               for sub, role in PEOPLE.items()), encoding="utf-8")
    with serve_app(module_home, folder / "streamlit.log",
                   options=["--secrets.files", str(secrets_file)]) as url:
        yield url


@pytest.fixture(scope="module")
def signed_in(browser: Any, signed_app: str) -> Iterator[Callable[[str], Any]]:
    """``signed_in(sub)``: a page of a browser context of ``sub``'s own (their cookies),
    signed in through the provider's form on first use, kept for the module's tests."""
    pages: dict[str, Any] = {}

    def page_of(sub: str) -> Any:
        if sub not in pages:
            context = browser.new_context(viewport=VIEWPORT)
            page = pages[sub] = context.new_page()
            page.set_default_timeout(WAIT_MS)
            page.goto(signed_app)
            button(page, "sign_in").click()
            page.locator("input[name='sub']").fill(sub)  # the provider's own form
            page.get_by_role("button", name="Authorize").click()
            page.get_by_text(f"Signed in as {sub}@example.com · {PEOPLE[sub]}").wait_for()
        return pages[sub]

    yield page_of
    for page in pages.values():
        page.context.close()


def _draft(page: Any) -> None:
    """Type the refund request on the Plan page and have the offline planner draft it."""
    request = page.locator(".st-key-request textarea")
    request.fill(REQUEST)
    request.press("ControlOrMeta+Enter")
    button(page, "generate_plan").click()
    button(page, "approve_run").wait_for()


def test_without_a_session_only_the_sign_in_page_is_shown(browser, signed_app):
    context = browser.new_context(viewport=VIEWPORT)
    try:
        page = context.new_page()
        page.goto(f"{signed_app}/history")  # a shared link to a page: no "page not found"
        page.get_by_text("Sign in to PlanBoard").wait_for(timeout=WAIT_MS)
        page.wait_for_function(SCRIPT_IDLE_JS)
        assert page.get_by_role("dialog").count() == 0
        assert page.locator("[data-testid='stSidebarNav']").count() == 0
        assert page.locator(".st-key-request").count() == 0
        button(page, "sign_in").click(trial=True)  # nothing lies over it
    finally:
        context.close()
    with pytest.raises(urllib.error.HTTPError) as refused:  # the stream of step marks too
        urllib.request.urlopen(f"{signed_app}/api/runs/anything/steps", timeout=10)
    refused.value.close()
    assert refused.value.code == 401


def test_a_viewer_reads_runs_but_does_not_plan(signed_in):
    viewer = signed_in("vic")
    viewer.get_by_text("planning needs the editor role").wait_for()
    assert viewer.locator(".st-key-request").count() == 0


def test_an_editor_plans_but_may_not_approve_a_refund(signed_in):
    editor = signed_in("eve")
    _draft(editor)
    editor.get_by_text("Needs the approver role.").wait_for()
    assert button(editor, "approve_run").is_disabled()


def test_the_approver_approves_and_confirms_and_the_viewer_may_not(signed_in, signed_app,
                                                                   module_home, monkeypatch,
                                                                   capsys):
    monkeypatch.setenv("PLANBOARD_HOME", str(module_home))  # the served app's demo shop
    approver = signed_in("ann")
    _draft(approver)
    assert button(approver, "approve_run").is_enabled()
    button(approver, "approve_run").click()
    confirm = approver.locator("[class*='st-key-confirm_step_'] button")
    confirm.first.wait_for(timeout=RUN_WAIT_MS)  # the run's first step done, the refund waits

    viewer = signed_in("vic")
    viewer.goto(approver.url)  # the viewer follows the run, and may not confirm it
    viewer.get_by_text("Started by ann@example.com").wait_for(timeout=RUN_WAIT_MS)
    viewer_confirm = viewer.locator("[class*='st-key-confirm_step_'] button")
    viewer_confirm.first.wait_for(timeout=RUN_WAIT_MS)
    assert viewer_confirm.first.is_disabled()
    assert button(viewer, "run_cancel").is_disabled()
    assert refunds_for("88231") == []

    run_id = re.search(r"run=(\w+)", approver.url).group(1)
    _the_cli_without_a_role_is_refused(module_home, run_id, capsys)
    confirm.first.click()
    # the answer's box is drawn (pending) before the run ends: the refund itself is waited for
    wait_until(lambda: refunds_for("88231"), what="the refund the approver confirmed")
    approver.locator("[class*='st-key-confirm_step_']").first.wait_for(state="detached",
                                                                      timeout=RUN_WAIT_MS)
    assert len(refunds_for("88231")) == 1


def _the_cli_without_a_role_is_refused(home: Path, run_id: str, capsys: Any) -> None:
    """The OS user, whom the roles file does not name, may neither approve a refund nor
    cancel the approver's run from the command line: nothing is recorded or refunded."""
    plan = home / "refund.json"
    plan.write_text(json.dumps(refund_plan().canonical()), encoding="utf-8")
    assert main(["run", "--plan", str(plan), "--yes", "--offline"]) == 1
    assert f"{getpass.getuser()} has no role in PlanBoard" in capsys.readouterr().err
    assert main(["cancel", run_id]) == 1
    assert "has no role" in capsys.readouterr().err
    assert refunds_for("88231") == []
    assert main(["audit", "--json"]) == 1  # reading the log needs a role too
    capsys.readouterr()


def test_the_audit_page_names_who_approved_and_confirmed(signed_in):
    viewer = signed_in("vic")
    # the sidebar's link switches pages in the loaded app: a script run, not a page load
    viewer.locator("[data-testid='stSidebarNav'] a").filter(has_text="Audit").click()
    table = viewer.locator(".st-key-audit_table")
    table.get_by_text("confirmed").first.wait_for()
    text = table.inner_text()
    assert "ann@example.com" in text and "approved" in text and "confirmed" in text


def test_a_key_typed_by_one_person_is_theirs_alone(signed_in, module_home):
    key = "sk-eve-only-SECRET-4242"
    editor = signed_in("eve")
    open_sidebar_section(editor, "Model provider", ".st-key-api_key input")
    field = editor.locator(".st-key-api_key input")
    field.fill(key)
    field.press("Enter")
    editor.get_by_text("Using the key typed here (this session only).").wait_for()

    viewer = signed_in("vic")
    viewer.reload()  # a session of the same server drawn afresh after the key was typed
    open_sidebar_section(viewer, "Model provider", ".st-key-api_key input")
    viewer.get_by_text("No API key: plans and steps run offline.").wait_for()
    assert viewer.locator(".st-key-api_key input").input_value() == ""
    written = [path for path in module_home.rglob("*")
               if path.is_file() and key.encode() in path.read_bytes()]
    assert written == []  # nor in the run store, the audit log or any file of the home

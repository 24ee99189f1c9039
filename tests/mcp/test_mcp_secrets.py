"""A secret given to an MCP server as ``${VAR}`` reaches the server and nothing else: no log
record, no stored run or event, no DBOS record, no export, no command output, even when the
server says it back (in a result, or on stderr as it fails to start)."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest

from core.cli.main import main
from tests.support.mcp import own_server, write_config

pytestmark = pytest.mark.usefixtures("dbos_of_the_module", "mcp_pool_of_the_module")

SECRET = "pb-secret-0f9e8d7c6b5a4938"


def test_a_secret_from_the_environment_is_in_no_log_record_store_or_export(
        tmp_path, monkeypatch, capsys, caplog, isolated_environment):
    config = write_config(tmp_path / "mcp.json", {
        "vault": own_server("troubles", env={"API_TOKEN": "${PB_SECRET_TOKEN}",
                                             "COUNTER_FILE": str(tmp_path / "count")}),
        "leaky": own_server("broken_start", "leak", env={"API_TOKEN": "${PB_SECRET_TOKEN}"}),
    })
    monkeypatch.setenv("PB_SECRET_TOKEN", SECRET)
    monkeypatch.setenv("PLANBOARD_TOOLSETS", "builtin")
    monkeypatch.setenv("PLANBOARD_MCP_CONFIG", str(config))
    caplog.set_level(logging.DEBUG)  # every logger, the SDK's and DBOS's included
    plan = tmp_path / "plan.json"
    plan.write_text(json.dumps({"goal": "Which token does the vault use?", "steps": [
        {"id": "s1", "description": "Ask the vault", "tool": "vault__whoami", "args": {},
         "depends_on": []},
        {"id": "s2", "description": "Answer", "tool": None, "depends_on": ["s1"]}]}),
        encoding="utf-8")

    assert main(["run", "--plan", str(plan), "--yes", "--offline", "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    run_id = summary["run_id"]
    assert summary["status"] == "completed"
    # the server did use it, and said it back: what came back was redacted
    assert "I am using token [secret PB_SECRET_TOKEN]" in summary["plan"]["steps"][0]["result"]
    assert main(["tools"]) == 0
    assert main(["show", run_id, "--json"]) == 0
    exports = [tmp_path / f"run.{fmt}" for fmt in ("json", "md")]
    for path in exports:
        assert main(["export", run_id, "--format", path.suffix[1:], "--out", str(path)]) == 0
    printed = capsys.readouterr()

    leaky = [r for r in caplog.records if "leaky" in r.getMessage()]
    assert leaky and "token [secret PB_SECRET_TOKEN] was refused" in leaky[0].getMessage()
    logged = "\n".join(f"{r.getMessage()} {r.exc_text or ''}" for r in caplog.records)
    assert SECRET not in logged
    assert SECRET not in printed.out + printed.err
    for path in exports:
        assert SECRET not in path.read_text(encoding="utf-8")
    written = [p for p in Path(isolated_environment).rglob("*") if p.is_file()]
    assert any(p.suffix == ".sqlite" for p in written)  # the run store and DBOS's database
    assert [p.name for p in written if SECRET.encode() in p.read_bytes()] == []

"""The engine's record (``dbos.sqlite`` in the home) damaged or missing while the run store
names runs executed as workflows: a command that needs it says so in one line, and
``recover --afresh`` keeps a damaged file aside, makes a new record and says what it did.
(tests/faults/test_lost_engine_file.py deletes the file under a killed run, in processes.)
"""

from __future__ import annotations

import json

import pytest

from core.base.home import home_path
from core.cli.main import main
from core.errors import RecordLostError
from core.runs import durable
from tests.support.stored_runs import stopped_run


@pytest.fixture
def paused(store) -> str:
    """A paused run in the store, executed as a workflow."""
    return stopped_run(store, "paused", workflow_id="wf-lost")


@pytest.fixture
def record(paused):
    """The home's engine record."""
    return home_path() / "dbos.sqlite"


def test_a_damaged_record_is_named_and_kept_aside_when_started_afresh(record, capsys):
    record.write_bytes(b"not a database, but the bytes of something else" * 100)
    with pytest.raises(RecordLostError, match=r"dbos\.sqlite is damaged \(.*\).*--afresh"):
        durable.check_record(durable.system_database_url())
    assert main(["recover", "--afresh", "--yes"]) == 0
    out, err = capsys.readouterr()
    assert "is damaged" in err and "Traceback" not in err
    [kept] = record.parent.glob("dbos.sqlite.damaged-*")
    assert kept.read_bytes().startswith(b"not a database")
    assert f"the damaged run engine record is kept as {kept}\n" in out
    assert f"a new run engine record is at {record};" in out
    durable.check_record(durable.system_database_url())  # the new one is fine
    assert main(["recover", "--afresh", "--yes"]) == 0  # and is left alone
    assert capsys.readouterr().out == (
        f"the run engine's record {record} is fine: nothing to start afresh\n")


def test_a_missing_record_is_made_again_with_nothing_kept(record, paused, capsys):
    record.unlink(missing_ok=True)
    assert main(["resume", paused, "--yes", "--json"]) == 1
    error = json.loads(capsys.readouterr().out)["error"]
    assert error["code"] == "run.record_lost" and "is missing" in error["message"]
    assert main(["recover", "--afresh", "--yes"]) == 0
    out = capsys.readouterr().out
    assert "kept as" not in out and f"a new run engine record is at {record};" in out
    assert record.is_file()
    assert list(record.parent.glob("dbos.sqlite.damaged-*")) == []

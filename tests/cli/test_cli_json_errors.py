"""With ``--json`` a command's error is JSON too: ``{"error": {"code", "message"}}`` on
stdout, in the command line's language, and exit code 1; without it, one line on stderr."""

from __future__ import annotations

import argparse
import json

import pytest

from core.cli.main import build_parser, main

FAILING = {
    "plan": (["plan", "asdf", "--offline"], "unservable_request_error"),
    "run": (["run", "asdf", "--offline", "--yes"], "unservable_request_error"),
    "call": (["call", "calculate", "--args", "{expression"], "config_error"),
    "show": (["show", "nope"], "run.not_found"),
    "resume": (["resume", "nope", "--yes"], "run.not_found"),
    "followup": (["followup", "nope", "also check order 70412", "--yes"], "run.not_found"),
    "refine": (["refine", "nope", "also check the return policy"], "run.not_found"),
    "templates": (["templates", "show", "nope"], "template.not_found"),
}


@pytest.mark.parametrize(("argv", "code"), FAILING.values(), ids=list(FAILING))
def test_an_error_of_a_json_command_is_a_json_object_on_stdout(capsys, argv, code):
    exit_code = main([*argv, "--json"])
    captured = capsys.readouterr()
    assert exit_code == 1 and "Traceback" not in captured.err
    error = json.loads(captured.out)["error"]
    assert error["code"] == code and error["message"]
    assert not error["message"].startswith("error:")


def test_the_json_error_speaks_the_command_lines_language(capsys, monkeypatch):
    monkeypatch.setenv("PLANBOARD_LANG", "zh")
    assert main(["show", "nope", "--json"]) == 1
    error = json.loads(capsys.readouterr().out)["error"]
    assert error["code"] == "run.not_found" and "nope" in error["message"]
    assert any("\u4e00" <= char <= "\u9fff" for char in error["message"])


def test_without_json_the_error_stays_one_line_on_stderr(capsys):
    assert main(["plan", "asdf", "--offline"]) == 1
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err.startswith("error: ")
    assert captured.err.count("\n") == 1


def json_options(parser: argparse.ArgumentParser, path: str = "") -> dict[str, list[str]]:
    """Every command and sub-command (``templates show``) with the dests of its --json."""
    found: dict[str, list[str]] = {}
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                command = f"{path} {name}".strip()
                found[command] = [a.dest for a in sub._actions if "--json" in a.option_strings]
                found.update(json_options(sub, command))
    return found


def test_every_command_names_its_json_option_json():
    """main() reads ``args.json`` to choose how to report an error: a command that takes
    --json under another name would print its errors as plain text."""
    with_json = json_options(build_parser())
    assert {name for name, dests in with_json.items() if dests} >= {
        "plan", "run", "call", "show", "resume", "followup", "refine", "templates show",
        "tools"}
    assert all(dests in ([], ["json"]) for dests in with_json.values()), with_json

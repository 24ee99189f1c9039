"""MCP servers as toolsets, without starting any: the configuration file, ``${VAR}`` secrets,
tool names, side effects from hints and configuration, argument checks and call results."""

from __future__ import annotations

import json
from pathlib import Path

import mcp_types as types
import pytest

from core.base.messages import render
from core.errors import ToolArgumentError, ToolExecutionError, ToolsetError
from core.tools.mcp.arguments import schema_problem, schema_validator
from core.tools.mcp.config import config_path, load_config
from core.tools.mcp.content import MAX_RESULT_CHARS, call_result
from core.tools.mcp.naming import server_name_problem, tool_name
from core.tools.mcp.secrets import Secrets
from core.tools.mcp.toolset import mcp_server_of, mcp_tool
from core.tools.toolsets import default_registry
from tests.support import REPO

SECRET = "tok-6f1c2e9a-very-secret"


def write(tmp_path: Path, servers: object, name: str = "mcp.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps({"mcpServers": servers}), encoding="utf-8")
    return path


# ---- the configuration file -------------------------------------------------------------


def test_the_file_is_the_variable_else_mcp_json_in_the_home(tmp_path):
    home = tmp_path / "home"
    assert config_path({"PLANBOARD_HOME": str(home)}) is None  # none: nothing to load
    home.mkdir()
    (home / "mcp.json").write_text("{}", encoding="utf-8")
    assert config_path({"PLANBOARD_HOME": str(home)}) == home / "mcp.json"
    chosen = tmp_path / "elsewhere.json"
    assert config_path({"PLANBOARD_HOME": str(home), "PLANBOARD_MCP_CONFIG": str(chosen)}
                       ) == chosen


def test_stdio_and_http_servers_with_planboards_own_keys(tmp_path):
    path = write(tmp_path, {
        "git": {"command": "mcp-server-git", "args": ["--repository", "."], "cwd": "repo",
                "timeout": 5, "readOnly": ["git_log"], "sideEffects": ["git_show"]},
        "docs": {"url": "http://127.0.0.1:9/mcp", "headers": {"X-Team": "blue"},
                 "readOnly": True, "startTimeout": 3},
        "off": {"command": "whatever", "disabled": True},
    })
    config = load_config(path, {})
    git, docs = config.servers
    assert config.problems == ()
    assert (git.transport, git.command, git.args) == ("stdio", "mcp-server-git",
                                                      ("--repository", "."))
    assert git.cwd == str((tmp_path / "repo").resolve())  # relative to the file
    assert (git.timeout, git.start_timeout) == (5.0, 30.0)
    assert git.says_read_only("git_log") and not git.says_read_only("git_commit")
    assert git.side_effects == {"git_show"}
    assert (docs.transport, docs.url, docs.timeout, docs.start_timeout) == (
        "http", "http://127.0.0.1:9/mcp", 60.0, 3.0)
    assert docs.says_read_only("anything")


def test_variables_in_env_and_headers_are_expanded_and_never_shown(tmp_path):
    path = write(tmp_path, {
        "git": {"command": "x", "env": {"TOKEN": "${GIT_TOKEN}", "MODE": "fast-${MODE}"}},
        "docs": {"url": "https://example.test/mcp",
                 "headers": {"Authorization": "Bearer ${DOCS_TOKEN}"}},
    })
    environ = {"GIT_TOKEN": SECRET, "MODE": "yes", "DOCS_TOKEN": SECRET + "-2"}
    git, docs = load_config(path, environ).servers
    assert dict(git.env) == {"TOKEN": SECRET, "MODE": "fast-yes"}
    assert docs.headers["Authorization"] == f"Bearer {SECRET}-2"
    assert SECRET not in repr(git) and SECRET not in repr(docs)
    assert git.secrets.redact(f"the token is {SECRET}!") == "the token is [secret GIT_TOKEN]!"
    assert git.secrets.redact("mode yes") == "mode yes"  # too short to be a secret
    assert git.fingerprint() != load_config(path, {**environ, "GIT_TOKEN": "other-1"}
                                            ).servers[0].fingerprint()


def test_a_variable_the_environment_lacks_leaves_that_server_out_saying_which(tmp_path):
    path = write(tmp_path, {"git": {"command": "x", "env": {"TOKEN": "${GIT_TOKEN}"}},
                            "time": {"command": "y"}})
    config = load_config(path, {})
    assert [s.name for s in config.servers] == ["time"]
    [problem] = config.problems
    line = render(problem, "en")
    assert "git" in line and "${GIT_TOKEN}" in line and str(path) in line and "\n" not in line
    assert "${GIT_TOKEN}" in render(problem, "zh")


@pytest.mark.parametrize(("text", "says"), [
    ("{not json", "not valid JSON (a property name in double quotes is expected at column 2)"),
    ('{\n "mcpServers": {"git', "the string starting at line 2, column 17 has no closing quote"),
    ('{"servers": {}}', 'it needs an object "mcpServers"'),
    ('["git"]', 'it needs an object "mcpServers"'),
])
def test_a_malformed_file_is_one_line_naming_it_and_what_to_fix(tmp_path, text, says):
    path = tmp_path / "mcp.json"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ToolsetError) as caught:
        load_config(path, {})
    line = str(caught.value)
    assert str(path) in line and says in line and '"mcpServers"' in line
    assert "\n" not in line
    assert "MCP 配置文件" in render(caught.value, "zh")


def test_a_missing_file_named_by_the_variable_is_a_problem_of_the_registry(tmp_path):
    missing = tmp_path / "nope.json"
    registry = default_registry({"PLANBOARD_TOOLSETS": "builtin",
                                 "PLANBOARD_MCP_CONFIG": str(missing)})
    assert registry.names() == ["calculate", "get_current_time"]  # the others still load
    [problem] = registry.problems
    assert str(missing) in str(problem) and "PLANBOARD_MCP_CONFIG" in str(problem)


def test_keys_other_clients_read_are_ignored_so_a_configuration_pastes_as_it_is(tmp_path):
    path = write(tmp_path, {"git": {"command": "mcp-server-git", "autoApprove": ["git_log"],
                                    "alwaysAllow": [], "transportType": "stdio"}})
    config = load_config(path, {})
    assert [s.name for s in config.servers] == ["git"] and not config.problems


@pytest.mark.parametrize(("entry", "says"), [
    ({"args": ["x"]}, 'either "command"'),
    ({"command": "x", "url": "http://a"}, 'either "command"'),
    ({"command": "x", "headers": {}}, "headers belong(s) to a server at a URL"),
    ({"command": ["x"]}, '"command" must be the program to run'),
    ({"command": "x", "args": "a b"}, '"args" must be a list of strings'),
    ({"command": "x", "timeout": 0}, '"timeout" must be a positive number'),
    ({"command": "x", "timeout": True}, '"timeout" must be a positive number'),
    ({"command": "x", "readOnly": "yes"}, '"readOnly" must be a list'),
    ({"command": "x", "env": {"A": 1}}, '"env" must be an object of strings'),
    ({"command": "x", "readonly": True}, "unknown key readonly: did you mean readOnly?"),
    ({"command": "x", "sideEffect": ["rm"]}, "did you mean sideEffects?"),
    ({"url": "ftp://a"}, '"url" must be an http:// or https:// address'),
    ({"url": "http://a", "type": "sse"}, '"type": "sse" is not supported'),
    ("mcp-server-git", "its entry must be an object"),
])
def test_a_wrong_entry_is_a_problem_naming_the_server_and_the_others_load(tmp_path, entry,
                                                                          says):
    path = write(tmp_path, {"bad": entry, "good": {"command": "y"}})
    config = load_config(path, {})
    assert [s.name for s in config.servers] == ["good"]
    [problem] = config.problems
    line = str(problem)
    assert says in line and "MCP server bad" in line and "\n" not in line


# ---- names ----------------------------------------------------------------------------------


def test_tools_are_named_server_and_tool_valid_for_every_provider():
    assert tool_name("git", "git_log") == "git__git_log"
    assert tool_name("fs", "read file.v2") == "fs__read_file_v2"  # others become "_"
    assert tool_name("a" * 30, "b" * 40) is None  # past 64: refused, never cut into a clash
    assert server_name_problem("git") is None
    for bad in ("my server", "a__b", "ünï", "", "x" * 33):
        assert server_name_problem(bad)


def test_a_server_name_providers_cannot_take_is_a_problem_of_the_file(tmp_path):
    config = load_config(write(tmp_path, {"my server": {"command": "x"}}), {})
    assert config.servers == ()
    assert "letters, digits" in str(config.problems[0])


# ---- tools from a listing ---------------------------------------------------------------------

SCHEMA = {"type": "object", "properties": {
    "repo_path": {"type": "string"},
    "max_count": {"type": "integer", "minimum": 1, "default": 10},
    "mode": {"enum": ["short", "full"]},
    "filter": {"type": "object", "properties": {"author": {"type": "string"}},
               "required": ["author"]}},
    "required": ["repo_path"], "additionalProperties": False}


def listed(name: str, *, read_only: bool | None = None, idempotent: bool | None = None,
           schema: dict | None = None) -> types.Tool:
    hints = None if read_only is None and idempotent is None else types.ToolAnnotations(
        read_only_hint=read_only, idempotent_hint=idempotent)
    return types.Tool(name=name, description=f"{name} does it", input_schema=schema or SCHEMA,
                      annotations=hints)


def server(tmp_path: Path, **keys) -> object:
    return load_config(write(tmp_path, {"git": {"command": "x", **keys}}), {}).servers[0]


def test_a_tool_is_read_only_only_when_the_server_or_the_configuration_says_so(tmp_path):
    plain = server(tmp_path)
    assert mcp_tool(plain, listed("log", read_only=True), "git__log").side_effect is False
    assert mcp_tool(plain, listed("commit", read_only=False), "git__commit").side_effect
    assert mcp_tool(plain, listed("quiet"), "git__quiet").side_effect  # no hint: a side effect
    told = server(tmp_path, readOnly=["quiet"], sideEffects=["log"])
    assert mcp_tool(told, listed("quiet"), "git__quiet").side_effect is False
    # the configuration's sideEffects overrides the server's read-only hint
    assert mcp_tool(told, listed("log", read_only=True), "git__log").side_effect
    everything = server(tmp_path, readOnly=True)
    assert mcp_tool(everything, listed("quiet"), "git__quiet").side_effect is False


def test_idempotent_source_server_and_schema_come_from_the_listing(tmp_path):
    tool = mcp_tool(server(tmp_path), listed("branch", read_only=False, idempotent=True),
                    "git__branch")
    assert tool.idempotent and tool.source == "git" and mcp_server_of(tool) == "git"
    assert tool.parameters == SCHEMA and tool.required == ["repo_path"]
    assert tool.description == "branch does it"
    assert not mcp_tool(server(tmp_path), listed("other"), "git__other").idempotent
    assert mcp_server_of(default_registry({}).get("calculate")) is None


def test_arguments_are_checked_against_the_schema_with_the_registrys_codes(tmp_path):
    tool = mcp_tool(server(tmp_path), listed("log"), "git__log")
    assert tool.validate_args({"repo_path": "/r", "max_count": 2}) == {"repo_path": "/r",
                                                                     "max_count": 2}
    with pytest.raises(ToolArgumentError) as caught:
        tool.validate_args({"max_count": 0, "colour": "red", "mode": "long"})
    line = str(caught.value)
    assert "repo_path: Field required" in line and "colour: Extra inputs" in line
    assert "max_count: 0 is less than the minimum of 1" in line and "mode: 'long'" in line
    assert "缺少这个必填参数" in render(caught.value, "zh")
    # a plan may leave arguments to be filled when its step runs: only wrong values count
    assert tool.value_problems({"colour": "red"}) == []
    [problem] = tool.value_problems({"max_count": "ten"})
    assert (problem.code, problem.params["field"]) == ("tool.arg_invalid", "max_count")
    assert "'ten' is not of type 'integer'" in str(problem)
    nested = tool.value_problems({"filter": {}})
    assert [p.code for p in nested] == ["tool.arg_missing"]
    assert nested[0].params["field"] == "filter.author"


def test_a_schema_that_is_not_an_object_schema_is_refused():
    assert schema_problem({"type": "object", "properties": {}}) is None
    assert "not an object" in schema_problem({"type": "array"})
    assert "not a valid JSON schema" in schema_problem({"type": "object", "minProperties": -1})
    assert schema_validator({"type": "object"})({"anything": 1}, True) == []


# ---- results -------------------------------------------------------------------------------


def result(*texts: str, structured: dict | None = None, error: bool = False
           ) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(type="text", text=t) for t in texts],
                                structured_content=structured, is_error=error)


def convert(answer: types.CallToolResult, secrets: Secrets | None = None):
    return call_result(answer, server="git", tool="log", name="git__log",
                       secrets=secrets or Secrets())


def test_structured_content_is_the_result_as_data():
    answer = result('{"a": 1}', structured={"branch": "main", "ahead": 2})
    assert convert(answer) == {"branch": "main", "ahead": 2}


def test_text_is_the_result_and_a_json_object_in_it_is_parsed():
    assert convert(result("Commit history:", "Message: first")) == (
        "Commit history:\n\nMessage: first")
    assert convert(result('  {"status": "shipped"} ')) == {"status": "shipped"}
    assert convert(result("[1, 2]")) == "[1, 2]"  # only an object has fields to read
    assert convert(result("{not json}")) == "{not json}"


def test_is_error_fails_with_the_servers_text():
    with pytest.raises(ToolExecutionError) as caught:
        convert(result("the repository is locked", error=True))
    assert str(caught.value) == (
        "git__log failed on MCP server git: the repository is locked")


def test_a_huge_result_is_cut_with_a_note_of_its_size():
    text = "x" * (5 * 1024 * 1024)
    kept = convert(result(text))
    assert len(kept) < MAX_RESULT_CHARS + 200
    assert kept.endswith("[cut: the answer was 5,242,880 characters; PlanBoard keeps the "
                         "first 65,536]")
    data = convert(result(structured={"blob": text}))
    assert isinstance(data, str) and data.startswith('{"blob": "xxx') and "[cut:" in data


def test_secrets_are_redacted_from_results_and_errors():
    secrets = Secrets({"GIT_TOKEN": SECRET})
    assert convert(result(f"using {SECRET}"), secrets) == "using [secret GIT_TOKEN]"
    assert convert(result(structured={SECRET: [SECRET]}), secrets) == {
        "[secret GIT_TOKEN]": ["[secret GIT_TOKEN]"]}
    with pytest.raises(ToolExecutionError) as caught:
        convert(result(f"bad token {SECRET}", error=True), secrets)
    assert SECRET not in str(caught.value)


def test_no_configuration_costs_nothing_and_imports_no_mcp_code(tmp_path):
    import subprocess
    import sys

    probe = ("import sys; from core.tools.toolsets import default_registry; "
             "r = default_registry(); print(len(r), sorted(m for m in sys.modules "
             "if m == 'mcp' or m.startswith(('mcp.', 'jsonschema'))))")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                          timeout=120, check=True, cwd=tmp_path,
                          env={"PATH": "/usr/bin:/bin", "PLANBOARD_HOME": str(tmp_path),
                               "PYTHONPATH": str(REPO)})
    count, modules = done.stdout.split(" ", 1)
    assert int(count) > 2 and modules.strip() == "[]"


# ---- the step panel's form from an MCP schema -------------------------------------------------


def test_the_argument_form_reads_plain_json_schemas_as_servers_write_them():
    from core.plan.arg_form import field_specs

    git_log = {"type": "object", "required": ["repo_path"], "properties": {
        "repo_path": {"type": "string", "title": "Repo Path"},
        "max_count": {"type": "integer", "default": 10},
        "start_timestamp": {"anyOf": [{"type": "string"}, {"type": "null"}], "default": None,
                            "description": "Start timestamp"},
        "files": {"type": "array", "items": {"type": "string"}, "minItems": 1},
        "filter": {"type": "object", "properties": {"author": {"type": "string"}}},
        "sort": {"$ref": "#/definitions/Sort"},
        "verbose": {"type": ["boolean", "null"]}},
        "definitions": {"Sort": {"enum": ["newest", "oldest"], "default": "newest"}}}
    specs = {spec.name: spec for spec in field_specs(git_log)}
    assert (specs["repo_path"].kind, specs["repo_path"].required) == ("string", True)
    assert (specs["max_count"].kind, specs["max_count"].default) == ("integer", 10)
    assert specs["start_timestamp"].kind == "string" and not specs["start_timestamp"].required
    assert specs["start_timestamp"].description == "Start timestamp"
    assert specs["files"].kind == "json" and specs["filter"].kind == "json"  # JSON text
    assert (specs["sort"].kind, specs["sort"].options, specs["sort"].default) == (
        "enum", ("newest", "oldest"), "newest")
    assert specs["verbose"].kind == "boolean"


def test_an_argument_called_self_reaches_the_server_like_any_other(tmp_path):
    from core.tools.mcp.pool import shutdown_pool

    schema = {"type": "object", "properties": {"self": {"type": "string"}}}
    tool = mcp_tool(server(tmp_path), listed("me", read_only=True, schema=schema), "git__me")
    try:
        with pytest.raises(ToolExecutionError) as caught:
            tool.function(self="x")  # no server runs here: the pool says so, no TypeError
    finally:
        shutdown_pool()
    assert "MCP server git is not available" in str(caught.value)


def test_a_tools_output_schema_is_its_declared_result_shape(tmp_path):
    shape = {"type": "object", "properties": {"sha": {"type": "string"}}}
    found = types.Tool(name="log", description="log", input_schema=SCHEMA, output_schema=shape)
    assert mcp_tool(server(tmp_path), found, "git__log").output_schema == shape
    assert mcp_tool(server(tmp_path), listed("status"), "git__status").output_schema is None

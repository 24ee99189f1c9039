"""Shared by the MCP tests: configuration entries for the reference and the tests' own
servers, a throwaway git repository, and the server processes this process has started."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.support import REPO


def own_server(module: str, *args: str, **keys: object) -> dict:
    """The entry of one of tests/mcp_servers (run with this interpreter, from the repo)."""
    return {"command": sys.executable, "args": ["-m", f"tests.mcp_servers.{module}", *args],
            "cwd": str(REPO), **keys}


def reference_server(module: str, **keys: object) -> dict:
    """The entry of an installed reference server (mcp_server_git, mcp_server_time)."""
    return {"command": sys.executable, "args": ["-m", module], **keys}


def write_config(path: Path, servers: dict) -> Path:
    """An ``mcpServers`` file at ``path`` holding ``servers``."""
    path.write_text(json.dumps({"mcpServers": servers}, indent=2), encoding="utf-8")
    return path


def make_repo(path: Path, message: str = "first commit: the README") -> Path:
    """A git repository at ``path`` with one commit of ``message``."""
    path.mkdir(parents=True)
    git = ["git", "-C", str(path), "-c", "user.name=Test", "-c", "user.email=test@example.com"]
    subprocess.run(["git", "init", "-q", str(path)], check=True)
    (path / "README").write_text("hello\n", encoding="utf-8")
    subprocess.run([*git, "add", "README"], check=True)
    subprocess.run([*git, "commit", "-q", "-m", message], check=True)
    return path


def branches(repo: Path) -> list[str]:
    """The repository's branch names."""
    done = subprocess.run(["git", "-C", str(repo), "branch", "--format=%(refname:short)"],
                          check=True, capture_output=True, text=True)
    return done.stdout.split()


def server_processes() -> list[tuple[int, str]]:
    """Live processes whose parent is this one and that run an MCP server (pid, state),
    read from Linux's /proc (a zombie has no command line left: see process_state)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            command = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2:].split()
        state, parent = fields[0], int(fields[1])
        if parent == os.getpid() and ("mcp_server" in command or "mcp_servers" in command):
            found.append((int(entry.name), state))
    return found


def process_state(pid: int) -> str | None:
    """The state letter of process ``pid`` (``Z`` for a zombie), None once it is gone."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return stat[stat.rindex(")") + 2:].split()[0]

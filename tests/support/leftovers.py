"""The processes a test module left running: found when the module ends, and killed.

A test that times out or fails half-way may leave what it started running (a ``python -m
core worker`` polling its queue, a Chromium and its renderers): nothing holds it any more,
and it loads the machine under every later test of the run. tests/conftest.py kills, when a
module ends, every process this one started during the module that is still alive.
"""

from __future__ import annotations

import contextlib
import os
import signal
from pathlib import Path

__all__ = ["kill_with_descendants", "live_children"]

# started once per process and kept on purpose: multiprocessing's resource tracker, which
# warns when it is found dead
_KEPT = ("multiprocessing.resource_tracker",)


def _processes() -> dict[int, tuple[int, int, str]]:
    """Every process: pid → (parent pid, session id, state)."""
    found = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:  # ended meanwhile
            continue
        found[int(entry.name)] = (int(fields[1]), int(fields[3]), fields[0])
    return found


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(
            errors="replace")
    except OSError:
        return ""


def live_children() -> set[int]:
    """This process's children that are alive (not zombies) and in its session: a child
    started in a session of its own outlives a module on purpose (the PostgreSQL guard of
    tests/support/pg.py)."""
    me, session = os.getpid(), os.getsid(0)
    return {pid for pid, (parent, sid, state) in _processes().items()
            if parent == me and sid == session and state != "Z"
            and not any(kept in _cmdline(pid) for kept in _KEPT)}


def kill_with_descendants(pid: int) -> None:
    """SIGKILL ``pid`` and every process under it."""
    table = _processes()
    doomed, frontier = [pid], [pid]
    while frontier:
        parent = frontier.pop()
        below = [child for child, (ppid, _, _) in table.items() if ppid == parent]
        doomed += below
        frontier += below
    for victim in doomed:
        with contextlib.suppress(ProcessLookupError):  # ended meanwhile
            os.kill(victim, signal.SIGKILL)

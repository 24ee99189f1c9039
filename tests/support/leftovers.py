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


def _stat(pid: int) -> tuple[int, int, str] | None:
    """(parent pid, session id, state) of ``pid``; None once it has ended."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return int(fields[1]), int(fields[3]), fields[0]


def _children(pid: int) -> set[int]:
    """The processes whose parent is ``pid``: listed by the kernel per thread (a /proc
    scan of every process where it does not, ten times the CPU)."""
    listed = list(Path(f"/proc/{pid}/task").glob("*/children"))
    if not listed:
        return {int(entry.name) for entry in Path("/proc").iterdir()
                if entry.name.isdigit() and (_stat(int(entry.name)) or (0,))[0] == pid}
    found: set[int] = set()
    for children in listed:
        with contextlib.suppress(OSError):  # the thread ended meanwhile
            found.update(int(child) for child in children.read_text().split())
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
    session, found = os.getsid(0), set()
    for pid in _children(os.getpid()):
        stat = _stat(pid)
        if stat and stat[1] == session and stat[2] != "Z" and not any(
                kept in _cmdline(pid) for kept in _KEPT):
            found.add(pid)
    return found


def kill_with_descendants(pid: int) -> None:
    """SIGKILL ``pid`` and every process under it."""
    doomed, frontier = [pid], [pid]
    while frontier:
        below = _children(frontier.pop())
        doomed += below
        frontier += below
    for victim in doomed:
        with contextlib.suppress(ProcessLookupError):  # ended meanwhile
            os.kill(victim, signal.SIGKILL)

"""Who executes runs: the executor ids of embedded processes and of workers.

DBOS records, for every workflow, the executor that took it. An embedded process (the
dashboard, a CLI command) is ``embedded:<host>:<pid>``, unique among live processes, so
this host can tell when one has ended; a worker is the stable ``--name`` it was given.
Kept apart from :mod:`core.runs.durable` so that asking costs no import of DBOS.
"""

from __future__ import annotations

import os
import socket
from pathlib import Path

from core.errors import ConfigError

__all__ = ["embedded_executor_id", "executor_gone", "worker_executor_id", "worker_name"]

_EMBEDDED_PREFIX = "embedded:"
_MAX_WORKER_NAME = 64


def embedded_executor_id() -> str:
    """This process's id: unique among live processes, since two live processes under one
    id recover each other's running workflows and run a step twice at once. It holds the
    process's start time where the system tells it: a restarted container reuses its host
    name and pid, and must not take the dead process's runs for its own."""
    pid = os.getpid()
    started = _start_time(pid)
    return f"{_EMBEDDED_PREFIX}{socket.gethostname()}:{pid}" + (f":{started}" if started else "")


def executor_gone(executor_id: str) -> bool:
    """True when ``executor_id`` names an embedded process of this host that has ended
    (its pid is free, or now belongs to a process started at another time).

    A worker, or a process of another host, cannot be seen from here: False.
    """
    if not executor_id.startswith(_EMBEDDED_PREFIX):
        return False
    host, pid, started = [*executor_id[len(_EMBEDDED_PREFIX):].split(":"), ""][:3]
    if host != socket.gethostname() or not pid.isdigit():
        return False
    if executor_id == embedded_executor_id():
        return False
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return True
    except PermissionError:  # another user's live process
        pass
    return bool(started) and _start_time(int(pid)) not in ("", started)


def _start_time(pid: int) -> str:
    """When process ``pid`` started, in clock ticks since boot (Linux); empty elsewhere."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return ""
    fields = stat.rpartition(")")[2].split()  # after the command name, which may hold spaces
    return fields[19] if len(fields) > 19 else ""


def worker_name(executor_id: str) -> str:
    """The worker an executor id names; empty for an embedded process (no worker)."""
    return "" if executor_id.startswith(_EMBEDDED_PREFIX) else executor_id


def worker_executor_id(name: str | None = None) -> str:
    """A worker's id: its ``--name``, by default the host name; raises ConfigError for a
    name that is empty, longer than 64 characters, unprintable, holds whitespace or starts
    with ``embedded:``."""
    chosen = socket.gethostname() if name is None else name
    if (not chosen or len(chosen) > _MAX_WORKER_NAME or not chosen.isprintable()
            or any(char.isspace() for char in chosen) or chosen.startswith(_EMBEDDED_PREFIX)):
        raise ConfigError(
            f"Invalid worker name {chosen!r}: use 1 to {_MAX_WORKER_NAME} printable characters "
            f"without spaces, not starting with {_EMBEDDED_PREFIX!r}. / 工作进程名 {chosen!r} "
            f"无效：请使用 1 到 {_MAX_WORKER_NAME} 个可打印字符，不含空白，且不以 "
            f"{_EMBEDDED_PREFIX!r} 开头。")
    return chosen

"""Runs recorded without a workflow (a tool trial) are recovered by the executor their
options name: interrupted once that process has ended, never while it lives."""

from __future__ import annotations

import os
import socket

from core.runs.executors import _start_time, embedded_executor_id, executor_gone
from core.runs.recovery import recover_interrupted
from tests.support.stored_runs import three_calcs

DEAD_PID = 2**22 + 17  # above Linux's pid_max: no process can have it


def _planless(store, executor: str) -> str:
    return store.create_run("trial", {"offline": True}, three_calcs(), status="running",
                            options={"mode": "tool_trial", "executor": executor})


def test_a_planless_run_of_an_ended_process_is_interrupted_once(store):
    dead = _planless(store, f"embedded:{socket.gethostname()}:{DEAD_PID}")
    alive = _planless(store, embedded_executor_id())
    elsewhere = _planless(store, f"embedded:another-host:{DEAD_PID}")
    assert recover_interrupted(store) == [dead]
    assert recover_interrupted(store) == []  # recorded once
    assert store.get_run(dead).status == "interrupted"
    assert {store.get_run(r).status for r in (alive, elsewhere)} == {"running"}
    assert [e.kind for e in store.events(dead)][-1] == "interrupted"


def test_only_an_embedded_process_of_this_host_can_be_seen_gone():
    assert executor_gone(f"embedded:{socket.gethostname()}:{DEAD_PID}")
    assert not executor_gone(f"embedded:{socket.gethostname()}:{os.getpid()}")
    assert not executor_gone("worker-a")  # a worker: not seen from here
    assert not executor_gone("") and not executor_gone("embedded:host:notapid")


def test_a_reused_pid_is_another_process():
    """A restarted container has the dead process's host name and pid: the start time in
    the id tells them apart, so its runs are not taken for the new process's own."""
    host, parent = socket.gethostname(), os.getppid()
    started = _start_time(parent)
    assert started  # Linux: /proc tells it
    assert not executor_gone(f"embedded:{host}:{parent}:{started}")  # the same process
    assert executor_gone(f"embedded:{host}:{parent}:1")  # its pid, another start

"""The processes a test module left running are found (not the ones in a session of their
own) and killed with everything under them."""

from __future__ import annotations

import signal
import subprocess
from pathlib import Path

from tests.support.leftovers import kill_with_descendants, live_children
from tests.support.waiting import DEFAULT_TIMEOUT_S, wait_until


def _gone(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z"
    except OSError:
        return True


def test_a_child_left_running_is_found_and_killed_with_its_own_children():
    before = live_children()
    left = subprocess.Popen(["sh", "-c", "sleep 60 & echo $!; wait"], stdout=subprocess.PIPE,
                            text=True)
    apart = subprocess.Popen(["sleep", "60"], start_new_session=True)
    try:
        grandchild = int(left.stdout.readline())
        assert live_children() - before == {left.pid}
        kill_with_descendants(left.pid)
        assert left.wait(DEFAULT_TIMEOUT_S) == -signal.SIGKILL
        wait_until(lambda: _gone(grandchild), what="the child's own child to end")
        assert apart.poll() is None
    finally:
        for process in (left, apart):
            process.kill()
            process.wait()
        left.stdout.close()

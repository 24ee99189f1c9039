"""``python -m core`` in child processes, for the tests that spread runs over processes.

Every child writes its output to files in one folder, so a failing assertion can show what
each process said (:meth:`CoreProcesses.report`) and no pipe fills up while a worker runs
for a minute. Every child started is killed by :meth:`CoreProcesses.kill_all`.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.support import REPO
from tests.support.waiting import DEFAULT_TIMEOUT_S, wait_until

__all__ = ["CoreProcess", "CoreProcesses"]

_REPORT_TAIL = 3000  # characters of each output shown in a failure message


@dataclass
class CoreProcess:
    """One ``python -m core`` child: its process and the files holding its output."""

    label: str
    popen: subprocess.Popen
    stdout: Path
    stderr: Path

    def output(self) -> str:
        return self.stdout.read_text(errors="replace")

    def alive(self) -> bool:
        return self.popen.poll() is None

    def kill(self) -> None:
        """SIGKILL: the process gets no chance to tidy up, as in a crash."""
        if self.alive():
            self.popen.send_signal(signal.SIGKILL)
        self.popen.wait(30)

    def report(self) -> str:
        code = self.popen.poll()
        state = "running" if code is None else f"exit code {code}"
        parts = [f"--- {self.label} ({state})"]
        for name, path in (("stdout", self.stdout), ("stderr", self.stderr)):
            text = path.read_text(errors="replace")[-_REPORT_TAIL:] if path.exists() else ""
            if text.strip():
                parts.append(f"[{name}]\n{text.rstrip()}")
        return "\n".join(parts)


class CoreProcesses:
    """Starts ``python -m core`` children in ``folder`` with the environment ``env``."""

    def __init__(self, folder: Path, env: dict[str, str]) -> None:
        self.folder = folder
        self.env = {**env, "PYTHONPATH": str(REPO)}
        self.started: list[CoreProcess] = []
        folder.mkdir(parents=True, exist_ok=True)

    def start(self, label: str, *args: str) -> CoreProcess:
        """Start ``python -m core ARGS``; ``label`` names its output files (a restart under
        the same label gets new ones)."""
        number = len(self.started) + 1
        stdout = self.folder / f"{number:02d}-{label}.out"
        stderr = self.folder / f"{number:02d}-{label}.err"
        with stdout.open("wb") as out, stderr.open("wb") as err:
            popen = subprocess.Popen([sys.executable, "-m", "core", *args], cwd=self.folder,
                                     env=self.env, stdin=subprocess.DEVNULL, stdout=out,
                                     stderr=err)
        started = CoreProcess(label, popen, stdout, stderr)
        self.started.append(started)
        return started

    def run_all(self, commands: dict[str, list[str]]) -> dict[str, str]:
        """Run one-shot commands side by side; their stdout by label. AssertionError (with
        every output) when one fails or outlasts DEFAULT_TIMEOUT_S."""
        running = {label: self.start(label, *args) for label, args in commands.items()}
        deadline = time.monotonic() + DEFAULT_TIMEOUT_S
        for label, child in running.items():
            try:
                code = child.popen.wait(max(deadline - time.monotonic(), 0.1))
            except subprocess.TimeoutExpired:
                child.kill()
                raise AssertionError(f"{label} did not end in {DEFAULT_TIMEOUT_S:.0f} s\n"
                                     + self.report()) from None
            assert code == 0, f"{label} failed\n{self.report()}"
        return {label: child.output() for label, child in running.items()}

    def run_json(self, commands: dict[str, list[str]]) -> dict[str, Any]:
        """As :meth:`run_all`, each stdout read as JSON."""
        return {label: json.loads(out) for label, out in self.run_all(commands).items()}

    def await_output(self, child: CoreProcess, text: str, timeout: float) -> None:
        """Wait until ``child`` prints ``text`` (it is ready, say)."""
        self.await_true(lambda: text in child.output(), f"{child.label} printing {text!r}",
                        timeout, watch=[child])

    def await_true(self, condition: Callable[[], bool], what: str, timeout: float, *,
                   watch: Sequence[CoreProcess] = (), poll_s: float = 0.1) -> None:
        """Wait until ``condition()`` holds; AssertionError with every output when
        ``timeout`` passes or a process in ``watch`` ends first."""

        def holds() -> bool:
            ended = [child.label for child in watch if not child.alive()]
            if ended:
                raise AssertionError(f"{', '.join(ended)} ended while waiting for {what}")
            return condition()

        try:
            wait_until(holds, timeout, what=what, poll_s=poll_s)
        except AssertionError as exc:
            raise AssertionError(f"{exc}\n{self.report()}") from None

    def report(self) -> str:
        """What every child said so far, for a failure message."""
        return "\n".join(child.report() for child in self.started)

    def kill_all(self) -> None:
        for child in self.started:
            child.kill()


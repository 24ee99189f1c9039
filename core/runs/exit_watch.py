"""Pausing a runner's runs when the process exits, before Python joins their threads."""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

__all__ = ["ExitWatch"]


class ExitWatch:
    """Calls ``on_exit()`` once the interpreter starts to exit (unless stopped first).

    ``atexit`` is too late: Python joins the worker threads first, and a run waiting for a
    person never ends its worker. An idle executor worker is the first thread Python ends
    at exit, before joining the others, so the watch waits for that one.
    """

    def __init__(self, on_exit: Callable[[], None]) -> None:
        self._on_exit = on_exit
        self._sentinel: ThreadPoolExecutor | None = ThreadPoolExecutor(
            max_workers=1, thread_name_prefix="planboard-exit")
        worker = self._sentinel.submit(threading.current_thread).result()
        threading.Thread(target=self._watch, args=(worker,), daemon=True,
                         name="planboard-exit-watch").start()

    def _watch(self, worker: threading.Thread) -> None:
        worker.join()
        self._on_exit()

    def stop(self) -> None:
        """End the watch without calling ``on_exit`` (its owner closed first)."""
        sentinel, self._sentinel = self._sentinel, None
        if sentinel is not None:
            sentinel.shutdown(wait=True)

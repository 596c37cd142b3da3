"""The local cluster's workers leave Ctrl-C (and SIGTERM and SIGHUP) to the client.

A Ctrl-C in a terminal reaches every process of the foreground group, the local cluster's
worker processes included, which would stop mid-point with a traceback each; a closed
terminal's SIGHUP and a batch system's SIGTERM reach them all too. The client handles them
instead (the sweep stops, the cluster closes and its workers finish or are stopped by Dask,
what a stopped worker left half-written is removed): each worker ignores them, set by a
worker plugin so that a worker restarted after a death ignores them too. A worker still ends
with the client, however the client ends (Dask's workers watch their parent).
Imported only when a local cluster starts (it imports ``distributed``).
"""

from __future__ import annotations

import signal
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from distributed.diagnostics.plugin import WorkerPlugin

from fairgate.staging import STOP_SIGNALS


class CtrlCToTheClient(WorkerPlugin):
    """Runs in each worker's main thread when the worker starts."""

    name = "fairgate-ctrl-c-to-the-client"

    def setup(self, worker: Any) -> None:
        for signum in STOP_SIGNALS:
            signal.signal(signum, signal.SIG_IGN)


TRACKER_WARNING = "ignore:resource_tracker:UserWarning"
"""The resource tracker's warning, at its end, that semaphores were left to it: those of
workers stopped mid-point after Ctrl-C. Removing them is its job; the warning is not the
user's."""


@contextmanager
def children_deaf_to_stops() -> Iterator[None]:
    """Blocks Ctrl-C, SIGTERM and SIGHUP in this thread while the local cluster starts, and
    starts multiprocessing's resource tracker (:func:`_start_resource_tracker`). What starts
    meanwhile inherits the block and keeps it: Dask's event-loop thread (so such a signal
    reaches the main thread), the worker processes it spawns and respawns, which would
    otherwise stop with a traceback each while importing fairgate in their first seconds
    (before the plugin above runs), and the tracker. A signal sent meanwhile is delivered
    here when the block ends, once the cluster is up and can close cleanly (closing it
    half-started failed with Dask's ``AssertionError: Status.init``)."""
    blocked = signal.pthread_sigmask(signal.SIG_BLOCK, STOP_SIGNALS)
    try:
        _start_resource_tracker()
        signal.pthread_sigmask(signal.SIG_BLOCK, STOP_SIGNALS)  # the tracker's start unblocks two
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, blocked)


@contextmanager
def main_left_behind() -> Iterator[None]:
    """While the local cluster's processes are spawned, they are not given the program's
    ``__main__``: multiprocessing's spawn re-runs the parent's main file (or module) in each
    child, so a script without ``if __name__ == "__main__":`` started a sweep again in every
    worker as it started (the cluster: "Nanny failed to start"), and a script read from stdin
    (``python - < script.py``, whose file is ``<stdin>``) failed with FileNotFoundError. The
    workers run only fairgate's own functions."""
    main = sys.modules.get("__main__")
    if main is None:
        yield
        return
    names = ("__file__", "__spec__")
    hidden = {name: main.__dict__[name] for name in names if name in main.__dict__}
    main.__dict__.pop("__file__", None)
    main.__spec__ = None
    try:
        yield
    finally:
        main.__dict__.pop("__spec__", None)
        main.__dict__.update(hidden)


def _start_resource_tracker() -> None:
    """Starts the resource tracker the local cluster's processes share, without its warning
    about what stopped workers left (TRACKER_WARNING). It keeps SIGHUP blocked (Python
    unblocks SIGINT and SIGTERM in it after ignoring them): a closed terminal hangs up the
    whole group, and a tracker that dies is started again by the next worker, which then
    gives it names it never saw (a traceback each)."""
    from multiprocessing import resource_tracker

    options = list(sys.warnoptions)
    sys.warnoptions.append(TRACKER_WARNING)
    try:
        resource_tracker.ensure_running()
    finally:
        sys.warnoptions[:] = options

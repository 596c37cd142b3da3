"""The local cluster's workers leave Ctrl-C to the client.

A Ctrl-C in a terminal reaches every process of the foreground group, the local cluster's
worker processes included, which would stop mid-point with a traceback each. The client
handles it instead (the sweep stops, the cluster closes and its workers finish or are
stopped by Dask, what a stopped worker left half-written is removed): each worker ignores
SIGINT, set by a worker plugin so that a worker restarted after a death ignores it too.
Imported only when a local cluster starts (it imports ``distributed``).
"""

from __future__ import annotations

import signal
from typing import Any

from distributed.diagnostics.plugin import WorkerPlugin


class CtrlCToTheClient(WorkerPlugin):
    """Runs in each worker's main thread when the worker starts."""

    name = "fairgate-ctrl-c-to-the-client"

    def setup(self, worker: Any) -> None:
        signal.signal(signal.SIGINT, signal.SIG_IGN)

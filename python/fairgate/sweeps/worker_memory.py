"""A Dask worker's memory limit as a limit of the core: the worker's nanny restarts a worker
whose memory passes ``distributed.worker.memory.terminate`` (95 %) of its ``memory_limit``,
and the point it ran is lost ("worker lost (KilledWorker ...)") after as many deaths as
attempts, each after running as long as it could. A local cluster gives each worker the
machine's memory divided by the number of workers (1 GiB each for eight workers on 8 GiB).
The core sees no such limit in the process (it is neither ``ulimit -v`` nor a cgroup), so
each point tells it the worker's before it runs (``docs/scenarios.md``, ``memory_limit_mib``)."""

from __future__ import annotations

import sys
from typing import Any

from fairgate import _core

RAISE = (
    "or workers with more memory (dask worker --memory-limit; a local cluster gives each "
    "worker the machine's memory divided by --workers)"
)


def adopt_worker_memory_limit() -> None:
    """Gives the core the memory limit of the Dask worker this point runs on, if a nanny
    enforces one; clears it elsewhere (a worker in a thread has no nanny to kill it)."""
    limit = _enforced_limit(_current_worker())
    if limit is None:
        _core.set_host_memory_limit(None)
        return
    total, fraction = limit
    what = (
        f"its Dask worker's memory limit of {total >> 20} MiB, past {fraction:.0%} of which "
        "the nanny restarts the worker"
    )
    _core.set_host_memory_limit(int(total * fraction), what, RAISE)


def _current_worker() -> Any:
    distributed = sys.modules.get("distributed")  # not imported: not in a worker
    if distributed is None:
        return None
    try:
        return distributed.get_worker()
    except ValueError:  # not in a worker
        return None


def _enforced_limit(worker: Any) -> tuple[int, float] | None:
    """(memory_limit, the fraction at which the nanny restarts the worker), when both hold."""
    if worker is None or getattr(worker, "nanny", None) is None:
        return None
    import dask

    total = getattr(getattr(worker, "memory_manager", None), "memory_limit", None)
    fraction = dask.config.get("distributed.worker.memory.terminate", default=False)
    if not total or not fraction:
        return None
    return int(total), float(fraction)

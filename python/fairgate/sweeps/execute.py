"""The executor: runs independent tasks (sweep points, reproduction cases) on Dask.

Where tasks run, in this order: the ``client`` given (a ``distributed.Client``); a scheduler
address (``scheduler=``, else ``$FAIRGATE_SCHEDULER``); else one local cluster per process,
created on first use, with one single-threaded worker process per core on 127.0.0.1.

An exception raised by a task is its outcome (recorded, not retried: the same inputs would
fail the same way). A worker that dies while running a task makes the task run once more;
the second loss records the task as failed. Outcomes arrive in completion order.
"""

from __future__ import annotations

import asyncio
import atexit
import logging
import os
import traceback
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from tqdm import tqdm

from fairgate._core import ScenarioError

SCHEDULER_ENV = "FAIRGATE_SCHEDULER"
CONNECT_TIMEOUT_S = 5
ATTEMPTS = 2
"""A task whose worker dies is run once more, then recorded as failed."""


@dataclass(frozen=True)
class Task:
    """``function(*args)`` under a unique ``key``; both must pickle (module-level function)."""

    key: str
    function: Callable[..., Any]
    args: tuple[Any, ...] = ()


@dataclass(frozen=True)
class Outcome:
    key: str
    value: Any
    error: str | None
    attempts: int

    @property
    def ok(self) -> bool:
        return self.error is None


def guarded(function: Callable[..., Any], *args: Any) -> tuple[Any, str | None]:
    """Runs on the worker: (value, None), or (None, the exception and where it arose)."""
    try:
        return function(*args), None
    except Exception as err:  # the error is the point's recorded outcome
        where = traceback.extract_tb(err.__traceback__)[-1]
        place = f"{os.path.basename(where.filename)}:{where.lineno}"
        return None, f"{type(err).__name__}: {err} (at {place})"


_LOCAL: Any = None
LOCAL_CONFIG = {
    "distributed.scheduler.allowed-failures": 0,
    # The statistical profiler samples every worker's stack every 10 ms: CPU taken from the
    # points on a machine whose every core runs a worker (docs/results.md, "Speed").
    "distributed.worker.profile.enabled": False,
}


def local_client(workers: int | None = None) -> Any:
    """The process's local cluster (created on first use; ``workers`` defaults to the cores)."""
    global _LOCAL
    import dask
    from distributed import Client, LocalCluster

    if _LOCAL is not None and workers in (None, len(_LOCAL.scheduler_info()["workers"])):
        return _LOCAL
    close_local()
    with dask.config.set(LOCAL_CONFIG):
        cluster = LocalCluster(
            n_workers=workers or os.cpu_count() or 1,
            threads_per_worker=1,
            processes=True,
            host="127.0.0.1",
            dashboard_address=None,
            scheduler_kwargs={"dashboard_address": "127.0.0.1:0"},  # its HTTP routes: loopback
            silence_logs=logging.CRITICAL,
        )
    _LOCAL = Client(cluster)
    atexit.register(close_local)
    return _LOCAL


def close_local() -> None:
    global _LOCAL
    if _LOCAL is not None:
        cluster = _LOCAL.cluster
        _LOCAL.close()
        cluster.close()
        _LOCAL = None


def connect(scheduler: str) -> Any:
    """A client of the cluster at ``scheduler``; ScenarioError if it cannot be reached."""
    from distributed import Client

    if "://" not in scheduler:
        raise ScenarioError(
            f"scheduler: got {scheduler!r}, expected an address like tcp://HOST:PORT"
        )
    try:
        return Client(scheduler, timeout=CONNECT_TIMEOUT_S)
    except (OSError, TimeoutError, ValueError) as err:
        raise ScenarioError(f"scheduler: cannot reach {scheduler}: {err}") from None


def resolve(client: Any = None, scheduler: str | None = None, workers: int | None = None) -> Any:
    """The client tasks go to (see the module docstring for the order)."""
    if client is not None:
        return client
    address = scheduler or os.environ.get(SCHEDULER_ENV)
    if address:
        return connect(address)
    return local_client(workers)


def _submit(client: Any, task: Task, attempt: int) -> Any:
    key = f"fairgate-{task.key}-{attempt}"
    return client.submit(guarded, task.function, *task.args, key=key, pure=False)


def execute(
    tasks: Sequence[Task],
    client: Any,
    progress: bool = False,
    desc: str = "points",
) -> Iterator[Outcome]:
    """Runs ``tasks`` on ``client``; yields each outcome as it completes. Pending tasks are
    cancelled when the caller stops early (Ctrl-C)."""
    from distributed import as_completed

    by_future = {_submit(client, task, 1): (task, 1) for task in tasks}
    failed = 0
    bar = tqdm(total=len(tasks), desc=desc, unit="pt", disable=not progress, leave=False)
    pending = as_completed(list(by_future))
    try:
        for future in pending:
            task, attempt = by_future.pop(future)
            outcome = _collect(future, task, attempt)
            future.release()
            if outcome is None:
                retry = _submit(client, task, attempt + 1)
                by_future[retry] = (task, attempt + 1)
                pending.add(retry)
                continue
            failed += not outcome.ok
            bar.set_postfix(failed=failed, remaining=len(tasks) - bar.n - 1, refresh=False)
            bar.update(1)
            yield outcome
    finally:
        bar.close()
        if by_future:
            client.cancel(list(by_future))


def _collect(future: Any, task: Task, attempt: int) -> Outcome | None:
    """The task's outcome, or None when its worker was lost and it gets another attempt."""
    if future.status == "finished":
        value, error = future.result()
        return Outcome(task.key, value, error, attempt)
    try:
        err = future.exception()
    except (Exception, asyncio.CancelledError) as lost:  # cancelled with its cluster
        err = lost
    if attempt < ATTEMPTS:
        return None
    return Outcome(task.key, None, f"worker lost ({type(err).__name__}: {err})", attempt)

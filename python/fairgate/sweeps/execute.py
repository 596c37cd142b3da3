"""The executor: runs independent tasks (sweep points, reproduction cases) on Dask.

Where tasks run, in this order: the ``client`` given (a ``distributed.Client``); a scheduler
address (``scheduler=``, else ``$FAIRGATE_SCHEDULER``); else one local cluster per process,
created on first use, with one single-threaded worker process per core this process may use
(its CPU affinity and CPU quota) on 127.0.0.1.

An exception raised by a task is its outcome (recorded, not retried: the same inputs would
fail the same way). A worker that dies while running a task makes the task run once more;
the second loss records the task as failed. Outcomes arrive in completion order. Sweeps send
their points in batches (several to one Dask task); a lost batch runs again point by point.

Every Dask task is marked a root task, so that the scheduler queues it and hands it to a
worker only when the worker is free: with the local cluster's worker saturation of 1, a worker
holds only the task it runs, and a worker's death loses no other task, a retry included.
"""

from __future__ import annotations

import asyncio
import atexit
import logging
import multiprocessing
import os
import sys
import threading
import traceback
import uuid
import warnings
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass
from typing import Any

from tqdm import tqdm

from fairgate._core import ScenarioError
from fairgate.checks import clipped, shown
from fairgate.display import progress_bar
from fairgate.sweeps.dask_config import check_dask_config

SCHEDULER_ENV = "FAIRGATE_SCHEDULER"
CONNECT_TIMEOUT_S = 5
CLOSE_TIMEOUT_S = 20
"""Seconds the local cluster's client and then the cluster itself may take to close."""
ATTEMPTS = 2
"""A task whose worker dies is run once more, then recorded as failed."""
SWEEP_BATCH = 8
"""Sweep points per Dask task at most: Dask's own cost per task, on the client, the
scheduler and the worker, is paid once for the batch (docs/results.md, "Speed")."""
TAIL_SHARE = 4


@dataclass(frozen=True)
class Task:
    """``function(*args)`` under a unique ``key``; both must pickle (module-level function).
    With ``with_attempt`` the attempt number (1, or 2 for a retry) is passed as a last argument."""

    key: str
    function: Callable[..., Any]
    args: tuple[Any, ...] = ()
    with_attempt: bool = False


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
    """Runs on the worker: (value, None), or (what the failure kept, the exception and where
    it arose). An exception keeps a value of the failed task in ``kept_on_failure`` (a run
    that broke conservation: every broken law, where its message shows the first few)."""
    try:
        return function(*args), None
    except Exception as err:  # the error is the point's recorded outcome
        where = traceback.extract_tb(err.__traceback__)[-1]
        place = f"{os.path.basename(where.filename)}:{where.lineno}"
        kept = getattr(err, "kept_on_failure", None)
        return kept, f"{type(err).__name__}: {err} (at {place})"


_LOCAL: Any = None
_LOCAL_LOCK = threading.Lock()


_DASK_STARTED = False
"""Set once this process has started a Dask client (a local cluster or one reached)."""
_FORKED_AFTER_DASK = False


def _forget_local_in_child() -> None:
    """A forked child (a ``fork`` pool's worker) inherits the parent's client and Dask's
    state, but not their threads: a sweep there waited forever, on the parent's cluster, on a
    new one, or on one reached, even after the parent had closed its own. The child forgets
    the parent's cluster (the parent's to close) and refuses to start Dask (:func:`resolve`)."""
    global _LOCAL, _LOCAL_LOCK, _FORKED_AFTER_DASK
    _FORKED_AFTER_DASK = _FORKED_AFTER_DASK or _DASK_STARTED
    _LOCAL, _LOCAL_LOCK = None, threading.Lock()


def _check_dask_can_start() -> None:
    if _FORKED_AFTER_DASK:
        raise ScenarioError(
            "client: got none in a process forked from one that had started Dask (its threads "
            "are not forked, so a cluster started or reached here would wait forever); "
            "expected a process started by spawn: multiprocessing.get_context('spawn')"
        )


os.register_at_fork(after_in_child=_forget_local_in_child)


def _in_threads() -> bool:
    """Whether this process's local cluster runs in its threads: a daemonic process (a
    ``multiprocessing`` pool's worker, a Dask worker) may not start processes, and the core
    runs without the GIL."""
    return multiprocessing.current_process().daemon


LOCAL_CONFIG = {
    "distributed.scheduler.allowed-failures": 0,
    # A worker holds only the task it runs: a worker's death loses no other task.
    "distributed.scheduler.worker-saturation": 1.0,
    # A local cluster has a worker on every core, so CPU that Dask spends while the points run
    # is taken from the points (docs/results.md, "Speed"). The statistical profiler samples
    # every worker's stack every 10 ms. The periodic callbacks (event-loop tick every 20 ms,
    # system monitor every 500 ms, the nannies' memory monitor every 100 ms) cost 3 % of a
    # core in the client process (client, scheduler, nannies) and 1.7 % in each worker at
    # their defaults; 0.75 % and 0.3 % at these.
    "distributed.worker.profile.enabled": False,
    "distributed.admin.tick.interval": "1s",
    "distributed.admin.system-monitor.interval": "5s",
    "distributed.worker.memory.monitor-interval": "1s",
}


def usable_cores() -> int:
    """The cores this process may run on: its CPU affinity (``taskset``, a batch job's cpuset)
    and its cgroup's CPU quota (a container's ``--cpus``), as Dask counts them. With the
    machine's count (``os.cpu_count()``), ``taskset -c 0`` on two cores started two workers;
    a job given 4 cores of a 128-core node would have started 128, each taking about 100 MB
    and time-slicing the 4."""
    from dask.system import CPU_COUNT

    return max(1, int(CPU_COUNT))


def most_local_workers() -> int:
    """Four worker processes per usable core: more only time-slice the cores, each costing
    about 100 MB (a million were asked for once, and the cluster never came up)."""
    return 4 * usable_cores()


def check_workers(workers: int | None, name: str = "workers") -> None:
    """Refuses a local cluster size below 1 or above ``most_local_workers()``."""
    if workers is None:
        return
    if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
        raise ScenarioError(f"{name}: got {shown(workers)}, expected at least 1")
    if workers > most_local_workers():
        raise ScenarioError(
            f"{name}: got {workers}, expected at most {most_local_workers()} "
            "(four per core this process may use)"
        )


def local_client(workers: int | None = None) -> Any:
    """The process's local cluster (created on first use; ``workers`` defaults to the cores).
    Threads that ask at once share one: each would otherwise start its own, all but one left
    running until the process ends."""
    check_workers(workers)
    _check_dask_can_start()
    with _LOCAL_LOCK:
        return _local_client(workers)


def _local_client(workers: int | None) -> Any:
    global _LOCAL, _DASK_STARTED
    import dask
    from distributed import Client, LocalCluster

    from fairgate.sweeps.local_workers import (
        CtrlCToTheClient,
        children_deaf_to_stops,
        main_left_behind,
    )

    running = _LOCAL is not None and _LOCAL.status == "running"  # a caller may close it
    if running and workers in (None, len(_LOCAL.scheduler_info().get("workers", {}))):
        return _LOCAL
    close_local()
    _DASK_STARTED = True
    _quiet_closed_comms()
    processes = not _in_threads()  # in threads, no signal plugin: a thread cannot set one
    with children_deaf_to_stops() if processes else nullcontext(), main_left_behind():
        with dask.config.set(LOCAL_CONFIG), _cluster_start():
            cluster = LocalCluster(
                n_workers=workers or usable_cores(),
                threads_per_worker=1,
                processes=processes,
                protocol="tcp://",  # without processes Dask's default is in-process, not TCP
                host="127.0.0.1",
                dashboard_address=None,
                scheduler_kwargs={"dashboard_address": "127.0.0.1:0"},  # HTTP routes: loopback
                silence_logs=logging.CRITICAL,
            )
        _LOCAL = Client(cluster)
        if processes:
            _LOCAL.register_plugin(CtrlCToTheClient())
        atexit.register(close_local)
    return _LOCAL


class _ClosedCommNoise(logging.Filter):
    """Drops Dask's "Batched Comm Closed" record: a cluster closing (after each sweep in a
    pool's worker) logs it at INFO with a traceback, once the cluster's ``silence_logs`` has
    handed the log level back, so that a sweep's stderr showed a ``CommClosedError``
    traceback now and then though nothing had failed."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not str(record.msg).startswith("Batched Comm Closed")


def _quiet_closed_comms() -> None:
    logger = logging.getLogger("distributed.batched")
    if not any(isinstance(f, _ClosedCommNoise) for f in logger.filters):
        logger.addFilter(_ClosedCommNoise())


@contextmanager
def _cluster_start() -> Iterator[None]:
    """A local cluster that fails to start (its worker processes refused by the system: too
    many open files, no memory) raises OSError naming the system's reason, a failure of the
    machine rather than of the input, instead of Dask's ``RuntimeError: Nanny failed to
    start``."""
    try:
        yield
    except (RuntimeError, OSError, TimeoutError) as err:
        reason: BaseException | None = err
        while reason is not None and not isinstance(reason, OSError):
            reason = reason.__cause__ or reason.__context__
        why = reason.strerror if isinstance(reason, OSError) and reason.strerror else str(err)
        raise OSError(f"the local Dask cluster did not start: {why}") from None


def close_local() -> None:
    """Closes the process's local cluster, if there is one. It is forgotten first, so a close
    that fails is not tried again at exit, and each step waits at most ``CLOSE_TIMEOUT_S``: a
    cluster's close otherwise waits for every worker without a bound, which after a Ctrl-C
    (a worker mid-point, the event loop busy) once kept the process alive past two minutes.
    Worker processes still running when it gives up end with this process."""
    global _LOCAL
    local, _LOCAL = _LOCAL, None
    if local is None:
        return
    try:
        cluster = local.cluster
        local.close(timeout=CLOSE_TIMEOUT_S)
        cluster.close(timeout=CLOSE_TIMEOUT_S)
    except (TimeoutError, OSError) as err:
        message = f"the local cluster did not close cleanly ({type(err).__name__}: {err})"
        warnings.warn(f"{message}; its workers end with this process", stacklevel=2)


def done_with(client: Any) -> None:
    """Called after each sweep. In a daemonic process (a ``multiprocessing`` pool's worker, a
    Dask worker), whose local cluster runs in its threads, the cluster is closed: such a
    process ends without running ``atexit`` (a pool is terminated), and a cluster left open
    leaks its semaphores with a warning each. Elsewhere it is kept for the next sweep."""
    if is_local(client) and _in_threads():
        close_local()


def is_local(client: Any) -> bool:
    """Whether ``client`` is the process's local cluster (see :func:`local_client`)."""
    return client is not None and client is _LOCAL


def connect(scheduler: str, source: str = "scheduler") -> Any:
    """A client of the cluster at ``scheduler``; ScenarioError naming ``source`` (the argument,
    option or environment variable that gave it) if it is no address or cannot be reached."""
    global _DASK_STARTED
    from distributed import Client

    _check_address(scheduler, source)
    _check_dask_can_start()
    _DASK_STARTED = True
    try:
        _check_scheduler(scheduler)
        return Client(scheduler, timeout=CONNECT_TIMEOUT_S)
    except (OSError, TimeoutError, ValueError) as err:
        raise ScenarioError(f"{source}: cannot reach {clipped(scheduler)}: {err}") from None


def _check_address(address: str, source: str) -> None:
    """Refuses ``address`` unless it is SCHEME://HOST:PORT (``tcp://[::1`` was reported as a
    scheduler that "did not answer")."""
    problem = _address_problem(address)
    if problem is not None:
        raise ScenarioError(
            f"{source}: got {shown(address)}, expected an address like tcp://HOST:PORT{problem}"
        )


def _address_problem(address: str) -> str | None:
    """Why ``address`` is no SCHEME://HOST:PORT, after a colon (empty when it has no scheme);
    None when it is one."""
    from distributed.comm.addressing import parse_address, parse_host_port

    if "://" not in address:
        return ""
    try:
        port = parse_host_port(parse_address(address)[1])[1]
    except ValueError as err:
        return f": {err}"
    return None if 0 < port < 65536 else f": port {port} is not from 1 to 65535"


def _check_scheduler(address: str) -> None:
    """Asks ``address`` who it is, within CONNECT_TIMEOUT_S in all; TimeoutError if it does not
    answer, ValueError if it is not a Dask scheduler. Dask's own connect bounds the TCP
    connection but not the handshake after it, so a server that accepts and never answers
    would make ``Client`` wait forever."""

    async def identity() -> Any:
        from distributed.comm import connect
        from distributed.security import Security

        # The TLS settings a Client would take from Dask's configuration (tls:// schedulers).
        security = Security().get_connection_args("client")
        comm = await connect(address, timeout=CONNECT_TIMEOUT_S, **security)
        try:
            await comm.write({"op": "identity", "reply": True})
            return await comm.read()
        finally:
            comm.abort()

    def ask() -> Any:  # its own thread and loop: the caller may be inside one (Jupyter)
        return asyncio.run(asyncio.wait_for(identity(), CONNECT_TIMEOUT_S))

    with ThreadPoolExecutor(max_workers=1) as pool:
        try:
            reply = pool.submit(ask).result()
        except TimeoutError:
            raise TimeoutError(f"no answer within {CONNECT_TIMEOUT_S} s") from None
        except OSError:
            raise
        except Exception as err:  # Dask read another protocol's bytes as a frame (MemoryError)
            raise ValueError(
                f"it did not answer as a Dask scheduler ({type(err).__name__})"
            ) from None
    if not (isinstance(reply, dict) and reply.get("type") == "Scheduler"):
        raise ValueError(f"it answered {shown(reply)}, not as a Dask scheduler")


def resolve(
    client: Any = None,
    scheduler: str | None = None,
    workers: int | None = None,
    scheduler_source: str = "scheduler",
) -> Any:
    """The client tasks go to (see the module docstring for the order); an error in
    ``scheduler`` names ``scheduler_source``, the option that gave it."""
    if client is not None:
        from distributed import Client

        if not isinstance(client, Client):
            raise ScenarioError(
                f"client: got {type(client).__name__}, expected a dask.distributed.Client "
                "or None (a local cluster)"
            )
        if client.status != "running":  # closed: its first call failed deep inside Dask
            raise ScenarioError(
                f"client: got a Client that is {client.status}, expected a running one (a "
                "Client is closed with its `with` block or .close()), or None (a local cluster)"
            )
        return client
    check_dask_config()
    if scheduler:
        return connect(scheduler, scheduler_source)
    if os.environ.get(SCHEDULER_ENV):
        return connect(os.environ[SCHEDULER_ENV], f"${SCHEDULER_ENV}")
    return local_client(workers)


def batches(tasks: Sequence[Task], slots: int, most: int) -> list[list[Task]]:
    """Consecutive tasks grouped into Dask tasks of at most ``most``: each batch is a quarter
    of what remains per worker slot, so batches shrink as the run nears its end and the last
    tasks go one by one (no worker finishes much after the others)."""
    grouped: list[list[Task]] = []
    start = 0
    while start < len(tasks):
        size = max(1, min(most, (len(tasks) - start) // (TAIL_SHARE * max(1, slots))))
        grouped.append(list(tasks[start : start + size]))
        start += size
    return grouped


def run_batch(calls: Sequence[tuple[Callable[..., Any], tuple[Any, ...]]]) -> list[Any]:
    """Runs on the worker: each call :func:`guarded`, in order."""
    return [guarded(function, *args) for function, args in calls]


def _calls(batch: list[Task], attempt: int) -> list[tuple[Callable[..., Any], tuple[Any, ...]]]:
    return [
        (task.function, (*task.args, attempt) if task.with_attempt else task.args) for task in batch
    ]


def _submit(client: Any, run: str, grouped: list[list[Task]], attempt: int) -> list[Any]:
    """Each batch a Dask task marked as a root task (see the module docstring), keyed by the
    run, its first task and the attempt, with a priority that makes the scheduler hand them
    out in order (a Dask priority applies to a whole graph, hence one graph per batch)."""
    from dask._task_spec import Task as DaskTask

    futures = []
    for index, batch in enumerate(grouped):
        more = f"+{len(batch) - 1}" if len(batch) > 1 else ""
        key = f"fairgate-{run}-{batch[0].key}{more}-{attempt}"
        task = DaskTask(key, run_batch, _calls(batch, attempt), _data_producer=True)
        futures += client.get({key: task}, [key], sync=False, priority=-index)
    return futures


def execute(
    tasks: Sequence[Task],
    client: Any,
    progress: bool = False,
    desc: str = "points",
    batch: int = 1,
) -> Iterator[Outcome]:
    """Runs ``tasks`` on ``client``, up to ``batch`` of them in one Dask task (see
    :func:`batches`); yields each outcome as it completes. Pending tasks are cancelled when
    the caller stops early (Ctrl-C)."""
    from distributed import as_completed

    threads = client.nthreads()
    if not threads:
        _say_no_workers(client, progress)
    slots = sum(threads.values()) if batch > 1 else 1
    grouped = batches(tasks, slots, batch)
    run = uuid.uuid4().hex[:8]
    futures = _submit(client, run, grouped, 1)
    by_future = {f: (group, 1) for f, group in zip(futures, grouped, strict=True)}
    failed = 0
    bar = progress_bar(progress, total=len(tasks), desc=desc, unit="pt", leave=False)
    pending = as_completed(list(by_future))
    try:
        for future in pending:
            group, attempt = by_future.pop(future)
            outcomes = _collect(future, group, attempt)
            future.release()
            if outcomes is None:  # its worker was lost: each task once more, on its own
                alone = [[task] for task in group]
                for retry, single in zip(
                    _submit(client, run, alone, attempt + 1), alone, strict=True
                ):
                    by_future[retry] = (single, attempt + 1)
                    pending.add(retry)
                continue
            for outcome in outcomes:
                failed += not outcome.ok
                bar.set_postfix(failed=failed, remaining=len(tasks) - bar.n - 1, refresh=False)
                bar.update(1)
                yield outcome
    finally:
        bar.close()
        if by_future:
            client.cancel(list(by_future))


def _say_no_workers(client: Any, progress: bool) -> None:
    """Says why nothing moves: a scheduler without workers holds the tasks until one joins
    (a cluster may add its workers later, so this is no error)."""
    address = client.scheduler.address
    message = (
        f"waiting for workers: the scheduler at {address} has none yet; the points run when "
        f"one joins (`dask worker {address}`), Ctrl-C stops"
    )
    if progress:
        tqdm.write(message, file=sys.stderr)
    else:
        warnings.warn(message, stacklevel=3)


def _collect(future: Any, group: list[Task], attempt: int) -> list[Outcome] | None:
    """The group's outcomes, or None when its worker was lost and it gets another attempt.
    A result lost with its worker before it was fetched is computed again by Dask itself
    (it is not a failure of the task): ``result()`` waits for it."""
    try:
        results = future.result()
    except (Exception, asyncio.CancelledError) as lost:  # killed worker, or cancelled
        if attempt < ATTEMPTS:
            return None
        error = f"worker lost ({type(lost).__name__}: {lost})"
        return [Outcome(task.key, None, error, attempt) for task in group]
    return [
        Outcome(task.key, value, error, attempt)
        for task, (value, error) in zip(group, results, strict=True)
    ]

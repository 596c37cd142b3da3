"""The executor on real Dask clusters: a scheduler and two worker processes started on
loopback, an unreachable scheduler, and workers that die mid-point."""

from __future__ import annotations

import contextlib
import importlib
import json
import logging
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import cloudpickle
import pytest

import fairgate as fg
from fairgate.sweeps.execute import Task, connect, execute, local_client

sys.path.insert(0, str(Path(__file__).parent))
from test_sweep import LIMIT, poisson_queue  # noqa: E402

cloudpickle.register_pickle_by_value(sys.modules[__name__])  # workers need not import tests


def _start(args: list[str], log: Path) -> subprocess.Popen:
    """A process in a session of its own, so that ``_stop`` reaches the processes it starts
    (a worker's nanny and the worker under it)."""
    return subprocess.Popen(
        [sys.executable, "-m", *args],
        stdout=log.open("w"),
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )


def _stop(proc: subprocess.Popen) -> None:
    """Ends ``proc`` and everything it started: a nanny busy restarting a worker the memory
    limit killed outlived SIGTERM and the test, with its worker."""
    try:
        proc.wait(timeout=30)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(timeout=30)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)


def _worker(address: str, name: str, log: Path, *extra: str) -> subprocess.Popen:
    return _start(
        [
            "distributed.cli.dask_worker",
            address,
            "--host",
            "127.0.0.1",
            "--nthreads",
            "1",
            "--no-dashboard",
            "--name",
            name,
            *extra,
        ],
        log,
    )


@contextlib.contextmanager
def cluster(
    tmp_path: Path, workers: int, *worker_args: str
) -> Iterator[tuple[str, list[subprocess.Popen]]]:
    """`dask scheduler` and ``workers`` `dask worker` processes (with ``worker_args``), all on
    127.0.0.1; yields the address and the processes (a test may add workers to the list)."""
    info = tmp_path / "scheduler.json"
    scheduler = _start(
        [
            "distributed.cli.dask_scheduler",
            "--host",
            "127.0.0.1",
            "--port",
            "0",
            "--no-dashboard",
            "--scheduler-file",
            str(info),
        ],
        tmp_path / "scheduler.log",
    )
    procs = [scheduler]
    try:
        deadline = time.monotonic() + 60
        while not info.exists() and time.monotonic() < deadline:
            time.sleep(0.1)
        address = json.loads(info.read_text())["address"]
        assert address.startswith("tcp://127.0.0.1:")
        for k in range(workers):
            procs.append(_worker(address, f"w{k}", tmp_path / f"worker{k}.log", *worker_args))
        yield address, procs
    finally:
        for proc in reversed(procs):
            proc.terminate()
        for proc in procs:
            _stop(proc)


@pytest.fixture
def loopback_cluster(tmp_path: Path):
    """`dask scheduler` and two `dask worker` processes, all on 127.0.0.1."""
    with cluster(tmp_path, workers=2) as (address, _):
        yield address


def test_a_scheduler_without_workers_is_said_and_waited_for(tmp_path: Path):
    with cluster(tmp_path, workers=0) as (address, procs):
        client = connect(address)
        try:
            outcomes = execute([Task("late", os.getpid)], client)
            procs.append(_worker(address, "late", tmp_path / "late.log"))  # joins in ~2 s
            with pytest.warns(
                UserWarning, match=f"waiting for workers: the scheduler at {address}"
            ):
                (late,) = list(outcomes)
        finally:
            client.close()
    assert late.ok


def test_sweep_runs_on_a_loopback_scheduler_with_two_workers(loopback_cluster, tmp_path):
    client = connect(loopback_cluster)
    try:
        client.wait_for_workers(2, timeout=60)
        start = time.monotonic()
        frame = fg.sweep(
            poisson_queue(), grid={LIMIT: [2, 5, 50]}, seeds=4, client=client, out=tmp_path / "s"
        )
        elapsed = time.monotonic() - start
        workers = {w["name"] for w in client.scheduler_info()["workers"].values()}
    finally:
        client.close()
    assert len(frame) == 12 and (frame["status"] == "ok").all()
    assert workers == {"w0", "w1"}
    local = fg.sweep(poisson_queue(), grid={LIMIT: [2, 5, 50]}, seeds=4, client=local_client(2))
    assert frame.drop(columns="attempts").equals(local.drop(columns="attempts"))
    print(f"loopback cluster: {len(frame) / elapsed:.1f} points/s")


WIDE = """
[simulation]
duration = "20s"
sample_interval = "4ms"

[topology]
kind = "dumbbell"
senders = 1
bottleneck = { rate = "10Mbps", delay = "10ms", queue = { kind = "fifo", limit = 100 } }
access = { rate = "100Mbps", delay = "1ms", queue = { kind = "fifo", limit = 1000 } }

[[flows]]
name = "f{i}"
count = 1000
src = "s0"
dst = "d0"
source = { kind = "tcp", cc = "newreno" }
"""
"""5001 samples of 2007 series: about 774 MiB, within the default memory_limit_mib."""


def test_a_point_beyond_its_workers_memory_limit_is_refused_naming_it(tmp_path: Path):
    """A worker started with --memory-limit 400MB was restarted by its nanny at each attempt
    of this point, which was then recorded as "worker lost (KilledWorker ...)"."""
    with cluster(tmp_path, 1, "--memory-limit", "400MB") as (address, _):
        client = connect(address)
        try:
            client.wait_for_workers(1, timeout=60)
            frame = fg.sweep(WIDE, client=client)
        finally:
            client.close()
    (error,) = frame["error"]
    assert error.startswith("ScenarioError: `simulation.sample_interval`: 5001 samples"), error
    limit = "under its Dask worker's memory limit of 381 MiB, past 95% of which the nanny"
    assert limit in error and "or workers with more memory (dask worker" in error, error
    assert "memory budget" not in (tmp_path / "worker0.log").read_text()


def test_only_a_limit_a_nanny_enforces_is_adopted():
    from fairgate.sweeps import worker_memory

    def worker(nanny: str | None, limit: int | None) -> object:
        manager = type("Manager", (), {"memory_limit": limit})()
        return type("Worker", (), {"nanny": nanny, "memory_manager": manager})()

    assert worker_memory._enforced_limit(None) is None  # not in a worker
    assert worker_memory._enforced_limit(worker(None, 2**30)) is None  # a thread: no nanny
    assert worker_memory._enforced_limit(worker("tcp://n", None)) is None  # no limit
    assert worker_memory._enforced_limit(worker("tcp://n", 2**30)) == (2**30, 0.95)
    import dask

    with dask.config.set({"distributed.worker.memory.terminate": False}):
        assert worker_memory._enforced_limit(worker("tcp://n", 2**30)) is None


def test_scheduler_from_the_environment_and_unreachable_addresses(monkeypatch):
    with pytest.raises(fg.ScenarioError, match="scheduler: got 'nowhere'"):
        connect("nowhere")
    monkeypatch.setenv("FAIRGATE_SCHEDULER", "tcp://127.0.0.1:9")
    start = time.monotonic()
    with pytest.raises(fg.ScenarioError, match=r"^\$FAIRGATE_SCHEDULER: cannot reach tcp://127"):
        fg.sweep(poisson_queue(), grid={LIMIT: [2]})
    assert time.monotonic() - start < 30


@pytest.mark.parametrize(
    ("address", "reason"),
    [
        ("tcp://[::1", "ipv6 needs brackets"),
        ("tcp://host", "missing port number"),
        ("tcp://host:99999", "port 99999 is not from 1 to 65535"),
        ("inproc://x", "missing port number"),
    ],
)
def test_an_address_that_is_none_is_named_as_such(monkeypatch, address: str, reason: str):
    """A malformed address was reported as a scheduler that "did not answer as a Dask
    scheduler (ValueError)"; from the environment, the error named `scheduler`, an argument
    the caller had not given."""
    with pytest.raises(fg.ScenarioError, match=f"^scheduler: got '.*', expected an .*{reason}"):
        connect(address)
    monkeypatch.setenv("FAIRGATE_SCHEDULER", address)
    with pytest.raises(fg.ScenarioError, match=r"^\$FAIRGATE_SCHEDULER: got"):
        fg.sweep(poisson_queue(), grid={LIMIT: [2]})


@pytest.mark.parametrize(
    "answer", [None, b"HTTP/1.0 400 Bad Request\r\n\r\n"], ids=["silent", "http"]
)
def test_a_server_that_is_not_a_scheduler_is_refused_within_the_timeout(answer: bytes | None):
    """Dask's Client waits forever on a server that accepts and never answers its handshake."""
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        address = f"tcp://127.0.0.1:{server.getsockname()[1]}"
        accepted: list[socket.socket] = []

        def serve() -> None:
            connection, _ = server.accept()
            accepted.append(connection)
            if answer is not None:
                connection.sendall(answer)

        threading.Thread(target=serve, daemon=True).start()
        start = time.monotonic()
        with pytest.raises(fg.ScenarioError, match=f"scheduler: cannot reach {address}: "):
            connect(address)
        assert time.monotonic() - start < 20
        for connection in accepted:
            connection.close()


def die_unless_marked(marker: str) -> int:
    """Kills its worker the first time (no marker yet), returns the worker's pid after."""
    if not os.path.exists(marker):
        Path(marker).touch()
        os._exit(1)
    return os.getpid()


def always_die() -> None:
    os._exit(1)


def fail() -> None:
    raise ValueError("bad point")


def test_a_lost_worker_retries_once_then_the_task_is_recorded_failed(tmp_path, fresh_cluster):
    client = fresh_cluster
    (once,) = execute([Task("once", die_unless_marked, (str(tmp_path / "marker"),))], client)
    assert once.ok and once.attempts == 2
    client.wait_for_workers(2, timeout=60)
    (always,) = execute([Task("always", always_die)], client)
    assert not always.ok and always.attempts == 2
    assert "worker lost" in always.error
    client.wait_for_workers(2, timeout=60)  # the nannies restart the killed workers
    (raised,) = execute([Task("raises", fail)], client)
    assert raised.attempts == 1  # an exception is the outcome: the same inputs fail the same way
    assert raised.error.startswith("ValueError: bad point (at test_sweep_cluster.py")


class _StuckClient:
    """A client whose close gives up as a busy cluster's does after a Ctrl-C."""

    def __init__(self) -> None:
        self.cluster = self
        self.closes: list[float | None] = []

    def close(self, timeout: float | None = None) -> None:
        self.closes.append(timeout)
        raise TimeoutError("workers still busy")


def test_a_local_cluster_that_will_not_close_is_given_up_with_a_warning(monkeypatch):
    ex = importlib.import_module("fairgate.sweeps.execute")  # the module, not the function
    stuck = _StuckClient()
    monkeypatch.setattr(ex, "_LOCAL", stuck)
    with pytest.warns(UserWarning, match="did not close cleanly"):
        ex.close_local()
    assert ex._LOCAL is None
    assert stuck.closes == [ex.CLOSE_TIMEOUT_S]  # bounded, and not tried again at exit
    ex.close_local()
    assert stuck.closes == [ex.CLOSE_TIMEOUT_S]


THREADS_ASK = """
import threading

from fairgate.sweeps.execute import local_client


def ask(barrier, clients):
    barrier.wait()
    clients.append(local_client(1))


if __name__ == "__main__":
    barrier, clients = threading.Barrier(3), []
    threads = [threading.Thread(target=ask, args=(barrier, clients)) for _ in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    print(len({id(client) for client in clients}), len(clients))
"""


def test_threads_asking_for_the_local_cluster_at_once_share_one(tmp_path: Path):
    """Each would otherwise start its own cluster, all but one running until the end. In a
    fresh process, run from a file: in this one, or with `python -c`, Dask's start differs
    and the race is not seen."""
    script = tmp_path / "ask.py"
    script.write_text(THREADS_ASK, encoding="utf-8")
    done = subprocess.run([sys.executable, script], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["1", "3"], done.stderr


WITHOUT_A_MAIN_GUARD = """
import fairgate as fg

SCENARIO = {scenario!r}
print("top level", flush=True)
table = fg.sweep(SCENARIO, grid={{"bottleneck.queue.limit": [5, 20]}})
print(len(table), "points")
"""


@pytest.mark.parametrize("how", ["file", "stdin", "module"])
def test_a_script_without_a_main_guard_sweeps_once(tmp_path: Path, how: str):
    """Spawned workers re-ran the parent's main file (or module): the sweep started again in
    each as it started ("Nanny failed to start"), and a script from stdin named `<stdin>`
    failed. The README's snippet, pasted into a script, has no guard."""
    scenario = (Path(__file__).parents[1] / "scenarios" / "showcase.toml").read_text("utf-8")
    scenario = scenario.replace('duration = "40s"', 'duration = "12s"').replace('"30s"', '"11s"')
    script = tmp_path / "unguarded.py"
    script.write_text(WITHOUT_A_MAIN_GUARD.format(scenario=scenario), "utf-8")
    command = {
        "file": [sys.executable, str(script)],
        "stdin": [sys.executable, "-"],
        "module": [sys.executable, "-m", "unguarded"],
    }[how]
    done = subprocess.run(
        command,
        input=script.read_text("utf-8") if how == "stdin" else None,
        capture_output=True,
        text=True,
        timeout=300,
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split("\n")[:2] == ["top level", "2 points"], done.stdout


IN_A_POOL = """
import multiprocessing

import fairgate as fg

SCENARIO = {scenario!r}


def job(seeds):
    table = fg.sweep(SCENARIO, grid={{"bottleneck.queue.limit": [5, 20]}}, seeds=seeds)
    return sorted(table["delivered_pkts"])


def refused(seeds):
    try:
        job(seeds)
    except fg.ScenarioError as err:
        return str(err)


if __name__ == "__main__":
    with multiprocessing.get_context("fork").Pool(1) as pool:  # before Dask: runs
        print(pool.map(job, [1]))
    with multiprocessing.get_context("spawn").Pool(1) as pool:
        print(pool.map(job, [1, 1]))
    print(job(1))
    with multiprocessing.get_context("fork").Pool(1) as pool:  # after: refused, not a hang
        print(pool.apply_async(refused, (1,)).get(timeout=60))
"""


def test_a_sweep_inside_a_pool_worker_runs_its_cluster_in_threads(tmp_path: Path):
    """A pool's worker is daemonic and may not start processes (the cluster failed with
    "Nanny failed to start"): its cluster runs in threads and is closed after each sweep, as
    a terminated worker runs no atexit (a cluster left open leaked its semaphores). A process
    forked after Dask started (its threads not forked) waited forever: it is refused."""
    scenario = (Path(__file__).parents[1] / "scenarios" / "showcase.toml").read_text("utf-8")
    scenario = scenario.replace('duration = "40s"', 'duration = "12s"')
    script = tmp_path / "pool.py"
    script.write_text(IN_A_POOL.format(scenario=scenario.replace('"30s"', '"11s"')), "utf-8")
    done = subprocess.run([sys.executable, script], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    forked, in_pool, direct, refused = done.stdout.splitlines()
    assert in_pool == f"[{direct}, {direct}]" and forked == f"[{direct}]"
    assert refused.startswith("client: got none in a process forked from one that had started")
    assert "Warning" not in done.stderr and "Traceback" not in done.stderr, done.stderr


@pytest.mark.parametrize(
    "variable, value, named",
    [
        (
            "DASK_DISTRIBUTED__COMM__TIMEOUTS__CONNECT",
            "bogus",
            "Dask configuration `distributed.comm.timeouts.connect`: got 'bogus', expected a "
            "duration such as '30s', its default (set by DASK_DISTRIBUTED__COMM__TIMEOUTS__CONNECT",
        ),
        (
            "DASK_DISTRIBUTED__WORKER__MEMORY__TARGET",
            "high",
            "`distributed.worker.memory.target`: got 'high', expected a number such as 0.6",
        ),
        # Read as distributed is imported: named without its key, which Dask does not give.
        ("DASK_DISTRIBUTED__COMM__SHARD", "lots", "Could not interpret 'lots' as a byte unit"),
    ],
)
def test_a_bad_dask_setting_is_named_before_a_cluster_starts(tmp_path, variable, value, named):
    showcase = Path(__file__).parent.parent / "scenarios" / "showcase.toml"
    command = [sys.executable, "-m", "fairgate.cli", "sweep", str(showcase), "--seeds", "2"]
    command += ["--workers", "1", "--out", str(tmp_path / "s")]
    done = subprocess.run(
        command, capture_output=True, text=True, timeout=120, env={**os.environ, variable: value}
    )
    assert done.returncode == 2, done.stderr
    assert done.stderr.startswith("error: Dask configuration") and named in done.stderr
    assert "Traceback" not in done.stderr and not (tmp_path / "s").exists()


def test_a_bad_dask_setting_raises_a_scenario_error_in_python():
    import dask

    with dask.config.set({"distributed.comm.timeouts.tcp": "soon"}):
        with pytest.raises(fg.ScenarioError, match="`distributed.comm.timeouts.tcp`: got 'soon'"):
            fg.sweep(fg.Scenario("x", duration=1), seeds=2)


def test_the_local_cluster_counts_the_cores_this_process_may_use():
    """Under `taskset -c 0` (as a batch job's cpuset pins a job), the local cluster started a
    worker per core of the machine and allowed four per core of it."""
    code = (
        "from fairgate.sweeps.execute import close_local, local_client, most_local_workers\n"
        "client = local_client(None)\n"
        "print(len(client.scheduler_info()['workers']), most_local_workers())\n"
        "close_local()\n"
    )
    one_core = {min(os.sched_getaffinity(0))}
    done = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=120,
        preexec_fn=lambda: os.sched_setaffinity(0, one_core),
    )
    assert done.stdout.split() == ["1", "4"], done.stderr


def test_a_closed_comm_at_a_clusters_close_is_not_logged(caplog: pytest.LogCaptureFixture):
    """Dask logs "Batched Comm Closed" with a traceback at INFO when a cluster closes, after
    the cluster's `silence_logs` has given the level back: a pool worker's sweep printed it
    now and then (found when the pool test above failed in a fresh clone under load)."""
    local_client(1)
    batched = logging.getLogger("distributed.batched")
    with caplog.at_level(logging.INFO, logger="distributed.batched"):
        batched.info("Batched Comm Closed %r", "comm", exc_info=False)
        batched.info("another record")
    logged = [r.getMessage() for r in caplog.records if r.name == "distributed.batched"]
    assert logged == ["another record"]

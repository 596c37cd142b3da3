"""Sweep benchmark (``make bench-sweep``): the executor's cost per point and its speed-up.

The same points (the showcase scenario with a buffer axis, about 0.13 s each) run
1. one after another in this process (the baseline);
2. split between one plain process per core started together (no Dask): the machine's own
   ceiling for the speed-up, as the cores slow each other down (shared caches, a VM's host);
3. on a local cluster with one worker: (time - baseline) / points is the overhead per point;
4. on a local cluster with one worker per core: baseline / time is the speed-up, with the
   sweeps' batches and with one point per Dask task; then as ``fg.sweep`` with a results
   store written by the client, and by the workers;
5. on a scheduler and two worker processes started on 127.0.0.1: points per second.
Each cluster's start-up is timed apart from its run (it then runs one warm-up point). CPU
times: the client process (client, scheduler and nannies of a local cluster) and the workers,
per point. Wall-clock times on a shared machine are noisy: the load average is printed beside
them.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from multiprocessing import get_context
from pathlib import Path
from typing import Any

from fairgate.sweeps import SweepRun, _point_tables, prepare, run_point, store
from fairgate.sweeps.execute import (
    SWEEP_BATCH,
    Task,
    close_local,
    connect,
    execute,
    local_client,
    usable_cores,
)

SCENARIO = Path(__file__).resolve().parents[3] / "scenarios" / "showcase.toml"
START_DELAY_S = 3.0
"""Plain processes wait until a common start time, so that they run side by side."""
STORE_SAMPLE = 20
"""Points whose partitions are written in this process to time a commit."""


def _sweep(points: int, duration_s: float, out: Path | None = None) -> SweepRun:
    limits = [10 + k for k in range(points)]
    base = [f"simulation.duration={duration_s}s"]
    return prepare(SCENARIO, grid={"bottleneck.queue.limit": limits}, overrides=base, out=out)


def _tasks(points: int, duration_s: float) -> list[Task]:
    run = _sweep(points, duration_s)
    return [
        Task(p.key, run_point, (run.text, [*run.overrides, *p.all_overrides()])) for p in run.points
    ]


def _with_store(
    client: Any, points: int, duration_s: float, on_workers: bool
) -> tuple[float, float, float]:
    """``fg.sweep(..., out=DIR)``: the points and the results store, whose Parquet files the
    workers or the client write, and the summary table it returns (as ``fg.sweep`` and
    ``fairgate sweep`` do by default). Wall time, and CPU per point of the client process and
    of the workers."""
    with tempfile.TemporaryDirectory() as tmp:
        run = _sweep(points, duration_s, Path(tmp) / "store")
        workers_before, client_before = client.run(cpu_s), cpu_s()
        elapsed = _timed(lambda: run.run(client, tables=("summary",), store_on_workers=on_workers))
        client_cpu = cpu_s() - client_before
        workers_after = client.run(cpu_s)
    workers_cpu = sum(workers_after[w] - workers_before[w] for w in workers_after)
    return elapsed, client_cpu / points * 1e3, workers_cpu / points * 1e3


def _commit_cpu_ms(tasks: list[Task], points: int, duration_s: float) -> float:
    """CPU per point of building and writing a point's partitions, in this process."""
    run = _sweep(points, duration_s)
    values = [run_point(*t.args) for t in tasks[:STORE_SAMPLE]]
    with tempfile.TemporaryDirectory() as tmp:
        before = cpu_s()
        for point, value in zip(run.points, values, strict=False):
            store.commit(Path(tmp), point.key, _point_tables(point, value, None, 1))
        return (cpu_s() - before) / len(values) * 1e3


def _timed(action: Callable[[], Any]) -> float:
    start = time.perf_counter()
    action()
    return time.perf_counter() - start


def cpu_s() -> float:
    """CPU time (user + system) of the calling process so far."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def _run_share(tasks: list[Task], start_at: float) -> float:
    """Runs in a plain process: waits for the common start, then runs its share; wall time."""
    time.sleep(max(0.0, start_at - time.time()))
    return _timed(lambda: [run_point(*t.args) for t in tasks])


def _side_by_side(tasks: list[Task], processes: int) -> float:
    """Wall time of ``processes`` plain processes each running its share at the same time."""
    shares = [tasks[k::processes] for k in range(processes)]
    with ProcessPoolExecutor(processes, mp_context=get_context("spawn")) as pool:
        start_at = time.time() + START_DELAY_S
        return max(pool.map(_run_share, shares, [start_at] * processes))


def _on(client: Any, tasks: list[Task], batch: int) -> tuple[float, float, float]:
    """Wall time, and CPU time per point of the client process and of the workers."""
    list(execute(tasks[:1], client))  # warm-up: imports on the workers
    outcomes: list = []
    workers_before, client_before = client.run(cpu_s), cpu_s()
    elapsed = _timed(lambda: outcomes.extend(execute(tasks, client, batch=batch)))
    client_cpu = cpu_s() - client_before
    workers_after = client.run(cpu_s)
    failed = [o for o in outcomes if not o.ok]
    if failed:
        raise RuntimeError(f"{len(failed)} points failed: {failed[0].error}")
    workers_cpu = sum(workers_after[w] - workers_before[w] for w in workers_after)
    return elapsed, client_cpu / len(tasks) * 1e3, workers_cpu / len(tasks) * 1e3


def _started(workers: int) -> tuple[Any, float]:
    start = time.perf_counter()
    client = local_client(workers)
    return client, time.perf_counter() - start


def _loopback(tasks: list[Task]) -> float:
    """Points per second on `dask scheduler` + two `dask worker` processes on loopback."""
    with tempfile.TemporaryDirectory() as tmp:
        info = Path(tmp) / "scheduler.json"
        python = [sys.executable, "-m"]
        quiet = {"stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL}
        procs = [
            subprocess.Popen(
                [*python, "distributed.cli.dask_scheduler", "--host", "127.0.0.1",
                 "--port", "0", "--no-dashboard", "--scheduler-file", str(info)],
                **quiet,
            )
        ]  # fmt: skip
        try:
            while not info.exists():
                time.sleep(0.1)
            address = json.loads(info.read_text())["address"]
            for _ in range(2):
                procs.append(
                    subprocess.Popen(
                        [*python, "distributed.cli.dask_worker", address, "--host",
                         "127.0.0.1", "--nthreads", "1", "--no-dashboard"],
                        **quiet,
                    )
                )  # fmt: skip
            client = connect(address)
            client.wait_for_workers(2, timeout=120)
            elapsed = _on(client, tasks, SWEEP_BATCH)[0]
            client.close()
            return len(tasks) / elapsed
        finally:
            for proc in procs:
                proc.terminate()
                proc.wait(timeout=30)


def _report(label: str, timing: tuple[float, float, float], note: str) -> None:
    elapsed, client_ms, workers_ms = timing
    cpu = f"CPU per point: client process {client_ms:.1f} ms, workers {workers_ms:.1f} ms"
    print(f"{label}: {elapsed:6.2f} s  ({note}; {cpu})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--points", type=int, default=200)
    parser.add_argument("--duration", type=float, default=200.0, help="simulated s per point")
    args = parser.parse_args()
    tasks = _tasks(args.points, args.duration)
    cores = usable_cores()
    print(f"{args.points} points, showcase for {args.duration:g} s simulated each; {cores} cores")
    print(f"load average before: {os.getloadavg()[0]:.1f}")
    before = cpu_s()
    serial = _timed(lambda: [run_point(*t.args) for t in tasks])
    serial_cpu_ms = (cpu_s() - before) / len(tasks) * 1e3
    print(f"one process:            {serial:6.2f} s  ({serial / len(tasks) * 1e3:.0f} ms/point; "
          f"CPU {serial_cpu_ms:.1f} ms/point)")  # fmt: skip
    plain = _side_by_side(tasks, cores)
    print(f"{cores} plain processes:      {plain:6.2f} s  (ceiling {serial / plain:.2f}x)")
    client, startup = _started(1)
    one = _on(client, tasks, SWEEP_BATCH)
    overhead_ms = (one[0] - serial) / len(tasks) * 1e3
    print(f"local cluster start-up, 1 worker: {startup:.2f} s")
    _report("local cluster, 1 worker", one, f"overhead {overhead_ms:+.1f} ms/point")
    client, startup = _started(cores)
    print(f"local cluster start-up, {cores} workers: {startup:.2f} s")
    every = _on(client, tasks, SWEEP_BATCH)
    _report(f"local cluster, {cores} workers", every, f"speed-up {serial / every[0]:.2f}x")
    single = _on(client, tasks, 1)
    _report("the same, one point per task", single, f"speed-up {serial / single[0]:.2f}x")
    for on_workers, writer in ((False, "the client"), (True, "the workers")):
        stored = _with_store(client, args.points, args.duration, on_workers)
        speed_up = f"speed-up {serial / stored[0]:.2f}x"
        _report(f"fg.sweep with a results store written by {writer}", stored, speed_up)
    commit_ms = _commit_cpu_ms(tasks, args.points, args.duration)
    print(f"building and writing one point's partitions: CPU {commit_ms:.1f} ms/point")
    close_local()
    rate = _loopback(tasks)
    print(f"loopback scheduler + 2 workers: {rate:.1f} points/s")
    print(f"load average after: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()

"""Sweep benchmark (``make bench-sweep``): the executor's cost per point and its speed-up.

The same points (the showcase scenario with a buffer axis, about 0.2 s each) run
1. one after another in this process (the baseline),
2. on a local cluster with one worker: (time - baseline) / points is the overhead per point,
3. on a local cluster with one worker per core: baseline / time is the speed-up,
4. on a scheduler and two worker processes started on 127.0.0.1: points per second.
Cluster start-up is not timed (each cluster first runs one warm-up point). Wall-clock times on
a shared machine are noisy: the load average is printed beside them.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from fairgate.sweeps import prepare, run_point, scenario_text
from fairgate.sweeps.execute import Task, close_local, connect, execute, local_client

SCENARIO = Path(__file__).resolve().parents[3] / "scenarios" / "showcase.toml"


def _tasks(points: int, duration_s: float) -> list[Task]:
    text = scenario_text(SCENARIO)
    limits = [10 + k for k in range(points)]
    base = [f"simulation.duration={duration_s}s"]
    run = prepare(text, grid={"bottleneck.queue.limit": limits}, overrides=base)
    return [Task(p.key, run_point, (text, [*base, *p.all_overrides()])) for p in run.points]


def _timed(action: Callable[[], Any]) -> float:
    start = time.perf_counter()
    action()
    return time.perf_counter() - start


def _on(client: Any, tasks: list[Task]) -> float:
    list(execute(tasks[:1], client))  # warm-up: imports on the workers
    outcomes: list = []
    elapsed = _timed(lambda: outcomes.extend(execute(tasks, client)))
    failed = [o for o in outcomes if not o.ok]
    if failed:
        raise RuntimeError(f"{len(failed)} points failed: {failed[0].error}")
    return elapsed


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
            elapsed = _on(client, tasks)
            client.close()
            return len(tasks) / elapsed
        finally:
            for proc in procs:
                proc.terminate()
                proc.wait(timeout=30)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--points", type=int, default=200)
    parser.add_argument("--duration", type=float, default=200.0, help="simulated s per point")
    args = parser.parse_args()
    tasks = _tasks(args.points, args.duration)
    cores = os.cpu_count() or 1
    print(f"{args.points} points, showcase for {args.duration:g} s simulated each; {cores} cores")
    print(f"load average before: {os.getloadavg()[0]:.1f}")
    serial = _timed(lambda: [run_point(*t.args) for t in tasks])
    print(f"one process:           {serial:7.2f} s  ({serial / len(tasks) * 1e3:.0f} ms/point)")
    one = _on(local_client(1), tasks)
    overhead_ms = (one - serial) / len(tasks) * 1e3
    print(f"local cluster, 1 worker: {one:5.2f} s  (overhead {overhead_ms:+.1f} ms/point)")
    every = _on(local_client(cores), tasks)
    print(f"local cluster, {cores} workers: {every:5.2f} s  (speed-up {serial / every:.2f}x)")
    close_local()
    rate = _loopback(tasks)
    print(f"loopback scheduler + 2 workers: {rate:.1f} points/s")
    print(f"load average after: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()

"""Sweep points travel in batches: shrinking towards the end of a run, results unchanged,
and a batch whose worker dies runs again point by point."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import cloudpickle

import fairgate as fg
from fairgate.sweeps.execute import Task, batches, execute, local_client

sys.path.insert(0, str(Path(__file__).parent))
from test_sweep import LIMIT, poisson_queue  # noqa: E402
from test_sweep_cluster import always_die, die_unless_marked  # noqa: E402

cloudpickle.register_pickle_by_value(sys.modules[__name__])  # workers need not import tests


def echo(value: int) -> int:
    return value


def _echoes(count: int) -> list[Task]:
    return [Task(f"t{k}", echo, (k,)) for k in range(count)]


def test_batches_shrink_to_single_tasks_at_the_end_and_keep_the_order():
    tasks = _echoes(200)
    grouped = batches(tasks, slots=2, most=8)
    sizes = [len(group) for group in grouped]
    assert [t for group in grouped for t in group] == tasks
    assert sizes[0] == 8 and max(sizes) == 8
    assert sizes == sorted(sizes, reverse=True)
    assert sizes[-15:] == [1] * 15  # fewer than 4 tasks per slot left: one by one
    assert [len(g) for g in batches(_echoes(7), slots=2, most=8)] == [1] * 7
    assert [len(g) for g in batches(_echoes(30), slots=1, most=1)] == [1] * 30


def test_batched_and_single_point_sweeps_give_the_same_rows(monkeypatch):
    client = local_client(2)
    grid = {LIMIT: [2, 3, 4, 5, 6, 8, 10, 50]}
    batched = fg.sweep(poisson_queue(), grid=grid, seeds=3, client=client)
    monkeypatch.setattr("fairgate.sweeps.SWEEP_BATCH", 1)
    single = fg.sweep(poisson_queue(), grid=grid, seeds=3, client=client)
    assert len(batched) == 24 and (batched["status"] == "ok").all()
    assert batched.equals(single)


def test_a_lost_batch_runs_again_point_by_point(tmp_path: Path, fresh_cluster):
    client = fresh_cluster
    marker = str(tmp_path / "marker")
    tasks = _echoes(32)
    tasks[1] = Task("dies-once", die_unless_marked, (marker,))
    assert len(batches(tasks, 2, 8)[0]) == 4
    outcomes = {o.key: o for o in execute(tasks, client, batch=8)}
    assert all(o.ok for o in outcomes.values())
    assert [outcomes[t.key].value for t in tasks[2:]] == list(range(2, 32))
    retried = {k for k, o in outcomes.items() if o.attempts == 2}
    assert retried == {"t0", "dies-once", "t2", "t3"}  # the worker held only this batch
    client.wait_for_workers(2, timeout=60)
    tasks = _echoes(64)
    tasks[1] = Task("always-dies", always_die)
    assert len(batches(tasks, 2, 8)[0]) == 8
    outcomes = {o.key: o for o in execute(tasks, client, batch=8)}
    # The seven bystanders of the lost batch are retried as root tasks, each alone on a
    # worker: the retry of always-dies kills only its own worker.
    failed = [k for k, o in outcomes.items() if not o.ok]
    assert failed == ["always-dies"] and "worker lost" in outcomes["always-dies"].error
    assert {k for k, o in outcomes.items() if o.attempts == 2} == {t.key for t in tasks[:8]}
    assert all(outcomes[t.key].value == i for i, t in enumerate(tasks) if t.key != "always-dies")


def nap(seconds: float) -> float:
    time.sleep(seconds)
    return seconds


FRUITS = ("apple", "banana", "cherry", "damson", "elder", "fig", "grape")


def test_a_retry_runs_alone_on_its_worker(fresh_cluster):
    """Few tasks of unrelated names (which Dask's own heuristic would not queue: each forms a
    task group of one): every one is still queued as a root task, so the worker that the
    retry of always-dies kills holds no other task, and only always-dies fails."""
    client = fresh_cluster
    tasks = [Task("always-dies", always_die), *(Task(name, nap, (0.3,)) for name in FRUITS)]
    outcomes = {o.key: o for o in execute(tasks, client)}
    assert [k for k, o in outcomes.items() if not o.ok] == ["always-dies"]
    assert outcomes["always-dies"].attempts == 2
    assert all(outcomes[name].value == 0.3 for name in FRUITS)

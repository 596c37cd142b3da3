"""Sweep points travel in batches: shrinking towards the end of a run, results unchanged,
and a batch whose worker dies runs again point by point."""

from __future__ import annotations

import sys
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


def test_a_lost_batch_runs_again_point_by_point(tmp_path: Path):
    client = local_client(2)
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
    tasks[1] = Task("always-dies", always_die)
    outcomes = {o.key: o for o in execute(tasks, client, batch=8)}
    failed = [k for k, o in outcomes.items() if not o.ok]
    assert "always-dies" in failed
    assert all("worker lost" in outcomes[k].error for k in failed)
    # Known limit: a retried point Dask had already placed on the worker that always-dies
    # kills can be lost with it a second time (seen once in CI-like runs); at most one.
    assert len(failed) <= 2, failed
    assert all(outcomes[t.key].value == i for i, t in enumerate(tasks) if t.key not in failed)

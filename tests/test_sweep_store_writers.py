"""Who writes the results store: the workers when they share the client's file system (asked
once per run), else the client; the same bytes either way; leftovers of a killed writer."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import cloudpickle
import pytest

import fairgate as fg
from fairgate.sweeps import placement, prepare, store
from fairgate.sweeps.execute import Task, execute, local_client

sys.path.insert(0, str(Path(__file__).parent))
from test_sweep import LIMIT, poisson_queue  # noqa: E402

cloudpickle.register_pickle_by_value(sys.modules[__name__])  # workers need not import tests

GRID = {LIMIT: [2, 5, 50]}


@pytest.fixture
def client():
    return local_client(2)  # the process's cluster (a test with fresh_cluster closes it)


def _files(root: Path) -> dict[str, bytes]:
    return {
        str(path.relative_to(root)): path.read_bytes()
        for path in sorted(root.glob("*/point=*/part-0.parquet"))
    }


def test_workers_and_client_write_byte_identical_partitions(tmp_path: Path, client, monkeypatch):
    by_client = fg.sweep(
        poisson_queue(), GRID, seeds=2, client=client, out=tmp_path / "c", store_on_workers=False
    )
    commits: list[str] = []
    real_commit = store.commit
    monkeypatch.setattr(store, "commit", lambda root, key, t: commits.append(key))
    by_workers = fg.sweep(
        poisson_queue(), GRID, seeds=2, client=client, out=tmp_path / "w", store_on_workers=True
    )
    monkeypatch.setattr(store, "commit", real_commit)
    assert commits == []  # every partition came from a worker process
    assert by_workers.equals(by_client) and (by_workers["status"] == "ok").all()
    written = _files(tmp_path / "w")
    assert len(written) == 3 * 6
    assert written == _files(tmp_path / "c")
    assert not list((tmp_path / "w").glob(".staging/*"))
    auto = prepare(poisson_queue(), GRID, seeds=2, out=tmp_path / "w")
    auto.run(client)
    assert auto.skipped == 6  # resumable as ever


def test_the_workers_write_only_when_each_can_write_the_clients_directory(tmp_path: Path, client):
    assert placement.workers_share(client, tmp_path)
    probe = tmp_path / "probe"
    probe.write_text("token", encoding="utf-8")
    assert placement.sees_and_writes(str(probe), "token")
    assert not placement.sees_and_writes(str(probe), "another machine's file")
    assert not placement.sees_and_writes(str(tmp_path / "absent"), "token")

    class Elsewhere:  # a cluster whose second worker sees another file system
        def run(self, function, *args, on_error):
            return {"w0": function(*args), "w1": False}

    assert not placement.store_on_workers(Elsewhere(), tmp_path, None)
    assert not placement.store_on_workers(Elsewhere(), tmp_path, False)
    with pytest.raises(fg.ScenarioError, match="store_on_workers: got True, but not every"):
        placement.store_on_workers(Elsewhere(), tmp_path, True)
    with pytest.raises(fg.ScenarioError, match="store_on_workers: got 'yes'"):
        fg.sweep(poisson_queue(), GRID, client=client, out=tmp_path / "s", store_on_workers="yes")
    assert not list(tmp_path.glob(".staging/*"))


def attempt_or_die(marker: str, attempt: int) -> int:
    """Kills its worker the first time, returns the attempt number it was given after."""
    if not os.path.exists(marker):
        Path(marker).touch()
        os._exit(1)
    return attempt


def test_a_task_may_be_told_its_attempt(tmp_path: Path, fresh_cluster):
    (first,) = execute([Task("t", attempt_or_die, (str(tmp_path / "m"),), True)], fresh_cluster)
    assert first.ok and first.value == 2 and first.attempts == 2


def test_leftovers_of_a_killed_writer_are_removed_and_its_point_runs_again(tmp_path: Path, client):
    out = tmp_path / "s"
    fg.sweep(poisson_queue(), GRID, client=client, out=out)
    keys = sorted(p.name.removeprefix("point=") for p in out.glob("summary/point=*"))
    # A writer killed between renames: flows in place, no summary; another one killed while
    # it wrote its staging folder; and a point whose ports partition vanished.
    store.partition(out, "summary", keys[0]).joinpath("part-0.parquet").unlink()
    store.partition(out, "summary", keys[0]).rmdir()
    (out / ".staging" / f"{keys[1]}.x" / "flows").mkdir(parents=True)
    for path in store.partition(out, "ports", keys[2]).iterdir():
        path.unlink()
    store.partition(out, "ports", keys[2]).rmdir()
    rerun = prepare(poisson_queue(), GRID, out=out)
    frame = rerun.run(client)["summary"]
    assert rerun.skipped == 1 and (frame["status"] == "ok").all()
    assert not list(out.glob(".staging/*"))
    for table in store.TABLES:
        assert sorted(p.name for p in out.glob(f"{table}/point=*")) == [f"point={k}" for k in keys]

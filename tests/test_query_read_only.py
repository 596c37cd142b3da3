"""`fairgate query` reads the store and changes nothing.

Before: ``SET threads = 1000000`` hung the command; ``COPY ... TO``, ``EXPORT DATABASE`` and
``ATTACH`` wrote files anywhere, the store's tables included (past the check on ``--csv`` and
``--parquet``); ``INSTALL`` and a remote file tried the network; a second statement ran and
only its rows were shown.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest

import fairgate as fg
from conftest import SCENARIOS
from fairgate.sweeps import query
from test_cli import fairgate
from test_hardening import LEAKY, NO_FLOWS, write

SCENARIO = LEAKY.replace('kind = "test_leak", every = 3', 'kind = "fifo"')
EXPECTED = "expected one query (SELECT, WITH, FROM, VALUES, DESCRIBE, SHOW, SUMMARIZE, PIVOT"


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return fg.run_text(SCENARIO).save(tmp_path_factory.mktemp("q") / "run")


def _entries(root: Path) -> list[str]:
    return sorted(str(path.relative_to(root)) for path in root.rglob("*"))


@pytest.mark.parametrize(
    ("sql", "message"),
    [
        ("COPY (SELECT 1) TO 'STORE/flows.parquet'", f"got a COPY statement, {EXPECTED}"),
        ("COPY (SELECT 1) TO 'elsewhere.csv'", "got a COPY statement"),
        ("EXPLAIN ANALYZE COPY (SELECT 1) TO 'STORE/x.csv'", "got a COPY statement"),
        ("COPY (PIVOT (SELECT 1 a, 2 b) ON a USING sum(b)) TO 'STORE/p.csv'", "got a COPY"),
        ("EXPORT DATABASE 'STORE/exported'", "got an EXPORT statement"),
        ("ATTACH 'STORE/x.db'", "got an ATTACH statement"),
        ("SET threads = 1000000", "got a SET statement"),
        ("PRAGMA threads = 4", "got a PRAGMA statement"),
        ("INSTALL httpfs", "got an INSTALL statement"),
        ("CALL dbgen(sf = 1)", "got a CALL statement"),
        ("CREATE TABLE t AS SELECT 1", "got a CREATE statement"),
        ("DROP VIEW flows", "got a DROP statement"),
        ("SELECT * FROM flows; SELECT 2", f"got 2 statements, {EXPECTED}"),
        ("SELECT * FROM read_csv('/etc/hostname')", "a query reads only the store's files"),
        ("SELECT * FROM 'https://example.com/x.parquet'", "a query reads only the store's"),
        ("SELEC 1", "syntax error"),
    ],
)
def test_a_statement_that_would_change_something_is_refused(
    store: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, sql: str, message: str
):
    monkeypatch.chdir(tmp_path)
    before = _entries(store)
    done = fairgate("query", store, sql.replace("STORE", str(store)))
    assert done.returncode == 2, done.stderr
    assert done.stderr.startswith("error: query: ") and message in done.stderr, done.stderr
    assert "Traceback" not in done.stderr
    assert _entries(store) == before
    assert list(tmp_path.iterdir()) == []
    with pytest.raises(fg.ScenarioError, match="^query: "):
        query(store, sql.replace("STORE", str(store)))


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT count(*) AS n FROM flows",
        "WITH f AS (SELECT * FROM flows) SELECT count(*) AS n FROM f",
        "FROM flows SELECT count(*) AS n",
        "DESCRIBE flows",
        "SHOW TABLES",
        "SUMMARIZE flows",
        "EXPLAIN SELECT * FROM flows",
        "PIVOT flows ON role USING count(*)",
        "UNPIVOT (SELECT 1 AS a, 2 AS b) ON a, b",
        "SELECT 'copy' AS \"export\"",
        "SELECT * FROM read_parquet('STORE/flows.parquet')",
    ],
)
def test_queries_that_only_read_still_run(store: Path, sql: str):
    rows = query(store, sql.replace("STORE", str(store)))
    assert len(rows) > 0


def test_a_store_reached_through_a_link_or_a_relative_path_is_read(
    store: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    (tmp_path / "link").symlink_to(store)
    monkeypatch.chdir(store.parent)
    for root in (tmp_path / "link", Path(store.name), Path(".") / store.name / ".." / store.name):
        assert query(root, "SELECT count(*) AS n FROM queue_series")["n"][0] > 0


def test_a_cell_networks_tables_are_views_of_their_own(tmp_path: Path):
    """A cell network's run writes `vcs`, `occupancy` and `refused` only; the query found "no
    results here (expected summary/, flows/ or *.parquet)" in a folder of Parquet files."""
    out = tmp_path / "atm"
    short = ["--set", "simulation.duration=1s", "--set", "simulation.warmup=0.2s"]
    done = fairgate("run", SCENARIOS / "dfba_e3.toml", "--out", out, "--quiet", *short)
    assert done.returncode == 0, done.stderr
    for table in ("vcs", "occupancy", "refused"):
        assert len(query(out, f"SELECT * FROM {table}")) == len(
            pd.read_parquet(out / f"{table}.parquet")
        )
    assert list(query(out, "SELECT name FROM vcs")["name"])[:3] == ["vc1", "vc2", "vc3"]
    shutil.copy(out / "vcs.parquet", out / "order.parquet")  # a name SQL reserves
    assert len(query(out, 'SELECT * FROM "order"')) == len(query(out, "SELECT * FROM vcs"))


@pytest.mark.parametrize("name", ["runs[1]", "s*", "what?", "it's [a]*"])
def test_a_store_whose_path_holds_glob_characters_is_read_as_written(tmp_path: Path, name: str):
    """DuckDB reads every path as a glob: `runs[1]/summary/*/*.parquet` matched no file, and
    the error blamed a damaged point."""
    out = tmp_path / name / "o"
    done = fairgate("run", write(tmp_path, SCENARIO), "--out", out, "--quiet")
    assert done.returncode == 0, done.stderr
    assert query(out, "SELECT count(*) AS n FROM summary")["n"][0] == 1
    assert query(out, "SELECT count(*) AS n FROM queue_series")["n"][0] > 0
    blocked = fairgate("query", out, "SELECT * FROM read_csv('/etc/hostname')")
    assert "a query reads only the store's files" in blocked.stderr


@pytest.mark.parametrize(
    ("stop", "status", "line"),
    [
        (signal.SIGINT, 130, "interrupted"),
        (signal.SIGINT, 130, "interrupted"),
        (signal.SIGINT, 130, "interrupted"),
        (signal.SIGTERM, 143, "stopped by SIGTERM"),
    ],
)
def test_a_long_query_stops_at_a_signal_with_the_usual_line(
    store: Path, stop: signal.Signals, status: int, line: str
):
    """DuckDB turned Ctrl-C into a `RuntimeError: Query interrupted` traceback, and missed
    about one Ctrl-C in eight, running on for minutes (three Ctrl-C here)."""
    cmd = [sys.executable, "-m", "fairgate.cli", "query", str(store)]
    query_of_minutes = "SELECT sum(range) AS s FROM range(1000000000000)"
    running = subprocess.Popen(
        [*cmd, query_of_minutes],
        stderr=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    time.sleep(2.0)
    running.send_signal(stop)
    try:
        _, err = running.communicate(timeout=20)
    finally:
        running.kill()
    assert running.returncode == status, err
    assert err.strip() == (
        f"{line}: `fairgate query` stopped before it finished; its results were not written"
    )


def test_an_unknown_table_is_told_the_tables_there(tmp_path: Path):
    """DuckDB's guess for `SELECT * FROM nosuch` was `Did you mean "pg_sequences"?`, one of
    its own catalog tables; a file given as the folder was "no results here"."""
    store = fg.run_text(NO_FLOWS).save(tmp_path / "run")
    with pytest.raises(fg.ScenarioError) as caught:
        query(store, "SELECT * FROM nosuch")
    message = str(caught.value)
    assert "pg_" not in message and "; the tables here: class_series, drops," in message
    with pytest.raises(fg.ScenarioError, match=r'Did you mean "flows"\?; the tables here: '):
        query(store, "SELECT * FROM flow")
    with pytest.raises(fg.ScenarioError, match=r"flows\.parquet: a file; expected a folder"):
        query(store / "flows.parquet", "SELECT 1")


def test_a_folder_with_only_a_lock_says_whose_it_is(tmp_path: Path):
    """A run killed before it wrote (or still running) leaves only its lock: the query said
    "no results here", which sent the user looking for another folder."""

    folder = tmp_path / "o"
    folder.mkdir()
    lock = folder / ".lock"
    lock.write_text("4242\n", encoding="utf-8")
    with pytest.raises(fg.ScenarioError, match="stopped before it wrote them .only its lock"):
        query(folder, "SELECT 1")
    fd = os.open(lock, os.O_RDWR)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        with pytest.raises(fg.ScenarioError, match="no results yet: process 4242, a fairgate"):
            query(folder, "SELECT 1")
    finally:
        os.close(fd)
    assert sorted(p.name for p in folder.iterdir()) == [".lock"]
    assert lock.read_text(encoding="utf-8") == "4242\n"  # read, not taken over

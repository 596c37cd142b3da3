"""SQL over a results store with DuckDB: the views ``summary``, ``flows`` and ``ports``.

A store (``DIR/<table>/point=KEY/part-0.parquet``: a sweep's, or a single run's one point)
gives each view a ``point`` column; the per-flow and per-port views hold only complete points.
A single run's flat files (``DIR/queue_series.parquet``, ...) add a view each for the tables
the store does not hold.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import duckdb
import pandas as pd
import pyarrow as pa

from fairgate._core import ScenarioError
from fairgate.checks import clipped
from fairgate.sweeps import store

HIVE = "hive_partitioning = true, hive_types = {'point': VARCHAR}"
"""A point's key is text: DuckDB would read a key of 16 digits as a number."""


def _literal(path: Path) -> str:
    return "'" + str(path).replace("'", "''") + "'"


def _views(root: Path) -> dict[str, str]:
    """View name -> SELECT over the Parquet files that exist under ``root``."""
    views: dict[str, str] = {}
    if (root / "summary").is_dir() and any((root / "summary").glob("point=*/*.parquet")):
        views["summary"] = (
            f"SELECT * FROM read_parquet({_literal(root / 'summary' / '*' / '*.parquet')}, {HIVE})"
        )
        for table in ("flows", "ports"):
            if any((root / table).glob("point=*/*.parquet")):
                files = _literal(root / table / "*" / "*.parquet")
                views[table] = (
                    f"SELECT * FROM read_parquet({files}, {HIVE}) "
                    "WHERE point IN (SELECT point FROM summary)"
                )
    for table in (
        "flows",
        "ports",
        "queue_series",
        "flow_series",
        "qdisc_state",
        "traces",
        "transfers",
        "drops",
        "class_series",
        "phase_classes",
        "phase_ports",
    ):
        if table not in views and (root / f"{table}.parquet").is_file():
            views[table] = f"SELECT * FROM read_parquet({_literal(root / f'{table}.parquet')})"
    return views


def connect(root: str | Path) -> duckdb.DuckDBPyConnection:
    """An in-memory DuckDB connection with one view per table of the store at ``root``."""
    root = Path(root)
    try:
        views = _views(root)
    except OSError as err:
        raise ScenarioError(
            f"{clipped(str(root))}: the system refuses this folder ({err.strerror}); "
            "expected a folder of fairgate results"
        ) from None
    if not views:
        raise ScenarioError(f"{root}: no results here (expected summary/, flows/ or *.parquet)")
    con = duckdb.connect()
    for name, select in views.items():
        try:
            con.execute(f"CREATE VIEW {name} AS {select}")
        except duckdb.Error as err:
            con.close()
            raise ScenarioError(
                f"{root}: the `{name}` table cannot be read: {_first_line(err)}; a damaged "
                "point's folder can be removed from summary/, flows/ and ports/ and the sweep rerun"
            ) from None
    if "summary" in views:
        _check_finished_points(con, root)
    return con


def _check_finished_points(con: duckdb.DuckDBPyConnection, root: Path) -> None:
    """Refuses a store where a point that finished lacks its flows or ports file
    (:func:`store.check_point_files`)."""
    try:
        finished = con.sql("SELECT DISTINCT point FROM summary WHERE status = 'ok'").fetchall()
        store.check_point_files(root, {str(key) for (key,) in finished})
    except duckdb.Error as err:
        con.close()
        raise ScenarioError(
            f"{root}: the `summary` table cannot be read: {_first_line(err)}"
        ) from None
    except ScenarioError:
        con.close()
        raise


def _first_line(err: BaseException) -> str:
    """DuckDB's message without the SQL it echoes after it (fairgate's own, not the user's)."""
    return str(err).splitlines()[0]


NO_ROWS = "got a statement that returns no rows, expected a query such as SELECT ..."


@contextmanager
def rows(
    root: str | Path, sql: str, batch_rows: int = 65_536
) -> Iterator[tuple[pa.Schema, Iterator[pa.RecordBatch]]]:
    """The schema and the rows of ``sql`` over the store at ``root``, streamed in Arrow batches
    of at most ``batch_rows``, so that a result larger than memory can still be written out.
    A bad query raises ScenarioError with DuckDB's message, here or while the batches are read.
    """
    con = connect(root)
    try:
        try:
            relation = con.sql(sql)
            if relation is None:
                raise ScenarioError(f"query: {NO_ROWS}")
            reader = relation.to_arrow_reader(batch_rows)
        except duckdb.Error as err:
            raise ScenarioError(f"query: {err}") from None
        yield reader.schema, _read(reader)
    finally:
        con.close()


def _read(reader: pa.RecordBatchReader) -> Iterator[pa.RecordBatch]:
    """The reader's batches; an error DuckDB meets while computing them (Arrow passes it on
    as an OSError) is a bad query."""
    batches = iter(reader)
    while True:
        try:
            batch = next(batches)
        except StopIteration:
            return
        except (duckdb.Error, pa.ArrowException, OSError) as err:
            raise ScenarioError(f"query: {err}") from None
        yield batch


def query(root: str | Path, sql: str) -> pd.DataFrame:
    """Runs ``sql`` over the store at ``root`` and returns its rows; a bad query raises
    ScenarioError with DuckDB's message."""
    with rows(root, sql) as (schema, batches):
        return pa.Table.from_batches(list(batches), schema).to_pandas()

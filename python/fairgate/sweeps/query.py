"""SQL over a results store with DuckDB: the views ``summary``, ``flows`` and ``ports``.

A sweep store (``DIR/<table>/point=KEY/part-0.parquet``) gives each view a ``point`` column;
the per-flow and per-port views hold only complete points. A single run's directory
(``DIR/flows.parquet``, ``DIR/ports.parquet``) is read as it is.
"""

from __future__ import annotations

from pathlib import Path

import duckdb
import pandas as pd

from fairgate._core import ScenarioError


def _literal(path: Path) -> str:
    return "'" + str(path).replace("'", "''") + "'"


def _views(root: Path) -> dict[str, str]:
    """View name -> SELECT over the Parquet files that exist under ``root``."""
    views: dict[str, str] = {}
    if (root / "summary").is_dir() and any((root / "summary").glob("point=*/*.parquet")):
        views["summary"] = (
            "SELECT * FROM read_parquet("
            f"{_literal(root / 'summary' / '*' / '*.parquet')}, hive_partitioning = true)"
        )
        for table in ("flows", "ports"):
            if any((root / table).glob("point=*/*.parquet")):
                files = _literal(root / table / "*" / "*.parquet")
                views[table] = (
                    f"SELECT * FROM read_parquet({files}, hive_partitioning = true) "
                    "WHERE point IN (SELECT point FROM summary)"
                )
        return views
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
        if (root / f"{table}.parquet").is_file():
            views[table] = f"SELECT * FROM read_parquet({_literal(root / f'{table}.parquet')})"
    return views


def connect(root: str | Path) -> duckdb.DuckDBPyConnection:
    """An in-memory DuckDB connection with one view per table of the store at ``root``."""
    root = Path(root)
    views = _views(root)
    if not views:
        raise ScenarioError(f"{root}: no results here (expected summary/, flows/ or *.parquet)")
    con = duckdb.connect()
    for name, select in views.items():
        con.execute(f"CREATE VIEW {name} AS {select}")
    return con


def query(root: str | Path, sql: str) -> pd.DataFrame:
    """Runs ``sql`` over the store at ``root``; a bad query raises ScenarioError with DuckDB's
    message."""
    con = connect(root)
    try:
        return con.execute(sql).df()
    except duckdb.Error as err:
        raise ScenarioError(f"query: {err}") from None
    finally:
        con.close()

"""The results store: one Parquet dataset per table, one hive partition per point.

Layout (``docs/results.md``)::

    DIR/sweep.json                          what was swept (scenario digest, axes, seeds)
    DIR/summary/point=KEY/part-0.parquet    one row: parameters, seed, status, metrics
    DIR/flows/point=KEY/part-0.parquet      the point's per-flow table with its parameters
    DIR/ports/point=KEY/part-0.parquet      the point's per-port table with its parameters

A plain ``fairgate run`` writes the same layout with one point (no axes, its seed) beside its
flat files.

A point's files are written in ``DIR/.staging`` and renamed into place, its summary last and
with Ctrl-C held back until all are in place: a point with a summary partition is complete.
The client or, when they share its file system, the workers write (:mod:`.placement`).
"""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from fairgate._core import ScenarioError
from fairgate.checks import path_value, shown, small_text
from fairgate.staging import ctrl_c_held, staging_folder

TABLES = ("flows", "ports", "summary")
"""In commit order: the summary, which marks a point complete, goes last."""

MANIFEST = "sweep.json"


def store_holding(path: Path) -> Path | None:
    """The results store among whose tables ``path`` lies, if any: inside a store's
    ``summary/``, ``flows/`` or ``ports/`` (or its staging folder), or a single run's
    ``summary.json`` or Parquet table beside the store's ``sweep.json``. Writing there would
    change what the store holds (a query's output once doubled a point's rows)."""
    path = Path(os.path.realpath(path))  # through a link into a store too
    for root in path.parents:
        if not (root / MANIFEST).is_file():
            continue
        first = path.relative_to(root).parts[0]
        beside = path.parent == root and (first == "summary.json" or path.suffix == ".parquet")
        if first in (*TABLES, ".staging") or beside:
            return root
    return None


COMPRESSION = "snappy"
"""A point's files are mostly schema (about 47 kB for the showcase's three tables, the same
to 2 % with zstd, snappy or none); zstd took 3.7 CPU-ms more per point than snappy."""

METRICS: dict[str, pa.DataType] = {
    "scenario": pa.string(),
    "seed": pa.int64(),
    "status": pa.string(),
    "error": pa.string(),
    "attempts": pa.int64(),
    "time_s": pa.float64(),
    "duration_s": pa.float64(),
    "events": pa.int64(),
    "packet_hops": pa.int64(),
    "offered_pkts": pa.int64(),
    "delivered_pkts": pa.int64(),
    "dropped_pkts": pa.int64(),
    "in_network_pkts": pa.int64(),
    "jain_goodput_data_flows": pa.float64(),
    "conserved": pa.bool_(),
    "violations": pa.string(),
}
"""The summary row's columns after the parameters, with fixed types so that failed points
(metrics null) and finished ones form one schema."""


def summary_metrics(summary: dict[str, Any]) -> dict[str, Any]:
    """The metrics of a run's ``summary.json`` as one flat row."""
    totals = summary["totals"]
    return {
        "time_s": summary["time_s"],
        "duration_s": summary["duration_s"],
        "events": summary["events"],
        "packet_hops": summary["packet_hops"],
        **{k: totals[k] for k in ("offered_pkts", "delivered_pkts", "dropped_pkts")},
        "in_network_pkts": totals["in_network_pkts"],
        "jain_goodput_data_flows": summary["fairness"]["jain_goodput_data_flows"],
        "conserved": summary["conservation"]["ok"],
        "violations": "; ".join(summary["conservation"]["violations"]),
    }


def summary_table(params: dict[str, Any], row: dict[str, Any]) -> pa.Table:
    """One summary row: parameter columns, then :data:`METRICS` (missing ones null)."""
    fields = [pa.field(name, pa.scalar(value).type) for name, value in params.items()]
    fields += [pa.field(name, kind) for name, kind in METRICS.items()]
    values = {**params, **{name: row.get(name) for name in METRICS}}
    return pa.Table.from_pylist([values], schema=pa.schema(fields))


def with_params(frame: pd.DataFrame, params: dict[str, Any], seed: int) -> pd.DataFrame:
    """A per-flow or per-port table with the point's parameters and seed as leading columns."""
    lead = pd.DataFrame({**params, "seed": seed}, index=frame.index)
    return pd.concat([lead, frame], axis=1)


LOCK = ".lock"
"""Held (``flock``) by the one process that writes the store, for the whole run."""


@contextmanager
def writing(root: Path, name: str = "--out") -> Iterator[None]:
    """Holds the store's lock while the block writes it: a second sweep or run into the same
    directory would tidy away the first one's half-written points (``tidy``) and compute the
    same points twice, and two reproductions or studies would leave a mix of their files, so
    it is refused, naming the process that holds the directory. The lock
    goes with the process, however it ends. A directory the block made and left holding only
    the lock (a run that failed before writing) is removed."""
    made = not root.exists()
    root.mkdir(parents=True, exist_ok=True)
    fd = os.open(root / LOCK, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        _lock(fd, root, name)
        yield
    except BaseException:
        if made and os.listdir(root) == [LOCK]:
            shutil.rmtree(root, ignore_errors=True)
        raise
    finally:
        os.close(fd)


def _lock(fd: int, root: Path, name: str) -> None:
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        holder = os.pread(fd, 32, 0).decode(errors="replace").strip() or "unknown"
        raise ScenarioError(
            f"{name}: {root} is in use by another fairgate command (process {holder}); "
            "expected a directory no other fairgate process writes: wait for it or choose "
            "another"
        ) from None
    os.ftruncate(fd, 0)
    os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)


def writer(root: Path) -> str | None:
    """The process that holds ``root``'s lock now (as its lock file names it), or None: a
    reader's shared lock, taken and given back at once, writes nothing."""
    try:
        fd = os.open(root / LOCK, os.O_RDONLY)
    except OSError:
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return os.pread(fd, 32, 0).decode(errors="replace").strip() or "unknown"
    finally:
        os.close(fd)  # closing gives the shared lock back
    return None


def partition(root: Path, table: str, key: str) -> Path:
    return root / table / f"point={key}"


def commit(root: Path, key: str, tables: dict[str, pa.Table | pd.DataFrame]) -> None:
    """Writes one point's tables atomically; a failed point has only ``summary``."""
    staging_root = root / ".staging"
    staging_root.mkdir(parents=True, exist_ok=True)
    with ctrl_c_held():  # a Ctrl-C between creating and entering `try` would leave it behind
        staging = Path(tempfile.mkdtemp(prefix=f"{key}.", dir=staging_root))
    try:
        for name, table in tables.items():
            target = staging / name
            target.mkdir()
            if isinstance(table, pd.DataFrame):
                table = pa.Table.from_pandas(table, preserve_index=False)
            pq.write_table(table, target / "part-0.parquet", compression=COMPRESSION)
        with ctrl_c_held():
            for name in TABLES:
                final = partition(root, name, key)
                shutil.rmtree(final, ignore_errors=True)
                if name in tables:
                    final.parent.mkdir(parents=True, exist_ok=True)
                    os.replace(staging / name, final)
    finally:
        with ctrl_c_held():  # an interrupted removal would leave a half-deleted staging folder
            shutil.rmtree(staging, ignore_errors=True)


def finished_keys(root: Path) -> set[str]:
    """Points whose summary says they ran to the end and whose tables are all in place
    (failed ones are run again)."""
    frame = read(root, "summary", columns=["status"])
    ok = set(frame.loc[frame["status"] == "ok", "point"].astype(str))
    finished = {key for key in ok if all(partition(root, t, key).is_dir() for t in TABLES)}
    check_point_files(root, finished)
    return finished


def check_point_files(root: Path, keys: set[str]) -> None:
    """Refuses a finished point whose flows or ports file is missing, or cut or damaged at its
    end (its rows would vanish from those tables, or a resumed sweep would find it only after
    running the rest); the whole file is read, and checked, with its table."""
    for key in sorted(keys):
        for table in TABLES[:-1]:
            path = partition(root, table, key) / "part-0.parquet"
            if not path.is_file():
                raise ScenarioError(damaged(path, FileNotFoundError("missing")))
            try:
                pq.read_metadata(path)
            except (pa.ArrowException, OSError) as err:
                raise ScenarioError(damaged(path, err)) from None


def tidy(root: Path) -> None:
    """Removes what a writer stopped mid-point leaves (a worker process killed while it
    wrote): staging folders, and the flows and ports partitions of points without a
    summary. Only while no writer is at work (before a run, or after its workers stopped)."""
    with ctrl_c_held():
        for leftover in (root / ".staging").glob("*"):
            shutil.rmtree(leftover, ignore_errors=True)
        summaries = {p.name for p in (root / "summary").glob("point=*")}
        for table in TABLES[:-1]:
            for orphan in (root / table).glob("point=*"):
                if orphan.name not in summaries:
                    shutil.rmtree(orphan, ignore_errors=True)


def read(
    root: Path, table: str, columns: list[str] | None = None, skip: set[str] | None = None
) -> pd.DataFrame:
    """One table of the store as a DataFrame with a ``point`` column (empty if none yet),
    without the points in ``skip``. A table the store does not keep, or a ``root`` that is no
    directory, raises ScenarioError rather than reading as an empty table."""
    root = Path(path_value(root, "root"))
    if table not in TABLES:
        raise ScenarioError(f"table: got {shown(table)}, expected one of {', '.join(TABLES)}")
    if not root.is_dir():
        raise ScenarioError(
            f"{root}: {'not a directory' if root.exists() else 'no such directory'}; expected "
            "a store (written by fairgate sweep --out, fairgate run --out or fairgate.sweep(out=))"
        )
    base = root / table
    files = sorted(base.glob("point=*/part-0.parquet"))
    if skip:
        files = [path for path in files if path.parent.name.removeprefix("point=") not in skip]
    if not files:
        return pd.DataFrame(columns=["point", *(columns or [])])
    frames = []
    for path in files:
        frame = _read_part(path, columns)
        frame.insert(0, "point", path.parent.name.removeprefix("point="))
        frames.append(frame)
    return pd.concat(frames, ignore_index=True)


def _read_part(path: Path, columns: list[str] | None) -> pd.DataFrame:
    """One point's file of one table; a damaged file is named with the way to repair it."""
    try:
        return pq.read_table(path, columns=columns).to_pandas()
    except (pa.ArrowException, OSError) as err:
        raise ScenarioError(damaged(path, err)) from None


def damaged(path: Path, err: BaseException) -> str:
    """The error for the store file ``path`` that cannot be read: what is wrong, and that
    removing its point's folder from every table lets a rerun of the sweep run it again."""
    point = path.parent.name
    reason = str(err).splitlines()[0] if str(err) else type(err).__name__
    return (
        f"{path}: cannot be read ({reason}); expected a Parquet file written by fairgate. "
        f"Remove {point} from {', '.join(f'{t}/' for t in TABLES)} and rerun the sweep to run "
        "that point again"
    )


def read_manifest(root: Path, name: str = "--out") -> dict[str, Any] | None:
    """The store's ``sweep.json``, or None when it has none; a damaged one is named, after
    ``name``, the option or argument that gave ``root`` (not the scenario file)."""
    path = Path(root) / MANIFEST
    if not path.exists():
        return None
    try:
        held = json.loads(small_text(path))
    except (OSError, ValueError) as err:
        raise ScenarioError(
            f"{name}: {path}: cannot be read ({err}); expected the JSON fairgate writes for a "
            "sweep (remove the directory, or choose another)"
        ) from None
    if not isinstance(held, dict):
        raise ScenarioError(
            f"{name}: {path}: got {type(held).__name__}, expected the JSON object fairgate "
            "writes for a sweep (remove the directory, or choose another)"
        )
    return held


def check_single_run_target(root: Path, name: str = "--out") -> None:
    """Refuses ``root`` (given as ``name``) for a single run when it holds a sweep (axes or
    several seeds)."""
    held = read_manifest(root, name)
    if held is None:
        return
    if not _single_run(held):
        raise ScenarioError(
            f"{name}: {root} holds a sweep of {held.get('points')} points; expected a directory "
            "without one (a single run would mix into it)"
        )


def replace_single_run(root: Path, name: str = "--out") -> None:
    """Clears the one-point store of an earlier single run in ``root`` (a plain ``fairgate
    run`` overwrites its output directory); refuses to touch a sweep of several points."""
    check_single_run_target(root, name)
    with ctrl_c_held():
        _remove_store(root)


def _remove_store(root: Path) -> None:
    if not (root / MANIFEST).exists():
        return
    for table in TABLES[::-1]:  # the summary first: a half-cleared store has no points
        shutil.rmtree(root / table, ignore_errors=True)
    (root / MANIFEST).unlink()
    with suppress(OSError):  # the points' staging folder, when empty
        (root / ".staging").rmdir()


def write_single_run(
    out: Path, name: str, tables: dict[str, pd.DataFrame], summary: dict[str, Any]
) -> list[Path]:
    """Writes one run's ``tables`` (a Parquet file each) and ``summary.json`` into ``out``,
    for a caller that has checked it and holds its lock: staged in a hidden folder and moved
    in, the summary last, only when all are complete, replacing an earlier single run of
    either kind (:func:`clear_earlier_run`); a directory holding a sweep raises ScenarioError
    naming ``name``. Returns the paths written."""
    if not isinstance(out, Path):  # a str here skipped the checks and the lock save() takes
        raise ScenarioError(
            f"out: got {shown(out)}, expected a pathlib.Path the caller has checked and locked "
            "(save(DIR) does both: call it instead)"
        )
    if out.is_dir():
        check_single_run_target(out, name)
    files = [f"{table}.parquet" for table in tables] + ["summary.json"]
    with staging_folder(out) as staging:
        for table, frame in tables.items():
            frame.to_parquet(staging / f"{table}.parquet", index=False, compression="zstd")
        text = json.dumps(summary, indent=2, sort_keys=True) + "\n"
        (staging / "summary.json").write_text(text, encoding="utf-8")
        with ctrl_c_held():
            clear_earlier_run(out)
            for file in files:
                os.replace(staging / file, out / file)
    return [out / file for file in files]


def clear_earlier_run(root: Path) -> None:
    """Removes what an earlier single run wrote in ``root``, of either kind: a packet
    network's tables and one-point store, a cell network's tables, the summary and the
    figures of ``--plot``. A run replaces the one before it whole: a cell network's run over
    a packet run left that run's tables, which ``fairgate query`` then answered with, and a
    run without ``--plot`` left the figures of the run before. Other entries stay. The
    caller has checked ``root`` (:func:`check_single_run_target`) and holds Ctrl-C."""
    from fairgate.atm import TABLES as CELL_TABLES
    from fairgate.results import TABLES as PACKET_TABLES

    _remove_store(root)
    files = [f"{table}.parquet" for table in (*PACKET_TABLES, *CELL_TABLES)]
    for file in [*files, "summary.json", "plot.png", "queue.png"]:
        (root / file).unlink(missing_ok=True)
    for figure in root.glob("gateway-*.png"):
        figure.unlink(missing_ok=True)


def _single_run(manifest: dict[str, Any]) -> bool:
    """Whether a store's manifest is a single run's: no axes, one seed."""
    return not manifest.get("axes") and len(manifest.get("seeds", [])) == 1


def check_not_a_saved_run(root: Path, name: str = "--out") -> None:
    """Refuses, for a sweep, a folder holding a single run without a store (``Results.save``,
    a cell network's run): the sweep's store would be written beside the run's flat tables,
    which ``fairgate query`` would show beside its points."""
    if (root / "summary.json").is_file() and not (root / MANIFEST).exists():
        raise ScenarioError(
            f"{name}: {root} holds a single run's results (its summary.json, written by "
            "Results.save or a cell network's run); expected a new directory for a sweep (the "
            "run's tables would be read beside the sweep's points)"
        )


def check_manifest(root: Path, manifest: dict[str, Any], name: str = "--out") -> None:
    """A store holds one sweep: the same scenario, axis names and fairgate version on every
    rerun; another is refused naming ``name``, the option or argument that gave ``root``."""
    path = root / MANIFEST
    held = read_manifest(root, name)
    if held is not None:
        what = "a single run (`fairgate run`)" if _single_run(held) else "another sweep"
        for field in ("scenario_sha256", "axes", "fairgate_version"):
            if held.get(field) != manifest[field]:
                raise ScenarioError(
                    f"{name}: {root} holds {what} "
                    f"(its `{field}` differs: {shown(held.get(field))}); "
                    "choose another output directory (points of two versions or scenarios "
                    "would be read as one sweep)"
                )
    root.mkdir(parents=True, exist_ok=True)
    text = json.dumps(manifest, indent=2, sort_keys=True) + "\n"
    staging = root / f".{MANIFEST}.tmp"
    staging.write_text(text, encoding="utf-8")
    os.replace(staging, path)

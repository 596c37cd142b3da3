"""The ``fairgate sweep`` and ``fairgate query`` commands, and ``fairgate run --seeds N``."""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa
import pyarrow.csv as pa_csv
import pyarrow.parquet as pq

from fairgate._core import ScenarioError
from fairgate.checks import clipped, shown
from fairgate.display import printed_table
from fairgate.runner import (
    check_out_file,
    output_argument,
    path_argument,
    read_text_file,
    toml_document,
    validate_file,
)
from fairgate.staging import exit_status, stopped_by
from fairgate.sweeps import SweepRun, prepare, repetitions, sweepfile
from fairgate.sweeps.axes import MAX_POINTS, Axis, parse_cli_axis
from fairgate.sweeps.query import rows

SHOWN_METRICS = {
    "delivered_pkts": "delivered",
    "dropped_pkts": "dropped",
    "jain_goodput_data_flows": "Jain",
}
FLOW_METRICS = {
    "goodput_bps": ("goodput Mb/s", 1e-6),
    "loss_rate": ("loss %", 100.0),
    "mean_delay_s": ("delay ms", 1e3),
}


def add_executor_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--scheduler",
        metavar="tcp://HOST:PORT",
        help="run on this Dask cluster (default: $FAIRGATE_SCHEDULER, else a local cluster)",
    )
    parser.add_argument(
        "--workers",
        type=int,
        metavar="N",
        help="local cluster size (default: one per core this process may use)",
    )


def add_parsers(sub: Any) -> None:
    s = sub.add_parser(
        "sweep",
        help="run a scenario over parameter axes and seeds on Dask",
        description="Run every point (axis values x seed) of a sweep as its own simulation "
        "and write the results store DIR/{summary,flows,ports}/point=KEY/. A rerun skips "
        "finished points and runs failed ones again.",
    )
    s.add_argument(
        "file", type=path_argument, help="sweep file (TOML with `scenario = ...`) or scenario"
    )
    s.add_argument("--grid", action="append", default=[], metavar="PATH=V1,V2", help="product axis")
    s.add_argument(
        "--zip", action="append", default=[], metavar="PATH=V1,V2", help="axes varied together"
    )
    s.add_argument("--seeds", type=int, metavar="N", help="seeds: the scenario's and the N-1 after")
    s.add_argument("--set", dest="overrides", action="append", default=[], metavar="KEY=VALUE")
    s.add_argument(
        "--out", type=path_argument, help="results store (default: out/sweep/<file name>)"
    )
    s.add_argument("--quiet", action="store_true", help="print nothing but errors")
    add_executor_options(s)

    q = sub.add_parser(
        "query",
        help="run SQL (DuckDB) over a results store",
        description="Run SQL over DIR's views summary, flows and ports (a sweep store) or the "
        "tables of a single run, and print the result (or write it as CSV/Parquet).",
    )
    q.add_argument("dir", type=path_argument, help="results directory")
    q.add_argument("sql", help='e.g. "SELECT flow, avg(goodput_bps) FROM flows GROUP BY flow"')
    q.add_argument("--csv", type=output_argument, metavar="FILE", help="write the result as CSV")
    q.add_argument(
        "--parquet",
        type=output_argument,
        metavar="FILE",
        help="write the result as Parquet",
    )


def _sweep_document(path: Path) -> dict[str, Any] | None:
    """The document at ``path`` when it is a sweep file, else None (unchecked: its scenario
    may be missing). A file that cannot be read is None too: the scenario reader reports it
    with the usual message."""
    try:
        doc = toml_document(read_text_file(path))
    except ScenarioError:
        return None
    return doc if sweepfile.is_sweep_file(doc) else None


def _load_file(path: Path) -> tuple[Path, sweepfile.SweepFile | None]:
    doc = _sweep_document(path)
    if doc is None:
        return path, None
    spec = sweepfile.from_doc(doc, sweepfile.base_of(path))
    _check_named_scenario(spec.scenario)
    return spec.scenario, spec


def _check_named_scenario(scenario: Path) -> None:
    """The scenario a sweep file names, checked alone so that its error names it: the CLI
    puts the sweep file's name first ("sweep.toml: its scenario s.toml: `x`: ...")."""
    try:
        validate_file(scenario)
    except ScenarioError as err:
        raise ScenarioError(f"its scenario {clipped(str(scenario))}: {err.args[0]}") from None


def sweep_file_spec(path: Path) -> sweepfile.SweepFile | None:
    """The sweep file at ``path``, checked; None when ``path`` is not a sweep file."""
    return _load_file(path)[1]


def is_sweep_file(path: Path) -> bool:
    """Whether ``path`` is a sweep file (unchecked: its scenario may be missing)."""
    return _sweep_document(path) is not None


def describe_sweep(spec: sweepfile.SweepFile, overrides: list[str]) -> str:
    """``fairgate validate`` of a sweep file: every point checked by the core, none run."""
    prepared = prepare(
        spec.scenario,
        list(spec.grid),
        [list(group) for group in spec.zipped],
        spec.seeds or 1,
        [*spec.overrides, *overrides],
        progress=True,
    )
    axes = ", ".join(axis.name for axis in prepared.grid.axes) or "no axes"
    seeds, points = len(prepared.grid.seeds), len(prepared.points)
    return (
        f"valid sweep of {points:,} point{'s' if points != 1 else ''} ({axes}; {seeds:,} seed"
        f"{'s' if seeds != 1 else ''}) over {spec.scenario}"
    )


def _prepared(args: argparse.Namespace) -> SweepRun:
    if args.seeds is not None and not 1 <= args.seeds <= MAX_POINTS:
        expected = "at least 1" if args.seeds < 1 else f"at most {MAX_POINTS:,}"
        raise ScenarioError(f"--seeds: got {args.seeds}, expected {expected}")
    scenario, spec = _load_file(args.file)
    grid: list[Axis] = list(spec.grid) if spec else []
    zipped: list[list[Axis]] = [list(g) for g in spec.zipped] if spec else []
    grid += [parse_cli_axis(a, "--grid") for a in args.grid]
    if args.zip:
        zipped.append([parse_cli_axis(a, "--zip") for a in args.zip])
    seeds = args.seeds if args.seeds is not None else (spec.seeds if spec else None)
    seeds = 1 if seeds is None else seeds
    overrides = [*(spec.overrides if spec else []), *args.overrides]
    out = args.out or Path("out") / "sweep" / args.file.stem
    progress = not args.quiet
    return prepare(scenario, grid, zipped, seeds, overrides, out, "--out", progress)


def _interval(table: pd.DataFrame, metric: str, scale: float = 1.0) -> pd.Series:
    mean = table[f"{metric}_mean"] * scale
    half = (table[f"{metric}_ci_high"] - table[f"{metric}_mean"]) * scale
    text = mean.map("{:.6g}".format)
    return text.where(half.isna(), text + " ± " + half.map("{:.2g}".format))


def summary_table(summary: pd.DataFrame, axes: list[str]) -> pd.DataFrame:
    """Per combination of axis values: runs, failures and mean ± 95% interval half-width."""
    ok = summary[summary["status"] == "ok"]
    stats = repetitions(ok, axes, list(SHOWN_METRICS))
    shown = stats[[*axes, "runs"]].copy()
    for metric, label in SHOWN_METRICS.items():
        shown[label] = _interval(stats, metric)
    return shown


def flow_table(flows: pd.DataFrame, axes: list[str]) -> pd.DataFrame:
    data = flows[flows["role"] == "data"]
    stats = repetitions(data, [*axes, "flow"], list(FLOW_METRICS))
    shown = stats[[*axes, "flow", "runs"]].copy()
    for metric, (label, scale) in FLOW_METRICS.items():
        shown[label] = _interval(stats, metric, scale)
    return shown


def report(prepared: SweepRun, tables: dict[str, pd.DataFrame], flows: bool) -> int:
    """Prints the outcome; 0 when every point finished, 1 when some failed."""
    summary = tables["summary"]
    axes = [a.name for a in prepared.grid.axes]
    failed = summary[summary["status"] != "ok"]
    ran = len(summary) - prepared.skipped
    print(
        f"{len(prepared.points)} points: {ran} ran, {prepared.skipped} already finished, "
        f"{len(failed)} failed"
    )
    if len(failed) < len(summary):
        print("\nmean ± 95% interval half-width over seeds")
        print(printed_table(summary_table(summary, axes)))
        if _seeds_changed_nothing(summary, axes):
            print(
                "note: every seed gave the same run at every point: nothing in this scenario "
                "draws on the seed (random start times, Poisson or on-off sources, random "
                "loss or RED do)"
            )
    if flows and not tables["flows"].empty:
        print("\nflows")
        print(printed_table(flow_table(tables["flows"], axes)))
    if prepared.out is not None:
        print(f"\nwrote {prepared.out}/{{summary,flows,ports}}/point=*/ (fairgate query)")
    print_failures(failed)
    return 0 if failed.empty else 1


SHOWN_FAILURES = 5


def print_failures(failed: pd.DataFrame) -> None:
    """The first SHOWN_FAILURES failed points and their errors, on stderr: errors, which
    ``--quiet`` keeps (a quiet sweep of failed points ended with status 1 and no word)."""
    for row in failed.head(SHOWN_FAILURES).itertuples(index=False):
        print(f"failed: point {row.point} seed {row.seed}: {row.error}", file=sys.stderr)
    if len(failed) > SHOWN_FAILURES:
        more = len(failed) - SHOWN_FAILURES
        print(f"... and {more:,} more failed points (the summary's error column)", file=sys.stderr)


SAME_RUN = ["events", "delivered_pkts", "dropped_pkts"]
"""Columns of the summary that two runs of one point share only when they are the same run."""


def _seeds_changed_nothing(summary: pd.DataFrame, axes: list[str]) -> bool:
    """Whether several seeds ran and each point's seeds gave one run (intervals of 0)."""
    ok = summary[summary["status"] == "ok"]
    groups = [rows for _, rows in ok.groupby(axes, dropna=False)] if axes else [ok]
    if not groups or max(map(len, groups)) < 2:
        return False
    return all((rows[SAME_RUN].nunique() == 1).all() for rows in groups)


def run_sweep(args: argparse.Namespace, flows: bool = False) -> int:
    prepared = _prepared(args)
    try:
        client = client_of(args)
        wanted = ("summary", "flows") if flows and not args.quiet else ("summary",)
        tables = prepared.run(client, progress=not args.quiet, tables=wanted)
    except KeyboardInterrupt as stop:
        print(
            f"\n{stopped_by(stop)}: finished points are kept; run the same command to resume",
            file=sys.stderr,
        )
        return exit_status(stop)
    if args.quiet:
        summary = tables["summary"]
        failed = summary[summary["status"] != "ok"]
        print_failures(failed)
        return 0 if failed.empty else 1
    return report(prepared, tables, flows)


def client_of(args: argparse.Namespace) -> Any:
    from fairgate.sweeps.execute import check_workers, resolve

    check_workers(args.workers, "--workers")
    return resolve(scheduler=args.scheduler, workers=args.workers, scheduler_source="--scheduler")


def run_seeds(args: argparse.Namespace) -> int:
    """``fairgate run SCENARIO --seeds N``: a sweep without axes into --out."""
    if args.plot:
        raise ScenarioError("--plot: plots one run; with --seeds, run the seed of interest alone")
    sweep_args = argparse.Namespace(
        file=args.scenario,
        grid=[],
        zip=[],
        seeds=args.seeds,
        overrides=list(args.overrides),
        out=args.out or Path("out") / args.scenario.stem,
        quiet=args.quiet,
        scheduler=args.scheduler,
        workers=args.workers,
    )
    if args.seed is not None:
        sweep_args.overrides.append(f"simulation.seed={args.seed}")
    return run_sweep(sweep_args, flows=True)


PRINTED_ROWS = 10_000


def run_query(args: argparse.Namespace) -> int:
    """``fairgate query``: writes the rows to ``--csv``/``--parquet`` as they come, or prints the
    first PRINTED_ROWS and, on stderr, how many there were."""
    outputs = {flag: path for flag, path in (("csv", args.csv), ("parquet", args.parquet)) if path}
    if not outputs and sys.stdout is None:  # closed (>&-): print() would drop every row
        raise ScenarioError(
            "standard output is closed; expected it open, or the rows written with --csv FILE "
            "or --parquet FILE"
        )
    for flag, path in outputs.items():
        check_out_file(path, f"--{flag}")
    if len(outputs) == 2 and Path(args.csv).resolve() == Path(args.parquet).resolve():
        raise ScenarioError(
            f"--parquet: got {shown(str(args.parquet))}, the file --csv names; expected "
            "another file (one would overwrite the other)"
        )
    with rows(args.dir, args.sql) as (schema, batches):
        if outputs:
            write_rows(schema, batches, outputs)
        else:
            print_rows(schema, batches)
    return 0


def write_rows(
    schema: pa.Schema, batches: Iterator[pa.RecordBatch], outputs: dict[str, str]
) -> None:
    """Writes every batch to each output (``csv`` or ``parquet``). A file is written under a
    hidden name beside it and renamed when complete, so that a query that fails part-way
    leaves no partial result looking complete and keeps the file that was there; a pipe or
    device (``--csv /dev/stdout``) is written as the rows come."""
    targets = {flag: _final_file(Path(path)) for flag, path in outputs.items()}
    staged: dict[str, Path] = {}
    writers: list[Any] = []
    try:
        for flag, target in targets.items():
            staged[flag] = _staged_file(target)
        for flag, path in staged.items():
            if flag == "csv":
                options = pa_csv.WriteOptions(quoting_style="needed")
                writers.append(pa_csv.CSVWriter(str(path), schema, write_options=options))
            else:
                writers.append(pq.ParquetWriter(str(path), schema))
        for batch in batches:
            for writer in writers:
                writer.write_batch(batch)
        for writer in writers:
            writer.close()
        for flag, path in staged.items():
            if path != targets[flag]:
                os.replace(path, targets[flag])
    except BaseException as err:
        for writer in writers:
            with contextlib.suppress(Exception):
                writer.close()
        for flag, path in staged.items():
            if path != targets[flag]:
                path.unlink(missing_ok=True)
        if isinstance(err, OSError) and not isinstance(err, BrokenPipeError):
            # The system refused the write (a full disk): no bad input, as on stdout (exit 1).
            # A reader that leaves a pipe (`--csv /dev/stdout | head`) is no error at all.
            paths = ", ".join(map(str, outputs.values()))
            raise OSError(f"cannot write {paths}: {err}") from None
        raise


def _final_file(path: Path) -> Path:
    """The file the rows end in: ``path``, or the file a link at ``path`` leads to (a link to
    a pipe or a device, as ``/dev/stdout`` is, stays as given)."""
    if path.is_symlink() and (path.is_file() or not path.exists()):
        return path.resolve()
    return path


def _staged_file(target: Path) -> Path:
    """Where the rows for ``target`` are written first: a new hidden file beside it, with the
    mode the file has (or a new file would get), unless ``target`` is a pipe or a device, or
    its folder takes no new file (written directly, never replaced)."""
    if target.exists() and not target.is_file():
        return target
    try:
        fd, name = tempfile.mkstemp(prefix=f".{target.name}.partial-", dir=target.parent)
    except PermissionError:  # a file the user may write, in a folder they may not
        return target
    os.close(fd)
    os.chmod(name, target.stat().st_mode & 0o7777 if target.exists() else _new_file_mode())
    return Path(name)


def _new_file_mode() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return 0o666 & ~mask


def print_rows(schema: pa.Schema, batches: Iterator[pa.RecordBatch]) -> None:
    """Prints the first PRINTED_ROWS rows as a table; counts the rest without keeping them."""
    head: list[pa.RecordBatch] = []
    total = 0
    for batch in batches:
        if total < PRINTED_ROWS:
            head.append(batch.slice(0, PRINTED_ROWS - total))
        total += batch.num_rows
    print(pa.Table.from_batches(head, schema).to_pandas().to_string(index=False))
    if total > PRINTED_ROWS:
        print(
            f"({total:,} rows; the first {PRINTED_ROWS:,} shown: --csv FILE or --parquet FILE "
            "writes them all)",
            file=sys.stderr,
        )

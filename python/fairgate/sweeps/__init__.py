"""Many runs of one scenario: parameter sweeps and repetitions over seeds, run on Dask.

``fg.sweep(scenario, grid={"bottleneck.queue.limit": [10, 20]}, seeds=5)`` checks every axis,
runs each point (axis values x seed) as its own simulation on the executor
(:mod:`fairgate.sweeps.execute`) and returns one summary row per point. With ``out=DIR`` each
finished point is written to the results store (:mod:`fairgate.sweeps.store`) as it arrives,
by the worker that ran it when the workers share the store's file system, else by the client
(:mod:`fairgate.sweeps.placement`); a rerun skips the finished points and runs the failed ones
again.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from contextlib import nullcontext
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa

from fairgate import __version__
from fairgate._core import ScenarioError
from fairgate.atm import is_atm
from fairgate.checks import MAX_SEED, seed_value, shown
from fairgate.runner import check_out_dir, override_list, run_text, validate_text
from fairgate.runner import read_scenario_file as read_scenario
from fairgate.scenario import Scenario, plain, toml_text
from fairgate.sweeps import placement, store
from fairgate.sweeps.axes import MAX_POINTS, Axis, Grid, Point, build_grid
from fairgate.sweeps.execute import (
    SWEEP_BATCH,
    Task,
    close_local,
    done_with,
    execute,
    is_local,
    resolve,
)
from fairgate.sweeps.query import query
from fairgate.sweeps.query import rows as query_rows
from fairgate.sweeps.stats import repetitions
from fairgate.sweeps.worker_memory import adopt_worker_memory_limit

__all__ = [
    "Axis",
    "SweepRun",
    "prepare",
    "query",
    "query_rows",
    "repetitions",
    "run_point",
    "run_point_into",
    "scenario_text",
    "store_run",
    "sweep",
]

TABLES = ("summary", "flows", "ports")


def scenario_text(scenario: Scenario | Mapping[str, Any] | str | Path) -> str:
    """TOML text of a :class:`Scenario`, of its dict, of a scenario file path, or TOML text
    itself; anything else raises ScenarioError."""
    if isinstance(scenario, Scenario):
        return scenario.to_toml()
    if isinstance(scenario, Mapping):
        return toml_text(scenario)
    if isinstance(scenario, Path) or (
        isinstance(scenario, str) and "\n" not in scenario and scenario.endswith(".toml")
    ):
        return read_scenario(scenario)
    if isinstance(scenario, str):
        return scenario
    raise ScenarioError(
        f"scenario: got {type(scenario).__name__}, expected a fairgate.Scenario, its dict, "
        "TOML text or the path of a scenario file"
    )


def run_point(
    text: str, overrides: Sequence[str], tables: Sequence[str] = TABLES
) -> dict[str, Any]:
    """Runs on a worker: one simulation; its summary and those of its per-flow and per-port
    tables that ``tables`` names (a sweep that returns its summary sent every point's other
    two to the client, which dropped them)."""
    adopt_worker_memory_limit()
    results = run_text(text, list(overrides))
    kept = {name: getattr(results, name) for name in ("flows", "ports") if name in tables}
    return {"summary": results.summary, **kept}


def run_point_into(
    root: str, point: Point, text: str, overrides: Sequence[str], attempt: int
) -> Any:
    """Runs on a worker that shares the store: one simulation, committed to the store at
    ``root`` exactly as the client would commit it; only its summary row goes back."""
    tables = _point_tables(point, run_point(text, overrides), None, attempt)
    store.commit(Path(root), point.key, tables)
    return tables["summary"]


def _is_list(value: object) -> bool:
    """A list-like of items: a sequence, an array or a pandas Series, not text or bytes (a
    sequence of letters) nor a 0-d array (a number)."""
    if isinstance(value, np.ndarray):
        return value.ndim > 0
    return isinstance(value, Sequence | pd.Series | pd.Index) and not isinstance(value, str | bytes)


def _axes(
    spec: Mapping[str, Sequence[Any]] | Sequence[Axis] | None, where: str = "grid"
) -> list[Axis]:
    """Axes from ``{path: values}`` (the column is named by the path) or given as Axis."""
    if spec is None:
        return []
    if not isinstance(spec, Mapping):
        if not _is_list(spec) or not all(isinstance(axis, Axis) for axis in spec):
            raise ScenarioError(
                f"{where}: got {shown(spec)}, expected a mapping of a path to its values "
                "(or a list of Axis)"
            )
        return list(spec)
    axes = []
    for name, values in spec.items():
        if not isinstance(name, str):
            raise ScenarioError(f"{where}: got the axis name {shown(name)}, expected a path string")
        if not _is_list(values):
            raise ScenarioError(f"axis `{name}`: got {shown(values)}, expected a list of values")
        axes.append(Axis(name, name, tuple(plain(values, f"axis {name}"))))
    return axes


def _seeds(seeds: int | Sequence[int], text: str, overrides: Sequence[str]) -> list[int]:
    """``seeds=N`` is the scenario's seed and the N - 1 after it; a list is taken as given."""
    if isinstance(seeds, np.ndarray) and seeds.ndim == 0:
        seeds = seeds.item()
    if _is_list(seeds):
        return [seed_value(seed, f"seeds[{index}]") for index, seed in enumerate(seeds)]
    if isinstance(seeds, bool) or not isinstance(seeds, int | np.integer):
        raise ScenarioError(f"seeds: got {shown(seeds)}, expected a count or a list of seeds")
    seeds = int(seeds)
    if seeds < 1:
        raise ScenarioError(f"seeds: got {seeds}, expected at least 1")
    if seeds > MAX_POINTS:
        raise ScenarioError(f"seeds: got {seeds}, expected at most {MAX_POINTS:,}")
    first = int(validate_text(text, overrides)["simulation"]["seed"])
    if first + seeds - 1 > MAX_SEED:
        raise ScenarioError(
            f"seeds: {seeds} seeds from the scenario's seed {first} pass the largest seed "
            f"({MAX_SEED}); expected at most {MAX_SEED - first + 1}, or a smaller seed"
        )
    return list(range(first, first + seeds))


class SweepRun:
    """A checked sweep: its points, where its results go, and how to run them."""

    def __init__(
        self,
        text: str,
        grid: Grid,
        overrides: Sequence[str] = (),
        out: str | Path | None = None,
        out_name: str = "out",
    ) -> None:
        self.text = text
        self.grid = grid
        self.overrides = list(overrides)
        self.out = check_out_dir(out, out_name) if out is not None else None
        self.out_name = out_name
        self.points = grid.points()
        digest = hashlib.sha256(json.dumps([text, self.overrides]).encode()).hexdigest()
        self.manifest = {
            "scenario_sha256": digest,
            "axes": [{"name": a.name, "path": a.path} for a in grid.axes],
            "seeds": list(grid.seeds),
            "overrides": self.overrides,
            "points": len(self.points),
            "fairgate_version": __version__,
        }
        self.skipped = 0

    def _todo(self) -> list[Point]:
        if self.out is None:
            return self.points
        store.check_not_a_saved_run(self.out, self.out_name)
        store.check_manifest(self.out, self.manifest, self.out_name)
        store.tidy(self.out)
        done = store.finished_keys(self.out)
        todo = [p for p in self.points if p.key not in done]
        self.skipped = len(self.points) - len(todo)
        return todo

    def _task(self, point: Point, on_workers: bool, keep: Sequence[str]) -> Task:
        overrides = [*self.overrides, *point.all_overrides()]
        if on_workers and self.out is not None:
            root = str(self.out.resolve())
            args = (root, point, self.text, overrides)
            return Task(point.key, run_point_into, args, with_attempt=True)
        sent = TABLES if self.out is not None else tuple(keep)  # the client commits all three
        return Task(point.key, run_point, (self.text, overrides, sent))

    def run(
        self,
        client: Any = None,
        progress: bool = False,
        tables: Sequence[str] = TABLES,
        store_on_workers: bool | None = None,
    ) -> dict[str, pd.DataFrame]:
        """Runs the points not yet finished; returns ``tables`` for every point of the grid
        (read back from the store when there is one: only those asked for), in grid order.
        ``store_on_workers``: see :mod:`fairgate.sweeps.placement` (None: when they can)."""
        placement.check_choice(store_on_workers)
        with store.writing(self.out, self.out_name) if self.out is not None else nullcontext():
            return self._run(client, progress, tables, store_on_workers)

    def _run(
        self,
        client: Any,
        progress: bool,
        tables: Sequence[str],
        store_on_workers: bool | None,
    ) -> dict[str, pd.DataFrame]:
        todo = self._todo()
        collected: dict[str, dict[str, Any]] = {}
        # With a store, the other tables are read back from it: only the summaries are kept.
        keep = ("summary",) if self.out is not None else tuple(tables)
        if todo:
            client = resolve(client)
            try:
                self._run_on(client, todo, progress, collected, keep, store_on_workers)
            finally:
                done_with(client)
        return self._tables(collected, tables)

    def _run_on(
        self,
        client: Any,
        todo: list[Point],
        progress: bool,
        collected: dict[str, dict[str, Any]],
        keep: Sequence[str],
        store_on_workers: bool | None,
    ) -> None:
        on_workers = self.out is not None and placement.store_on_workers(
            client, self.out, store_on_workers
        )
        try:
            self._run_points(client, todo, on_workers, progress, collected, keep)
        except KeyboardInterrupt:
            if on_workers and self.out is not None:
                _stop_writers(client, self.out)
            raise

    def _run_points(
        self,
        client: Any,
        todo: list[Point],
        on_workers: bool,
        progress: bool,
        collected: dict[str, dict[str, Any]],
        keep: Sequence[str],
    ) -> None:
        """Runs ``todo``; the client commits what the workers did not (failures, or every
        point when they do not write), and keeps of each point only the tables named
        (``docs/results.md``, "Client memory": all three were kept, 129 kB a point)."""
        by_key = {p.key: p for p in todo}
        tasks = [self._task(p, on_workers, keep) for p in todo]
        for outcome in execute(tasks, client, progress, "sweep", SWEEP_BATCH):
            if on_workers and outcome.ok:  # the worker wrote it and sent its summary
                collected[outcome.key] = {"summary": _SummaryRow.of(outcome.value)}
                continue
            point = by_key[outcome.key]
            parts = _point_tables(point, outcome.value, outcome.error, outcome.attempts)
            if self.out is not None:
                store.commit(self.out, point.key, parts)
            kept = {name: parts[name] for name in keep if name in parts}
            if "summary" in kept:
                kept["summary"] = _SummaryRow.of(kept["summary"])
            collected[point.key] = kept

    def _tables(
        self, collected: dict[str, dict[str, Any]], names: Sequence[str]
    ) -> dict[str, pd.DataFrame]:
        order = {p.key: i for i, p in enumerate(self.points)}
        out = {}
        for name in names:
            frame = self._table(collected, name)
            if not frame.empty:
                frame = frame[frame["point"].isin(order)]
                rank = frame["point"].map(order)
                frame = frame.iloc[rank.argsort(kind="stable")].reset_index(drop=True)
            out[name] = frame
        return out

    def _table(self, collected: dict[str, dict[str, Any]], name: str) -> pd.DataFrame:
        """One table of the points this run collected (with a store: only their summaries,
        as the workers return them) and of the rest of the store."""
        use = self.out is None or name == "summary"
        known = {key: t[name] for key, t in collected.items() if use and name in t}
        if name == "summary":
            parts = _SummaryRow.frames(known)
        else:
            parts = [_with_key(table, key) for key, table in known.items()]
        if self.out is not None:
            rest = store.read(self.out, name, skip=set(known))
            if not rest.empty or not parts:
                parts.insert(0, rest)
        return pd.concat(parts, ignore_index=True) if parts else pd.DataFrame()


def _stop_writers(client: Any, root: Path) -> None:
    """After Ctrl-C: a local cluster is closed (its workers finish their points or are killed)
    and what a killed worker left half-written is removed; a remote cluster's workers finish
    the points they run, and the next run removes any leftovers."""
    if is_local(client):
        close_local()
        store.tidy(root)


@dataclass(frozen=True)
class _SummaryRow:
    """A point's summary row as the client keeps it until the sweep ends: its values and its
    table's schema. A one-row Arrow table per point took 17 kB and its conversion 0.8 ms at
    the end (13 minutes, serially, for a million points); the rows of one schema become one
    table."""

    schema: pa.Schema
    values: dict[str, Any]

    @classmethod
    def of(cls, table: pa.Table) -> _SummaryRow:
        return cls(table.schema, table.to_pylist()[0])

    @staticmethod
    def frames(rows: Mapping[str, _SummaryRow]) -> list[pd.DataFrame]:
        """The rows as frames, one per schema, each with the points' keys first."""
        by_schema: dict[pa.Schema, tuple[list[str], list[dict[str, Any]]]] = {}
        for key, row in rows.items():
            keys, values = by_schema.setdefault(row.schema, ([], []))
            keys.append(key)
            values.append(row.values)
        frames = []
        for schema, (keys, values) in by_schema.items():
            frame = pa.Table.from_pylist(values, schema=schema).to_pandas()
            frame.insert(0, "point", keys)
            frames.append(frame)
        return frames


def _with_key(table: Any, key: str) -> pd.DataFrame:
    frame = table.to_pandas() if hasattr(table, "to_pandas") else table
    frame.insert(0, "point", key)
    return frame


def _point_tables(point: Point, value: Any, error: str | None, attempts: int) -> dict[str, Any]:
    params = dict(point.params)
    row: dict[str, Any] = {"seed": point.seed, "attempts": attempts}
    if error is not None:
        row.update(value or {}, status="failed", error=error)  # value: what the failure kept
        return {"summary": store.summary_table(params, row)}
    summary = value["summary"]
    row.update(store.summary_metrics(summary), scenario=summary["scenario"], status="ok")
    per_point = {
        name: store.with_params(value[name], params, point.seed)
        for name in ("flows", "ports")
        if name in value
    }
    return {**per_point, "summary": store.summary_table(params, row)}


def store_run(out: str | Path, text: str, overrides: Sequence[str], results: Any) -> str:
    """Writes a single run's summary, flows and ports into ``out`` as a one-point store (the
    layout of a sweep without axes), so that ``fairgate query`` reads runs and sweeps alike.
    A previous single run in ``out`` is replaced; a sweep of several points is not touched
    (ScenarioError naming ``--out``). The caller holds ``store.writing(out)`` for the whole
    run, so that no other process writes ``out`` meanwhile. Returns the point's key."""
    root = Path(out)
    seed = int(results.summary["seed"])
    prepared = SweepRun(text, Grid(groups=(), seeds=(seed,)), overrides, root, "--out")
    point = prepared.points[0]
    value = {"summary": results.summary, "flows": results.flows, "ports": results.ports}
    store.replace_single_run(root)
    store.check_manifest(root, prepared.manifest)
    store.commit(root, point.key, _point_tables(point, value, None, 1))
    return point.key


def prepare(
    scenario: Scenario | str | Path,
    grid: Mapping[str, Sequence[Any]] | Sequence[Axis] | None = None,
    zip: Sequence[Mapping[str, Sequence[Any]] | Sequence[Axis]] = (),  # noqa: A002
    seeds: int | Sequence[int] = 1,
    overrides: str | Sequence[str] = (),
    out: str | Path | None = None,
    out_name: str = "out",
    progress: bool = False,
) -> SweepRun:
    """Checks a sweep (every axis value, by the core) without running anything; an error in
    ``out`` names it as ``out_name`` (``--out`` for the CLI). ``progress`` shows a bar while
    the values are checked, when that takes more than 2 s."""
    text = scenario_text(scenario)
    overrides = override_list(overrides)
    if is_atm(validate_text(text, overrides)):
        raise ScenarioError(
            "atm: got a scenario with an [atm] section, expected a packet scenario: sweeps run "
            "packet networks (run cell networks with `fairgate run` or fairgate.atm.run_atm)"
        )
    seed_list = _seeds(seeds, text, overrides)
    if isinstance(zip, Mapping):
        raise ScenarioError(
            "zip: got a single group, expected a list of groups: zip=[{path: values, ...}]"
        )
    if not _is_list(zip):
        raise ScenarioError(
            f"zip: got {shown(zip)}, expected a list of groups: zip=[{{path: values, ...}}]"
        )
    zipped = [_axes(group, f"zip[{i}]") for i, group in enumerate(zip)]
    checked = build_grid(text, _axes(grid), zipped, seed_list, overrides, progress)
    return SweepRun(text, checked, overrides, out, out_name)


def sweep(
    scenario: Scenario | str | Path,
    grid: Mapping[str, Sequence[Any]] | None = None,
    seeds: int | Sequence[int] = 1,
    client: Any = None,
    zip: Sequence[Mapping[str, Sequence[Any]]] = (),  # noqa: A002 - the combination's name
    overrides: Sequence[str] = (),
    out: str | Path | None = None,
    table: str = "summary",
    progress: bool = False,
    store_on_workers: bool | None = None,
) -> pd.DataFrame:
    """Runs ``scenario`` at every point of ``grid`` (a product of axes; ``zip`` groups axes
    that vary together) for each seed, on ``client`` (a ``distributed.Client``; by default
    ``$FAIRGATE_SCHEDULER`` or a local cluster). Returns ``table`` ("summary": one row per
    point with its parameters, seed, status and metrics; "flows" or "ports": the per-flow or
    per-port rows with the point's parameters). With ``out``, ``store_on_workers`` says who
    writes the store: None (default) the workers when they share its file system, else the
    client; True the workers (ScenarioError if they cannot); False the client. Raises
    ScenarioError naming the axis for bad input before any point runs."""
    if table not in TABLES:
        raise ScenarioError(f"table: got {shown(table)}, expected one of {', '.join(TABLES)}")
    prepared = prepare(scenario, grid, zip, seeds, overrides, out, progress=progress)
    return prepared.run(client, progress, (table,), store_on_workers)[table]

"""Run results as pandas DataFrames, saved as Parquet plus ``summary.json``.

The core hands over each column as a numpy array (or category codes plus names), so building
the frames copies nothing row by row. The schema is documented in ``docs/results.md``.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any, NoReturn

import numpy as np
import pandas as pd
import pyarrow as pa

from fairgate import _core
from fairgate.checks import shown, small_text, utf8_path
from fairgate.display import cell

TABLES = (
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
)


class _Categories:
    """One categorical type per distinct list of names. The port and flow names recur in
    several tables, and building a type hashes and checks every name: 0.1-0.2 s for each
    table of a 100,000-flow run's 400,000 ports, empty tables included."""

    def __init__(self) -> None:
        self._known: list[tuple[list[str], pd.CategoricalDtype]] = []

    def dtype(self, names: list[str]) -> pd.CategoricalDtype:
        for known, dtype in self._known:
            if known is names or known == names:
                return dtype
        dtype = pd.CategoricalDtype(names)
        self._known.append((names, dtype))
        return dtype


def _frame(columns: list[tuple[str, Any]], categories: _Categories) -> pd.DataFrame:
    data: dict[str, Any] = {}
    for name, value in columns:
        if isinstance(value, tuple):
            codes, names = value
            dtype = categories.dtype(names)
            data[name] = pd.Categorical.from_codes(codes.astype(np.int32), dtype=dtype)
        else:
            data[name] = value
    # The columns are the core's arrays, referenced nowhere else: no copy is needed.
    return pd.DataFrame(data, copy=False)


NO_TRAFFIC = '[simulation]\nduration = "1ms"\n[[nodes]]\nname = "a"\n'
CAUSES_BY_SCHEMA = {1: "ports", 2: "drop_causes"}
"""Summary schemas :meth:`Results.load` reads, with the list that holds the drop causes: 2 is
written now; 1 held them in each port's entry."""


@cache
def written_columns() -> dict[str, dict[str, str]]:
    """The columns this version writes in each table, with the kind of each
    (:func:`column_kind`): those of a run of one node for 1 ms (the core gives every table its
    columns whatever the run holds)."""
    sim = _core.load(NO_TRAFFIC, [])
    sim.run_until(sim.end_s)
    raw = sim.results()
    return {name: {column: _raw_kind(values) for column, values in raw[name]} for name in TABLES}


def _raw_kind(values: Any) -> str:
    """The kind of a column as the core hands it over: an array of numbers or booleans, or
    names (a list, or codes and names); an empty table's dtypes say nothing once in pandas."""
    return column_kind(values.dtype) if isinstance(values, np.ndarray) else "text"


def column_kind(dtype: Any) -> str:
    """``number``, ``true/false`` or ``text``: what a reader of the column relies on (an
    integer column read back as float, NaN for a missing value, is still a number)."""
    if pd.api.types.is_bool_dtype(dtype):
        return "true/false"
    if pd.api.types.is_numeric_dtype(dtype):
        return "number"
    return "text"


def _check_saved(out: Path, summary: object, frames: dict[str, pd.DataFrame]) -> None:
    """Refuses saved results whose summary or tables lack what :class:`Results` reads."""
    conservation = summary.get("conservation") if isinstance(summary, dict) else None
    if not isinstance(summary, dict) or not isinstance(conservation, dict):
        raise _core.ScenarioError(
            f"{out / 'summary.json'}: expected a JSON object with a `conservation` entry"
        )
    version = summary.get("schema_version")
    causes = CAUSES_BY_SCHEMA.get(version)
    if not causes or "ok" not in conservation or not isinstance(summary.get(causes), list):
        raise _core.ScenarioError(
            f"{out / 'summary.json'}: `schema_version`: got {shown(version)}, expected 2 (or 1) "
            "with `conservation.ok` and the drop causes"
        )
    for name, columns in written_columns().items():
        missing = [c for c in columns if c not in frames[name].columns]
        if missing:
            raise _core.ScenarioError(
                f"{out / (name + '.parquet')}: missing column(s) {', '.join(missing[:5])}; "
                f"expected the `{name}` table Results.save writes"
            )
        for column, kind in columns.items():
            held = column_kind(frames[name][column].dtype)
            if held != kind and not frames[name][column].isna().all():
                raise _core.ScenarioError(
                    f"{out / (name + '.parquet')}: column `{column}` holds {held} "
                    f"({frames[name][column].dtype}), expected {kind}s as Results.save writes "
                    "them (a table changed by another program?)"
                )


def results_argument(value: object, name: str = "results") -> Results:
    """``value`` when it is a run's Results; otherwise ScenarioError naming ``name`` (a figure
    or a measurement of ``None`` was an AttributeError from inside it)."""
    if not isinstance(value, Results):
        raise _core.ScenarioError(
            f"{name}: got {shown(value)}, expected the Results of a run (Scenario.run, "
            "fairgate.run_file, fairgate.run_text or Results.load)"
        )
    return value


ROLES = ("data", "ack")
CLASS_COLUMNS = ("goodput_bps", "throughput_bps")


def _one_of(name: str, value: object, allowed: Sequence[str]) -> None:
    """Refuses ``value`` unless it is one of ``allowed``, naming the argument."""
    if value not in allowed:
        listed = ", ".join(map(str, allowed[:8])) + (", ..." if len(allowed) > 8 else "")
        raise _core.ScenarioError(f"`{name}`: got {shown(value)}, expected one of {listed}")


@dataclass
class Results:
    """Everything a run reports."""

    summary: dict[str, Any]
    flows: pd.DataFrame
    ports: pd.DataFrame
    queue_series: pd.DataFrame
    flow_series: pd.DataFrame
    qdisc_state: pd.DataFrame
    traces: pd.DataFrame
    transfers: pd.DataFrame
    drops: pd.DataFrame
    class_series: pd.DataFrame
    phase_classes: pd.DataFrame
    phase_ports: pd.DataFrame

    @classmethod
    def from_core(cls, raw: dict[str, Any]) -> Results:
        """The results of a finished core simulation (``Simulation.results()``)."""
        if not isinstance(raw, dict) or not all(key in raw for key in (*TABLES, "summary")):
            raise _core.ScenarioError(
                f"raw: got {shown(raw)}, expected the dict a core Simulation's results() returns"
            )
        categories = _Categories()
        frames = {name: _frame(raw[name], categories) for name in TABLES}
        return cls(summary=json.loads(raw["summary"]), **frames)

    def __repr__(self) -> str:
        """One line (the dataclass's own printed every table, 8 kB for the showcase): what
        ran, whether it is valid, and each table's row count."""
        s = self.summary
        rows = ", ".join(f"{name} {len(getattr(self, name)):,}" for name in TABLES)
        valid = "valid" if s.get("valid", True) else "INVALID (conservation violated)"
        return (
            f"<Results {cell(s.get('scenario') or '(unnamed)')!r} seed {s.get('seed')}, "
            f"{s.get('time_s', 0):g} s simulated, {s.get('events', 0):,} events, {valid}; "
            f"rows: {rows}>"
        )

    @property
    def conserved(self) -> bool:
        """Whether every conservation law held (``summary.json``'s ``conservation.ok``)."""
        return bool(self.summary["conservation"]["ok"])

    def throughput(self, role: str = "data") -> pd.DataFrame:
        """Per-flow goodput rates (bit/s) between consecutive samples of the flows of ``role``
        (``"data"`` or ``"ack"``)."""
        _one_of("role", role, ROLES)
        fs = self.flow_series
        roles = dict(zip(self.flows["flow"], self.flows["role"], strict=True))
        keep = fs["flow"].map(roles).eq(role).to_numpy()
        wide = fs[keep].pivot(index="time_s", columns="flow", values="goodput_bytes")
        wide = wide.loc[:, wide.columns.isin(self.flows["flow"][self.flows["role"] == role])]
        dt = np.diff(wide.index.to_numpy(), prepend=np.nan)
        rates = wide.diff().mul(8.0).div(dt, axis=0).iloc[1:]
        rates.columns = rates.columns.astype(str)
        return rates

    def class_throughput(self, column: str = "goodput_bps") -> pd.DataFrame:
        """Goodput (or ``column="throughput_bps"``: delivered bytes) in bit/s between
        consecutive samples per class, the source kind of the data flows (``tcp``, ``cbr``,
        ``web``, ``http``, ...): the core's ``class_series`` as one column per class."""
        _one_of("column", column, CLASS_COLUMNS)
        cs = self.class_series
        wide = cs.pivot(index="time_s", columns="class", values=column).iloc[1:]
        wide.columns = wide.columns.astype(str)
        wide.columns.name = None
        return wide

    def ranked_ports(self) -> pd.DataFrame:
        """The ports table, most queue drops first (ties: the highest utilisation, then table
        order)."""
        ports = self.ports.assign(order=range(len(self.ports)))
        ranked = ports.sort_values(
            ["drops_pkts", "utilisation", "order"], ascending=[False, False, True], kind="stable"
        )
        return ranked.drop(columns="order")

    def bottleneck(self) -> str:
        """The port with the most queue drops (ties: the highest utilisation, then the first)."""
        if self.ports.empty:
            raise _core.ScenarioError("bottleneck: got a run without ports, expected one link")
        return str(self.ranked_ports()["port"].iloc[0])

    def drop_causes(self) -> pd.DataFrame:
        """Drops and marks by the causes each port's discipline named (a CHOKe match, an SFG
        filter drop, RED early or forced), over the whole run: one row per port and cause with
        ``port``, ``cause``, ``reason``, ``drops`` and ``marks`` (``docs/results.md``, causes)."""
        if "drop_causes" in self.summary:
            rows = self.summary["drop_causes"]
        else:  # summary.json of schema version 1: the causes sat in each port's entry
            rows = [
                {"port": entry["port"], **cause}
                for entry in self.summary["ports"]
                for cause in entry.get("drop_causes", [])
            ]
        columns = ["port", "cause", "reason", "drops", "marks"]
        return pd.DataFrame(rows, columns=columns)

    def phase_summary(self, port: str | None = None) -> pd.DataFrame:
        """One row per traffic phase and class: the class's drop rate, byte loss rate,
        throughput and goodput in the phase (``phase_classes``), beside the utilisation, mean
        queue, drop rate and byte loss rate of ``port`` (default: :meth:`bottleneck`) in the
        same phase (``phase_ports``). Phases are cut at ``[simulation] phase_edges``."""
        port = self.bottleneck() if port is None else port  # "" is no port, not the default
        pp = self.phase_ports
        _one_of("port", port, sorted(set(self.ports["port"].astype(str))))
        at_port = pp[pp["port"].astype(str) == port][
            ["phase", "utilisation", "mean_queue_pkts", "drop_rate", "byte_loss_rate"]
        ].rename(columns=lambda c: c if c == "phase" else f"port_{c}")
        summary = self.phase_classes.merge(at_port, on="phase", how="left")
        summary["class"] = summary["class"].astype(str)
        return summary.assign(port=port)

    def save(self, out_dir: str | Path) -> Path:
        """Writes summary.json and one Parquet file per table into ``out_dir``.

        ``out_dir`` is checked first as ``fairgate run --out`` is (:func:`check_out_dir`): a
        file, an unwritable place or a directory holding entries fairgate did not write raises
        ScenarioError naming ``out_dir``. The directory's lock is held while it is written, so
        a command writing the same directory is refused (:meth:`write_into` for the rest).
        """
        from fairgate.runner import check_out_dir
        from fairgate.sweeps.store import writing

        out = check_out_dir(out_dir, "out_dir")
        with writing(out, "out_dir"):
            return self.write_into(out, "out_dir")

    def write_into(self, out: Path, name: str = "--out") -> Path:
        """Writes the results into ``out`` for a caller that has checked it and holds its lock
        (:meth:`save` does both). Files are written to a hidden folder inside ``out`` first
        and moved into place only when all of them are complete; ``summary.json`` is moved
        last. They replace an earlier run's, and with them its one-point store (``fairgate
        run`` writes one), which would otherwise still answer ``fairgate query``; a directory
        holding a sweep of several points raises ScenarioError naming ``name``."""
        from fairgate.sweeps.store import write_single_run

        tables = {table: getattr(self, table) for table in TABLES}
        write_single_run(out, name, tables, self.summary)
        return out

    @classmethod
    def load(cls, out_dir: str | Path) -> Results:
        """Reads results saved by :meth:`save`; a directory that does not hold them (a missing
        or unreadable summary or table, a table without the columns this version writes, or with
        text where it writes numbers or the reverse) raises ScenarioError naming the file."""
        out = utf8_path(out_dir, "out_dir")
        if not out.is_dir():
            _not_saved(out, "not a directory" if out.exists() else "no such directory")
        summary = _read_saved(out, "summary.json", lambda path: json.loads(small_text(path)))
        frames = {name: _read_saved(out, f"{name}.parquet", pd.read_parquet) for name in TABLES}
        _check_saved(out, summary, frames)
        return cls(summary=summary, **frames)


def _read_saved(out: Path, name: str, read: Callable[[Path], Any]) -> Any:
    """``read(out / name)``; a file missing or damaged raises ScenarioError naming it."""
    try:
        return read(out / name)
    except (OSError, ValueError, pa.ArrowException) as err:
        _not_saved(out, f"no {name}" if isinstance(err, FileNotFoundError) else f"{name}: {err}")


def _not_saved(out: Path, reason: str) -> NoReturn:
    raise _core.ScenarioError(
        f"{out}: cannot read saved results ({reason}); expected a directory written by "
        f"Results.save or `fairgate run --out`{_other_output(out)}"
    )


def _other_output(out: Path) -> str:
    """What else ``out`` holds that fairgate wrote, and what reads it. `fairgate run` writes
    a store beside a single run's summary: a damaged file is the reason then, not the store."""
    if (out / "sweep.json").is_file() and not (out / "summary.json").is_file():
        return "; it holds a sweep's store: read it with fairgate.sweeps.query(DIR, SQL)"
    if (out / "vcs.parquet").is_file():
        return (
            "; it holds a cell network's run (vcs, occupancy, refused): read them with "
            "fairgate.sweeps.query(DIR, SQL) or pandas.read_parquet"
        )
    return ""

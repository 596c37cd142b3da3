"""Run results as pandas DataFrames, saved as Parquet plus ``summary.json``.

The core hands over each column as a numpy array (or category codes plus names), so building
the frames copies nothing row by row. The schema is documented in ``docs/results.md``.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

TABLES = (
    "flows",
    "ports",
    "queue_series",
    "flow_series",
    "qdisc_state",
    "traces",
    "transfers",
    "drops",
)


def _frame(columns: list[tuple[str, Any]]) -> pd.DataFrame:
    data: dict[str, Any] = {}
    for name, value in columns:
        if isinstance(value, tuple):
            codes, categories = value
            data[name] = pd.Categorical.from_codes(codes.astype(np.int32), categories=categories)
        else:
            data[name] = value
    return pd.DataFrame(data)


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

    @classmethod
    def from_core(cls, raw: dict[str, Any]) -> Results:
        frames = {name: _frame(raw[name]) for name in TABLES}
        return cls(summary=json.loads(raw["summary"]), **frames)

    @property
    def conserved(self) -> bool:
        return bool(self.summary["conservation"]["ok"])

    def throughput(self, role: str = "data") -> pd.DataFrame:
        """Per-flow delivered and goodput rates (bit/s) between consecutive samples."""
        fs = self.flow_series
        roles = dict(zip(self.flows["flow"], self.flows["role"], strict=True))
        keep = fs["flow"].map(roles).eq(role).to_numpy()
        wide = fs[keep].pivot(index="time_s", columns="flow", values="goodput_bytes")
        wide = wide.loc[:, wide.columns.isin(self.flows["flow"][self.flows["role"] == role])]
        dt = np.diff(wide.index.to_numpy(), prepend=np.nan)
        rates = wide.diff().mul(8.0).div(dt, axis=0).iloc[1:]
        rates.columns = rates.columns.astype(str)
        return rates

    def class_throughput(self) -> pd.DataFrame:
        """Goodput (bit/s) between consecutive samples summed per class: the source kind of the
        data flows (``tcp``, ``cbr``, ``web``, ``http``, ...)."""
        rates = self.throughput()
        kinds = dict(zip(self.flows["flow"].astype(str), self.flows["kind"], strict=True))
        return rates.T.groupby(rates.columns.map(kinds)).sum().T

    def save(self, out_dir: str | Path) -> Path:
        """Writes summary.json and one Parquet file per table into ``out_dir``.

        Files are written to a temporary directory first and moved into place only when all of
        them are complete; ``summary.json`` is moved last.
        """
        out = Path(out_dir)
        out.parent.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=f".{out.name}.", dir=out.parent))
        try:
            for name in TABLES:
                frame: pd.DataFrame = getattr(self, name)
                frame.to_parquet(staging / f"{name}.parquet", index=False, compression="zstd")
            text = json.dumps(self.summary, indent=2, sort_keys=True) + "\n"
            (staging / "summary.json").write_text(text, encoding="utf-8")
            out.mkdir(exist_ok=True)
            for name in [*(f"{t}.parquet" for t in TABLES), "summary.json"]:
                os.replace(staging / name, out / name)
        finally:
            shutil.rmtree(staging, ignore_errors=True)
        return out

    @classmethod
    def load(cls, out_dir: str | Path) -> Results:
        """Reads results saved by :meth:`save`."""
        out = Path(out_dir)
        summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
        frames = {name: pd.read_parquet(out / f"{name}.parquet") for name in TABLES}
        return cls(summary=summary, **frames)

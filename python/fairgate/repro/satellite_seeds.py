"""Repetitions over seeds in the satellite reproduction.

The source ran every setting once and printed no intervals [Byun07, ch. 4-6]; the full run
repeats each packet-level case with seeds 1-3 (``SEEDS``). The tables and the acceptance
checks use the mean over the seeds, each table value carries its 95% Student-t interval
(``fairgate.sweeps.stats.repetitions``), and the figures, the drop raster and the per-flow
scatter show seed 1. ``satellite_runs.csv`` holds one row per run (``case``, ``seed``),
``satellite_seeds.csv`` the mean, std and interval of every scalar per case.
"""

from __future__ import annotations

import copy
import math
from typing import Any

import pandas as pd

from fairgate.sweeps.stats import repetitions

CLUSTERING = ("mean_run", "longest_run", "gap_cv")


def split_key(key: str, suffix: str) -> tuple[str, int]:
    """('ch4:RED 4 seed 2' -> ('ch4:RED 4', 2)); a key without the suffix is seed 1."""
    if suffix in key:
        case, seed = key.rsplit(suffix, 1)
        return case, int(seed)
    return key, 1


def summary(table: pd.DataFrame) -> pd.DataFrame:
    """Per case (``table``: one row per run with ``case`` and ``seed``): runs, mean, std and
    95% interval of every scalar."""
    return repetitions(table, ["case"])


def _set(run: dict[str, Any], column: str, value: float) -> None:
    """Writes one scalar of the runs table back into a run's nested value; the per-flow
    scalars only into runs that measure them (chapter 5: the table of every chapter has
    their columns, empty for the other chapters' runs)."""
    if column.startswith("drop_") and column[5:] in CLUSTERING:
        run["clustering"][column[5:]] = value
    elif column == "per_flow_std_bps" or column.startswith("udp"):
        if "per_flow" in run:
            per_flow = run["per_flow"]
            if column == "per_flow_std_bps":
                per_flow["std_bps"] = value
            else:
                per_flow["udp"][column] = value
    else:
        run[column] = value


def averaged(runs: dict[str, Any], stats: pd.DataFrame, chapter: int) -> dict[str, Any]:
    """The chapter's seed-1 runs with every scalar replaced by its mean over the seeds and a
    ``ci`` entry {scalar: (low, high)}; runs without repetitions are returned unchanged."""
    out = dict(runs)
    prefix = f"ch{chapter}:"
    for row in stats.itertuples(index=False):
        case = str(row.case)
        name = case[len(prefix) :]
        if not case.startswith(prefix) or name not in runs or row.runs < 2:
            continue
        run = copy.deepcopy(runs[name])
        run["ci"] = {}
        for column in stats.columns:
            if not column.endswith("_mean"):
                continue
            metric = column[: -len("_mean")]
            _set(run, metric, float(getattr(row, column)))
            low, high = getattr(row, f"{metric}_ci_low"), getattr(row, f"{metric}_ci_high")
            run["ci"][metric] = (float(low), float(high))
        run["seeds"] = int(row.runs)
        out[name] = run
    return out


def interval_note(runs: dict[str, Any], name: str, metric: str, scale: float = 1.0) -> str:
    """'95% CI [low, high]' of ``metric`` of run ``name`` (times ``scale``), or ''."""
    ci = runs.get(name, {}).get("ci", {}).get(metric)
    if ci is None or any(math.isnan(v) for v in ci):
        return ""
    low, high = ci[0] * scale, ci[1] * scale
    digits = 0 if max(abs(low), abs(high)) >= 1000 else 3
    return f"95% CI [{low:,.{digits}f}, {high:,.{digits}f}] over {runs[name]['seeds']} seeds"

"""Repetitions: mean, sample standard deviation and a Student-t confidence interval over
seeds for every numeric metric."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

NOT_METRICS = frozenset({"seed", "attempts"})


def metric_columns(frame: pd.DataFrame, by: Sequence[str]) -> list[str]:
    """Numeric columns that are neither grouping keys nor bookkeeping (seed, attempts)."""
    return [
        c
        for c in frame.columns
        if c not in by
        and c not in NOT_METRICS
        and pd.api.types.is_numeric_dtype(frame[c])
        and not pd.api.types.is_bool_dtype(frame[c])
    ]


def repetitions(
    frame: pd.DataFrame,
    by: Sequence[str],
    metrics: Sequence[str] | None = None,
    confidence: float = 0.95,
) -> pd.DataFrame:
    """Per group of ``by``: ``runs``, then ``M_mean``, ``M_std`` (n - 1), ``M_ci_low`` and
    ``M_ci_high`` for every metric M. The interval is mean +- t(1 - a/2, n - 1) std / sqrt(n)
    over the runs with a value; with fewer than two it is NaN. Groups keep first-seen order."""
    by = list(by)
    metrics = list(metrics) if metrics is not None else metric_columns(frame, by)
    if by:
        grouped = frame.groupby(by, sort=False, dropna=False, observed=True)
    else:
        grouped = frame.groupby(np.zeros(len(frame), dtype=int), sort=False)
    from scipy import stats  # 0.5 s to import: only when intervals are asked for, not per command

    values = grouped[metrics]
    mean, std, count = values.mean(), values.std(ddof=1), values.count()
    quantile = stats.t.ppf(0.5 + confidence / 2, count.where(count >= 2) - 1)
    half = std * quantile / np.sqrt(count)
    out = pd.DataFrame({"runs": grouped.size()})
    for m in metrics:
        out[f"{m}_mean"] = mean[m]
        out[f"{m}_std"] = std[m]
        out[f"{m}_ci_low"] = mean[m] - half[m]
        out[f"{m}_ci_high"] = mean[m] + half[m]
    return out.reset_index(drop=not by)

"""Repetitions: mean, sample standard deviation and a Student-t confidence interval over
seeds for every numeric metric."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from fairgate import checks
from fairgate._core import ScenarioError
from fairgate.checks import shown

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


def _columns(frame: pd.DataFrame, names: object, argument: str, numeric: bool = False) -> list[str]:
    """``names`` (one column's name or a list of them) as a list, each a column of ``frame``
    (and numeric when ``numeric``); otherwise ScenarioError naming ``argument``."""
    listed = [names] if isinstance(names, str) else names
    if not isinstance(listed, list | tuple | pd.Index | np.ndarray):
        raise ScenarioError(
            f"{argument}: got {shown(names)}, expected a column name or a list of them"
        )
    for name in listed:
        if not isinstance(name, str) or name not in frame.columns:
            known = ", ".join(shown(c) for c in frame.columns[:12])
            raise ScenarioError(
                f"{argument}: got {shown(name)}, expected a column of the frame ({known})"
            )
        if numeric and not pd.api.types.is_numeric_dtype(frame[name]):
            raise ScenarioError(f"{argument}: column {shown(name)} is not numeric")
    return list(listed)


def repetitions(
    frame: pd.DataFrame,
    by: Sequence[str],
    metrics: Sequence[str] | None = None,
    confidence: float = 0.95,
) -> pd.DataFrame:
    """Per group of ``by``: ``runs``, then ``M_mean``, ``M_std`` (n - 1), ``M_ci_low`` and
    ``M_ci_high`` for every metric M. The interval is mean +- t(1 - a/2, n - 1) std / sqrt(n)
    over the runs with a value; with fewer than two it is NaN. Groups keep first-seen order.
    ``by`` and ``metrics`` name columns of ``frame`` (one name or a list), ``confidence`` lies
    in (0, 1); anything else raises ScenarioError naming the argument."""
    if not isinstance(frame, pd.DataFrame):
        raise ScenarioError(f"frame: got {shown(frame)}, expected a pandas DataFrame")
    by = _columns(frame, by, "by")
    metrics = (
        _columns(frame, metrics, "metrics", numeric=True)
        if metrics is not None
        else metric_columns(frame, by)
    )
    checks.number("confidence", confidence, 0, 1, low_open=True, high_open=True)
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

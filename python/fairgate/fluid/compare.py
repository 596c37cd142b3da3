"""What the fluid models report [Byun07, §4.5, §6.5]: the transmit-queue improvement of AVQRED over
RED beside the packet-level simulation's and the paper's, and the υ ≡ 0 ablation of chapter 6.

Improvement is the relative change (AVQRED − RED) / RED in percent, so a reduction is negative;
the paper's emulation gives about −50.6 % (mean) and −17.2 % (std); its model values are not
printed. Statistics skip a warm-up (default 5 s). Decisions: docs/models/fluid.md.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from fairgate import checks
from fairgate._core import ScenarioError
from fairgate.fluid.fourier import FourierSeries
from fairgate.fluid.model import FluidInputs, FluidParams, inputs_argument, solve

PAPER_IMPROVEMENT = {"mean": -50.6, "std": -17.2}
WARMUP_S = 5.0


def queue_stats(solution: pd.DataFrame, warmup_s: float = WARMUP_S) -> dict[str, float]:
    """Mean and standard deviation of the transmit queue q (packets) after ``warmup_s``."""
    if not isinstance(solution, pd.DataFrame) or not {"time_s", "q"} <= set(solution.columns):
        raise ScenarioError(
            f"solution: got {checks.shown(solution)}, expected the frame fairgate.fluid.solve "
            "returns (columns `time_s` and `q`)"
        )
    warmup_s = checks.number("warmup_s", warmup_s)
    q = solution.loc[solution["time_s"] >= warmup_s, "q"]
    if q.empty:
        last = solution["time_s"].iloc[-1] if len(solution) else 0.0
        raise ScenarioError(f"warmup_s: {warmup_s} s leaves no samples in a run of {last} s")
    return {"mean": float(q.mean()), "std": float(q.std(ddof=0))}


STATISTICS = ("mean", "std")


def improvement(red: Mapping[str, float], avqred: Mapping[str, float]) -> dict[str, float]:
    """Relative change in percent of each statistic from RED to AVQRED; NaN where RED's value
    is 0 (a change relative to nothing has no value: a constant queue has a std of 0)."""
    before, after = _statistics(red, "red"), _statistics(avqred, "avqred")
    return {
        key: 100.0 * (after[key] - before[key]) / before[key] if before[key] != 0 else math.nan
        for key in STATISTICS
    }


def _statistics(stats: object, name: str) -> dict[str, float]:
    """``stats``' mean and std as finite numbers (as :func:`queue_stats` gives them)."""
    if not isinstance(stats, Mapping) or not all(key in stats for key in STATISTICS):
        raise ScenarioError(
            f"{name}: got {checks.shown(stats)}, expected a mapping with `mean` and `std` "
            "(as fairgate.fluid.queue_stats returns)"
        )
    return {key: checks.number(f"{name}[{key!r}]", stats[key]) for key in STATISTICS}


def model_improvement(
    params: FluidParams | None = None, inputs: FluidInputs | None = None, chapter: int = 4
) -> dict[str, float]:
    """Solves RED and AVQRED and returns AVQRED's improvement in queue mean and std."""
    red = queue_stats(solve("red", params, inputs, chapter))
    avqred = queue_stats(solve("avqred", params, inputs, chapter))
    return improvement(red, avqred)


def improvement_table(
    model: Mapping[str, float],
    simulation: Mapping[str, float] | None = None,
    paper: Mapping[str, float] = PAPER_IMPROVEMENT,
) -> pd.DataFrame:
    """Model, simulation and paper improvements side by side, with a same-sign check per row
    (None where the model's change has no value)."""
    model_pct, paper_pct = _changes(model, "model"), _changes(paper, "paper")
    simulated = None if simulation is None else _changes(simulation, "simulation")
    rows = []
    for key in STATISTICS:
        rows.append(
            {
                "statistic": key,
                "model_pct": model_pct[key],
                "simulation_pct": None if simulated is None else simulated[key],
                "paper_pct": paper_pct[key],
                "model_same_sign_as_paper": None
                if math.isnan(model_pct[key])
                else (model_pct[key] < 0) == (paper_pct[key] < 0),
            }
        )
    return pd.DataFrame(rows)


def _changes(changes: object, name: str) -> dict[str, float]:
    """``changes``' mean and std in percent: numbers, NaN where a change has no value."""
    if not isinstance(changes, Mapping) or not all(key in changes for key in STATISTICS):
        raise ScenarioError(
            f"{name}: got {checks.shown(changes)}, expected a mapping with `mean` and `std` "
            "(as fairgate.fluid.improvement returns)"
        )
    values = {}
    for key in STATISTICS:
        value = changes[key]
        if isinstance(value, float) and math.isnan(value):
            values[key] = math.nan
        else:
            values[key] = checks.number(f"{name}[{key!r}]", value)
    return values


def delay_sweep(
    scheme: str,
    delays: Sequence[float],
    params: FluidParams | None = None,
    inputs: FluidInputs | None = None,
    chapter: int = 4,
) -> pd.DataFrame:
    """Queue mean and std of ``scheme`` with the measured ω and υ but a constant PEP delay d
    (model units) in place of the measured d(t): how much of the result the delay decides."""
    base = inputs_argument(inputs)
    if isinstance(delays, str | bytes) or not isinstance(delays, Sequence | np.ndarray):
        raise ScenarioError(
            f"delays: got {checks.shown(delays)}, expected a list of delays (units)"
        )
    rows = []
    for index, delay in enumerate(delays):
        delay = checks.number(f"delays[{index}]", delay, 0.0)
        variant = FluidInputs(
            omega=base.omega, delay=FourierSeries.constant(delay), upsilon=base.upsilon
        )
        stats = queue_stats(solve(scheme, params, variant, chapter))
        rows.append({"delay_units": float(delay), "q_mean": stats["mean"], "q_std": stats["std"]})
    return pd.DataFrame(rows)


def input_percentiles(
    series: FourierSeries, percentiles: Sequence[float] = (5.0, 50.0, 95.0), step: float = 0.1
) -> dict[float, float]:
    """Percentiles of a fitted input over one period, sampled every ``step`` units (the spread
    of the measured d(t) beside the constant delays of :func:`delay_sweep`)."""
    if not isinstance(series, FourierSeries):
        raise ScenarioError(f"series: got {checks.shown(series)}, expected a FourierSeries")
    checks.number("step", step, 0.0, series.period, low_open=True)
    if isinstance(percentiles, str | bytes) or not isinstance(percentiles, Sequence | np.ndarray):
        raise ScenarioError(
            f"percentiles: got {checks.shown(percentiles)}, expected a list of numbers in [0, 100]"
        )
    wanted = [checks.number(f"percentiles[{i}]", q, 0.0, 100.0) for i, q in enumerate(percentiles)]
    values = series(np.arange(0.0, series.period, step))
    return {q: float(np.percentile(values, q)) for q in wanted}


def upsilon_ablation(
    params: FluidParams | None = None, inputs: FluidInputs | None = None
) -> pd.DataFrame:
    """Chapter 6, RED and AVQRED with the measured υ(t) and with υ ≡ 0: queue mean and std."""
    base = inputs_argument(inputs)
    rows = []
    for label, variant in (("measured", base), ("zero", base.without_new_connections())):
        for scheme in ("red", "avqred"):
            stats = queue_stats(solve(scheme, params, variant, chapter=6))
            rows.append(
                {"scheme": scheme, "upsilon": label, "q_mean": stats["mean"], "q_std": stats["std"]}
            )
    return pd.DataFrame(rows)


__all__ = [
    "PAPER_IMPROVEMENT",
    "delay_sweep",
    "improvement",
    "improvement_table",
    "input_percentiles",
    "model_improvement",
    "queue_stats",
    "upsilon_ablation",
]

"""What the fluid models report [Byun07, §4.5, §6.5]: the transmit-queue improvement of AVQRED over
RED beside the packet-level simulation's and the paper's, and the υ ≡ 0 ablation of chapter 6.

Improvement is the relative change (AVQRED − RED) / RED in percent, so a reduction is negative;
the paper's emulation gives about −50.6 % (mean) and −17.2 % (std); its model values are not
printed. Statistics skip a warm-up (default 5 s). Decisions: docs/models/fluid.md.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from fairgate._core import ScenarioError
from fairgate.fluid.fourier import FourierSeries
from fairgate.fluid.model import FluidInputs, FluidParams, solve

PAPER_IMPROVEMENT = {"mean": -50.6, "std": -17.2}
WARMUP_S = 5.0


def queue_stats(solution: pd.DataFrame, warmup_s: float = WARMUP_S) -> dict[str, float]:
    """Mean and standard deviation of the transmit queue q (packets) after ``warmup_s``."""
    q = solution.loc[solution["time_s"] >= warmup_s, "q"]
    if q.empty:
        raise ScenarioError(
            f"warmup_s: {warmup_s} s leaves no samples in a run of {solution['time_s'].iloc[-1]} s"
        )
    return {"mean": float(q.mean()), "std": float(q.std(ddof=0))}


def improvement(red: Mapping[str, float], avqred: Mapping[str, float]) -> dict[str, float]:
    """Relative change in percent of each statistic from RED to AVQRED."""
    return {key: 100.0 * (avqred[key] - red[key]) / red[key] for key in ("mean", "std")}


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
    """Model, simulation and paper improvements side by side, with a same-sign check per row."""
    rows = []
    for key in ("mean", "std"):
        sim = None if simulation is None else float(simulation[key])
        rows.append(
            {
                "statistic": key,
                "model_pct": float(model[key]),
                "simulation_pct": sim,
                "paper_pct": float(paper[key]),
                "model_same_sign_as_paper": (model[key] < 0) == (paper[key] < 0),
            }
        )
    return pd.DataFrame(rows)


def delay_sweep(
    scheme: str,
    delays: Sequence[float],
    params: FluidParams | None = None,
    inputs: FluidInputs | None = None,
    chapter: int = 4,
) -> pd.DataFrame:
    """Queue mean and std of ``scheme`` with the measured ω and υ but a constant PEP delay d
    (model units) in place of the measured d(t): how much of the result the delay decides."""
    base = inputs or FluidInputs()
    rows = []
    for delay in delays:
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
    if not 0 < step <= series.period:
        raise ScenarioError(f"step: expected a number in (0, {series.period}], got {step}")
    values = series(np.arange(0.0, series.period, step))
    return {float(q): float(np.percentile(values, q)) for q in percentiles}


def upsilon_ablation(
    params: FluidParams | None = None, inputs: FluidInputs | None = None
) -> pd.DataFrame:
    """Chapter 6, RED and AVQRED with the measured υ(t) and with υ ≡ 0: queue mean and std."""
    base = inputs or FluidInputs()
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

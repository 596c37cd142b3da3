"""Fourier-series inputs of the fluid models: ω(t), d(t) and υ(t) [Byun07, §4.4, §6.4].

The source fits each input to 500 points measured every 100 ms (50 s) and does not print the
coefficients. We fit a truncated series with the fundamental period fixed to the span of the data
by linear least squares; ``HARMONICS = 8`` is the largest series of the curve-fitting tool the
source used (its ``fourier8`` model). Decisions and validation: ``docs/models/fluid.md``.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from fairgate import checks
from fairgate._core import ScenarioError
from fairgate.runner import check_out_file

HARMONICS = 8
SAMPLE_UNITS = 1.0  # one sample per model time unit (100 ms)


@dataclass(frozen=True)
class FourierSeries:
    """f(t) = a0 + Σ_k a_k cos(kωt) + b_k sin(kωt), ω = 2π/period, t in model units."""

    period: float
    a0: float
    cos: tuple[float, ...]
    sin: tuple[float, ...]

    def __post_init__(self) -> None:
        if len(self.cos) != len(self.sin):
            raise ScenarioError(
                "fourier: expected the same number of cosine and sine terms, "
                f"got {len(self.cos)} and {len(self.sin)}"
            )
        checks.number("fourier.period", self.period, 0, low_open=True)
        for name, terms in (("a0", (self.a0,)), ("cos", self.cos), ("sin", self.sin)):
            for term in terms:
                checks.number(f"fourier.{name}", term)

    def __call__(self, t: np.ndarray | float) -> np.ndarray:
        """Evaluates the series at times ``t`` (model units)."""
        times = np.asarray(t, dtype=float)
        orders = np.arange(1, len(self.cos) + 1)
        phase = np.multiply.outer(times, orders) * (2.0 * np.pi / self.period)
        return self.a0 + np.cos(phase) @ np.asarray(self.cos) + np.sin(phase) @ np.asarray(self.sin)

    @classmethod
    def constant(cls, value: float, period: float = 500.0) -> FourierSeries:
        """A series that is ``value`` everywhere (the υ ≡ 0 ablation uses ``constant(0.0)``)."""
        return cls(period=period, a0=float(value), cos=(), sin=())

    def to_dict(self) -> dict:
        """Plain-JSON form, stored beside results."""
        return {"period": self.period, "a0": self.a0, "cos": list(self.cos), "sin": list(self.sin)}

    @classmethod
    def from_dict(cls, data: dict) -> FourierSeries:
        """Inverse of :meth:`to_dict`."""
        return cls(
            period=float(data["period"]),
            a0=float(data["a0"]),
            cos=tuple(float(x) for x in data["cos"]),
            sin=tuple(float(x) for x in data["sin"]),
        )


def fit_fourier(
    series: pd.Series | np.ndarray, harmonics: int = HARMONICS, step: float = SAMPLE_UNITS
) -> FourierSeries:
    """Least-squares fit of a truncated Fourier series to samples taken every ``step`` units.

    The period is the span of the samples (len · step), so the fitted input repeats with it.
    """
    given = harmonics
    harmonics = int(checks.number("harmonics", harmonics, 0, integer=True))
    checks.number("step", step, 0, low_open=True)
    try:
        values = np.asarray(series, dtype=float)
    except (TypeError, ValueError):
        raise ScenarioError(
            f"`series`: got {checks.shown(series)}, expected a 1-D series of numbers"
        ) from None
    if values.ndim != 1:
        raise ScenarioError(
            f"`series`: got an array of shape {values.shape}, expected a 1-D series of numbers"
        )
    if len(values) < 2 * harmonics + 1:
        raise ScenarioError(
            f"`harmonics`: got {checks.shown(given)}, which needs at least "
            f"2 x harmonics + 1 samples; the series has {len(values)}: expected at most "
            f"{max(len(values) - 1, 0) // 2} harmonics, or a longer series"
        )
    if not np.all(np.isfinite(values)):
        raise ScenarioError("the series to fit holds NaN or infinite values")
    period = len(values) * step
    if not math.isfinite(period):
        raise ScenarioError(
            f"`step`: got {checks.shown(step)}, so the span of {len(values)} samples overflows; "
            "expected a step whose span (samples x step) a float holds"
        )
    times = np.arange(len(values)) * step
    orders = np.arange(1, harmonics + 1)
    phase = np.multiply.outer(times, orders) * (2.0 * np.pi / period)
    design = np.hstack([np.ones((len(values), 1)), np.cos(phase), np.sin(phase)])
    coef, *_ = np.linalg.lstsq(design, values, rcond=None)
    return FourierSeries(
        period=period,
        a0=float(coef[0]),
        cos=tuple(float(x) for x in coef[1 : harmonics + 1]),
        sin=tuple(float(x) for x in coef[harmonics + 1 :]),
    )


def save_inputs(inputs: dict[str, FourierSeries], path: str | Path) -> Path:
    """Writes named input series (e.g. ``omega``, ``delay``, ``upsilon``) as JSON; a path
    that cannot take the file (a folder, in a missing folder) raises ScenarioError naming
    ``path`` (it was a FileNotFoundError traceback)."""
    if not isinstance(inputs, dict) or not all(
        isinstance(s, FourierSeries) for s in inputs.values()
    ):
        raise ScenarioError(
            f"inputs: got {checks.shown(inputs)}, expected a dict of FourierSeries by name "
            "(as measure_inputs returns)"
        )
    out = check_out_file(path, "path")
    text = json.dumps({name: s.to_dict() for name, s in inputs.items()}, indent=2, sort_keys=True)
    out.write_text(text + "\n", encoding="utf-8")
    return out


def load_inputs(path: str | Path) -> dict[str, FourierSeries]:
    """Reads series written by :func:`save_inputs`; a file that does not hold them raises
    ScenarioError naming it and what is wrong."""
    expected = "expected a JSON object of series {period, a0, cos, sin} written by save_inputs"
    try:
        data = json.loads(checks.small_text(checks.path_value(path, "path")))
        return {name: FourierSeries.from_dict(entry) for name, entry in data.items()}
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as err:
        raise ScenarioError(
            f"{path}: cannot be read ({type(err).__name__}: {err}); {expected}"
        ) from None


__all__ = ["HARMONICS", "FourierSeries", "fit_fourier", "load_inputs", "save_inputs"]

"""Fluid (delay-differential) models of a satellite gateway with a PEP [Byun07, §4.4, §6.4].

Chapter 4, (4.1)-(4.5): TCP aggregate rate λ, transmit queue q fed through the PEP delay d(t),
virtual queue v, RED average w, marking probability p. Chapter 6, (6.1)-(6.6): buffer flow
control (no drops) with the new-connection rate n and the new-connection fraction υ(t).
Solver: method of steps with forward Euler at the source's step δ = 1 ms (0.01 units); delayed
values come from the stored history by linear interpolation. Decisions (marking branches outside
the band, the decrease term, units, projection onto q, v ≥ 0 and p ∈ [0, 1]): docs/models/fluid.md.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, fields
from typing import NoReturn

import numpy as np
import pandas as pd

from fairgate import checks
from fairgate._core import ScenarioError
from fairgate.fluid.equilibrium import FluidState, equilibrium
from fairgate.fluid.fourier import FourierSeries

SCHEMES = ("red", "avqred", "avq", "none")
STARTS = ("equilibrium", "empty")
"""Initial state: the rest point with the inputs at their means (``fluid/equilibrium.py``), or
λ = τμ with empty queues and p = 0 (the only start of the scheme ``none``, which has no rest
point)."""
PACKET_BYTES = 1400.0
UNIT_S = 0.1  # one model time unit is 100 ms
RED_INTERVAL = 0.01
"""δ of (4.4): RED's average is updated every 1 ms, 0.01 units, whatever the solver's step."""


@dataclass(frozen=True)
class FluidParams:
    """Parameters in model units (time 100 ms, rates in packets per unit); defaults per source."""

    connections: int = 400
    rtt: float = 6.0
    service_rate: float = 20e6 / 8.0 / PACKET_BYTES * UNIT_S
    target_utilisation: float = 1.0
    min_th: float = 60.0
    max_th: float = 120.0
    red_weight: float = 0.1
    red_max_p: float = 0.7
    avqred_max_p: float = 1.0
    max_rcv_win: float = 16000.0 / PACKET_BYTES / 10.0
    decrease: float = 1.0 - 0.95
    step: float = 0.01
    horizon: float = 500.0
    start: str = "equilibrium"

    def __post_init__(self) -> None:
        # numpy scalars become Python numbers: a numpy integer wraps silently in arithmetic
        for spec in fields(self):
            value = getattr(self, spec.name)
            if isinstance(value, np.generic):
                object.__setattr__(self, spec.name, value.item())

    def validate(self) -> None:
        """Raises ScenarioError naming the first parameter out of its range (``RANGES``)."""
        for name, bounds in RANGES.items():
            checks.number(f"fluid.{name}", getattr(self, name), **bounds)  # type: ignore[arg-type]
        if not self.min_th < self.max_th:
            raise ScenarioError(
                f"`fluid.max_th`: got {self.max_th}, expected more than min_th = {self.min_th}"
            )
        if self.start not in STARTS:
            raise ScenarioError(
                f"`fluid.start`: got {checks.shown(self.start)}, "
                f"expected one of {', '.join(STARTS)}"
            )
        steps = self.horizon / self.step
        if steps > MAX_STEPS:
            raise ScenarioError(
                f"`fluid.step`: got {self.step}, which makes {steps:.3g} steps of the horizon "
                f"{self.horizon}; expected at most {MAX_STEPS:,} steps (a larger step or a "
                "shorter horizon)"
            )


MAX_STEPS = 10_000_000
"""The most steps a solution takes: about 3 minutes and 1 GB (the source's 500 units at its
1 ms step are 50,000)."""

RANGES: dict[str, dict[str, float | bool]] = {
    "connections": {"low": 1, "high": 1e12, "integer": True},
    "rtt": {"low": 1e-11, "high": 1.8e8},  # 1 ps to 1.8e7 s, in units: what a scenario takes
    "service_rate": {"low": 0, "high": 1e12, "low_open": True},
    "target_utilisation": {"low": 0, "high": 1, "low_open": True},
    "min_th": {"low": 0},
    "max_th": {"low": 0, "low_open": True},
    "red_weight": {"low": 0, "high": 1, "low_open": True, "high_open": True},
    "red_max_p": {"low": 0, "high": 1, "low_open": True},
    "avqred_max_p": {"low": 0, "high": 1, "low_open": True},
    "max_rcv_win": {"low": 0, "low_open": True},
    "decrease": {"low": 0, "high": 1, "low_open": True, "high_open": True},
    "step": {"low": 0, "low_open": True},
    "horizon": {"low": 0, "low_open": True},
}
"""Each numeric parameter's bounds (``checks.number``'s keywords). The upper bounds of
``connections`` and ``service_rate`` (1e12: 1 Tb/s of 1-byte packets is 1.25e10 a unit) and
both of ``rtt`` keep the model's squares (m/R², λ²) finite; past them it overflowed."""


@dataclass(frozen=True)
class FluidInputs:
    """Measured inputs: offered-load ratio ω(t), PEP delay d(t) (units), new fraction υ(t)."""

    omega: FourierSeries = field(default_factory=lambda: FourierSeries.constant(1.0))
    delay: FourierSeries = field(default_factory=lambda: FourierSeries.constant(0.0))
    upsilon: FourierSeries = field(default_factory=lambda: FourierSeries.constant(0.0))

    def without_new_connections(self) -> FluidInputs:
        """The υ ≡ 0 ablation of chapter 6."""
        return FluidInputs(omega=self.omega, delay=self.delay, upsilon=FourierSeries.constant(0.0))


def marking_rate(
    scheme: str, p: float, w: float, v: float, dw: float, dv: float, prm: FluidParams
) -> float:
    """dp/dt of (4.5): the linear-profile slope inside [min_th, max_th], relaxation outside."""
    if scheme == "none":
        return 0.0
    if scheme == "avq":
        return -p if v < (prm.max_th - prm.min_th) / 2.0 else 1.0 - p
    level, slope, max_p = (w, dw, prm.red_max_p) if scheme == "red" else (v, dv, prm.avqred_max_p)
    if level < prm.min_th:
        return -p
    if level > prm.max_th:
        return 1.0 - p
    return max_p / (prm.max_th - prm.min_th) * slope


class _History:
    """Values of one state variable on the step grid, read at past times by interpolation."""

    def __init__(self, steps: int, step: float, initial: float) -> None:
        self.values = np.empty(steps + 1)
        self.values[0] = initial
        self.step = step

    def at(self, time: float, latest: int) -> float:
        if time <= 0.0:
            return float(self.values[0])
        pos = min(time / self.step, float(latest))
        low = int(pos)
        frac = pos - low
        if frac == 0.0 or low >= latest:
            return float(self.values[low])
        return float(self.values[low] * (1.0 - frac) + self.values[low + 1] * frac)


def delayed_clock(times: np.ndarray, delay: np.ndarray) -> np.ndarray:
    """t − d(t) with d ≥ 0, made non-decreasing: what reaches the transmit queue at t left the
    receive queue at this time, and a FIFO delay never delivers out of order (a fitted series
    may swing faster than one unit per unit)."""
    return np.maximum.accumulate(times - np.maximum(delay, 0.0))


def _check(scheme: str, chapter: int, prm: FluidParams) -> None:
    if not isinstance(scheme, str) or scheme not in SCHEMES:
        raise ScenarioError(
            f"`fluid.scheme`: got {checks.shown(scheme)}, expected one of {', '.join(SCHEMES)}"
        )
    if chapter not in (4, 6) or isinstance(chapter, bool):
        raise ScenarioError(f"`fluid.chapter`: got {checks.shown(chapter)}, expected 4 or 6")
    prm.validate()
    _check_stable(prm, chapter)


EULER_LIMIT = 2.0
"""Forward Euler on dx/dt = -g (x - target) is stable only for step · g below 2: above, each
step overshoots by more than it corrects, and x grows without bound (to inf and NaN, or to
finite garbage of 1e100 in a short run)."""


def _check_stable(prm: FluidParams, chapter: int) -> None:
    """Refuses a step at which a linear term of the model diverges under forward Euler: RED's
    average w (gain ln(1/(1 - red_weight))/δ) and, in chapter 6, the new connections n
    (gain 1 per unit)."""
    red = prm.step * -math.log(1.0 - prm.red_weight) / RED_INTERVAL
    if red >= EULER_LIMIT:
        changed = "step" if prm.step != FluidParams.step else "red_weight"
        raise ScenarioError(
            f"`fluid.{changed}`: got {getattr(prm, changed)}, at which RED's average diverges "
            f"(step {prm.step} x ln(1/(1 - red_weight {prm.red_weight})) / {RED_INTERVAL} = "
            f"{red:.3g}); expected below {EULER_LIMIT:g} (a smaller red_weight or step)"
        )
    if chapter == 6 and prm.step >= EULER_LIMIT:
        raise ScenarioError(
            f"`fluid.step`: got {prm.step}, at which the new-connection term n diverges; "
            f"expected below {EULER_LIMIT:g} units"
        )


def inputs_argument(inputs: object) -> FluidInputs:
    """``inputs``, or FluidInputs() for None; ScenarioError for anything else (``0`` was
    read as "the default inputs" where a caller wrote ``inputs or FluidInputs()``)."""
    if inputs is None:
        return FluidInputs()
    if not isinstance(inputs, FluidInputs):
        raise ScenarioError(f"inputs: got {checks.shown(inputs)}, expected FluidInputs or None")
    return inputs


def solve(
    scheme: str,
    params: FluidParams | None = None,
    inputs: FluidInputs | None = None,
    chapter: int = 4,
) -> pd.DataFrame:
    """Integrates the chapter-4 or chapter-6 model; one row per step.

    Columns: ``t`` (units), ``time_s``, ``lam``, ``q``, ``v``, ``w``, ``p`` and, for chapter 6,
    ``n`` and ``upsilon``.
    """
    prm = FluidParams() if params is None else params
    inp = inputs_argument(inputs)
    if not isinstance(prm, FluidParams):
        raise ScenarioError(f"params: got {checks.shown(prm)}, expected FluidParams or None")
    _check(scheme, chapter, prm)
    steps = int(math.floor(prm.horizon / prm.step + 1e-9))
    times = np.arange(steps + 1) * prm.step
    late = delayed_clock(times, inp.delay(times))
    delay = times - late
    omega = np.maximum(inp.omega(times), 0.0)
    before = max(inp.omega.a0, 0.0)
    omega_late = np.where(late < 0.0, before, np.maximum(inp.omega(late), 0.0))
    floor_upsilon = 1.0 - 1.0 / prm.connections
    upsilon = (
        np.clip(inp.upsilon(times), 0.0, floor_upsilon) if chapter == 6 else np.zeros_like(times)
    )
    with np.errstate(all="ignore"):  # a value past the floats is refused below, not warned of
        try:
            start = _initial_state(scheme, prm, chapter, inp)
            state = _integrate(
                scheme, prm, chapter, start, times, delay, omega, omega_late, upsilon
            )
        except (OverflowError, ZeroDivisionError):
            _not_finite(prm, "an intermediate value", None)
    frame = pd.DataFrame({"t": times, "time_s": times * UNIT_S, **state})
    if chapter == 6:
        frame["upsilon"] = upsilon
    _check_finite(frame, prm)
    return frame


def _check_finite(frame: pd.DataFrame, prm: FluidParams) -> None:
    """Refuses a solution that left the finite numbers: parameters each within its range
    might still together overflow (a search over the ranges' edges found none), and a
    solution holding inf or NaN is never returned as if complete."""
    values = frame.to_numpy(dtype=float)
    finite = np.isfinite(values)
    if not finite.all():
        row, column = np.argwhere(~finite)[0]
        _not_finite(prm, f"`{frame.columns[column]}`", float(frame["t"].iloc[row]))


def _not_finite(prm: FluidParams, what: str, at: float | None) -> NoReturn:
    when = f" at t = {at:g} units" if at is not None else ""
    changed = [f"{f.name}={getattr(prm, f.name)!r}" for f in fields(prm)
               if getattr(prm, f.name) != getattr(FluidParams, f.name)]  # fmt: skip
    raise ScenarioError(
        f"`fluid`: {what} left the finite numbers{when} (inf or NaN) with the parameters "
        f"{', '.join(changed) or 'at their defaults'}; expected parameters whose products stay "
        "finite (a band max_th - min_th, a service_rate and a target_utilisation not near 0)"
    )


def _initial_state(scheme: str, prm: FluidParams, chapter: int, inp: FluidInputs) -> FluidState:
    if prm.start == "empty" or scheme == "none":
        return FluidState(lam=prm.target_utilisation * prm.service_rate, q=0.0, v=0.0, w=0.0, p=0.0)
    upsilon = min(max(inp.upsilon.a0, 0.0), 1.0 - 1.0 / prm.connections) if chapter == 6 else 0.0
    return equilibrium(
        chapter=chapter,
        m=float(prm.connections),
        rtt=prm.rtt,
        target_rate=prm.target_utilisation * prm.service_rate,
        band=(prm.min_th, prm.max_th),
        decrease=prm.decrease,
        max_rcv_win=prm.max_rcv_win,
        omega_mean=max(inp.omega.a0, 1e-9),
        upsilon_mean=upsilon,
    )


def _integrate(
    scheme: str,
    prm: FluidParams,
    chapter: int,
    start: FluidState,
    times: np.ndarray,
    delay: np.ndarray,
    omega: np.ndarray,
    omega_late: np.ndarray,
    upsilon: np.ndarray,
) -> dict[str, np.ndarray]:
    steps, h = len(times) - 1, prm.step
    lam_hist = _History(steps, h, start.lam)
    p_hist = _History(steps, h, start.p)
    lam, q, v, w, n, p = start.lam, start.q, start.v, start.w, start.n, start.p
    out = {
        name: np.full(steps + 1, value) for name, value in zip("qvwn", (q, v, w, n), strict=True)
    }
    m, mu = float(prm.connections), prm.service_rate
    red_gain = math.log(1.0 - prm.red_weight) / RED_INTERVAL
    for k in range(steps):
        t_late = times[k] - delay[k]
        lam_late, p_late = lam_hist.at(t_late, k), p_hist.at(t_late, k)
        if chapter == 4:
            dn = 0.0
            dlam = (1.0 - p) * m / prm.rtt**2 - p * lam * lam / (2.0 * m)
            dq = -mu + (1.0 - p_late) * omega_late[k] * lam_late
            dv = -prm.target_utilisation * mu + (1.0 - p) * omega[k] * lam
        else:
            old = (1.0 - upsilon[k]) * m
            dn = upsilon[k] * m * prm.max_rcv_win - n
            dlam = (1.0 - p) * old / prm.rtt**2 - p * prm.decrease * lam * lam / old + dn
            dq = -mu + omega_late[k] * lam_late
            dv = -prm.target_utilisation * mu + omega[k] * lam
        dw = red_gain * w - red_gain * q
        dp = marking_rate(scheme, p, w, v, dw, dv, prm)
        lam = max(lam + h * dlam, 0.0)
        q, v, w, n = max(q + h * dq, 0.0), max(v + h * dv, 0.0), w + h * dw, n + h * dn
        p = min(max(p + h * dp, 0.0), 1.0)
        lam_hist.values[k + 1], p_hist.values[k + 1] = lam, p
        out["q"][k + 1], out["v"][k + 1], out["w"][k + 1], out["n"][k + 1] = q, v, w, n
    state = {
        "lam": lam_hist.values,
        "q": out["q"],
        "v": out["v"],
        "w": out["w"],
        "p": p_hist.values,
    }
    if chapter == 6:
        state["n"] = out["n"]
    return state

"""Measuring the fluid models' inputs ω(t), d(t), υ(t) from a fairgate run [Byun07, §4.4, §6.4].

The source measures them every 100 ms over 50 s in a run without AQM and without a bottlenecking
transmit queue, then fits Fourier series. Here: ω from the bytes the gateway accepts from
upstream per interval (actual over mean; without a gateway, the data bytes delivered), d from
the gateway's send buffers (how long the bytes it passes on waited, first in, first out), υ
from the connections opened in each interval (births of an HTTP population, else flow starts)
over m.
Decisions: docs/models/fluid.md.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from fairgate._core import ScenarioError
from fairgate.checks import number, shown
from fairgate.fluid.fourier import FourierSeries, fit_fourier
from fairgate.fluid.model import UNIT_S
from fairgate.results import Results, results_argument

POINTS = 500


def _data_flows(results: Results) -> pd.Series:
    flows = results.flows
    return flows["flow"][flows["role"].astype(str) == "data"].astype(str)


def delivered_rate(results: Results) -> pd.Series:
    """Data bytes delivered per second in each sample interval, indexed by the interval's end."""
    series = results_argument(results).flow_series
    data = series[series["flow"].astype(str).isin(set(_data_flows(results)))]
    total = data.groupby("time_s", observed=True)["delivered_bytes"].sum().sort_index()
    times = total.index.to_numpy(dtype=float)
    rate = np.diff(total.to_numpy(dtype=float)) / np.diff(times)
    return pd.Series(rate, index=pd.Index(times[1:], name="time_s"), name="bytes_per_s")


def offered_load_ratio(
    results: Results, start_s: float = 0.0, points: int | None = None, gateway: str | None = None
) -> pd.Series:
    """ω samples: the interval's offered rate over its mean across the fit window (``points``
    samples from ``start_s``; default the whole series), so ω has mean 1 there. The offered rate
    is what ``gateway`` accepted from upstream when one is named (the load offered to it; its
    flows' delivered bytes count each split leg), else the data bytes delivered."""
    start_s, points = _window(start_s, points)
    rate = delivered_rate(results) if gateway is None else relayed_rate(results, gateway)
    window = rate[rate.index >= start_s]
    mean = (window if points is None else window.iloc[:points]).mean()
    if not mean > 0:
        raise ScenarioError("results: no data bytes offered in the fit window, so ω is undefined")
    return (rate / mean).rename("omega")


def _window(start_s: object, points: object) -> tuple[float, int | None]:
    """A fit window's start (s) and sample count (None: all), checked."""
    start = number("start_s", start_s)
    if points is None:
        return start, None
    return start, int(number("points", points, 2, integer=True))


def _gateway_sum(results: Results, gateway: str, var: str) -> pd.Series:
    if not isinstance(gateway, str):
        raise ScenarioError(f"`gateway`: got {shown(gateway)}, expected a gateway's name")
    traces = results_argument(results).traces
    rows = traces[traces["var"].astype(str) == f"{gateway}.{var}"]
    if rows.empty:
        raise ScenarioError(
            f"results.traces: no '{gateway}.{var}' samples; is '{gateway}' a gateway?"
        )
    return rows.groupby("time_s", observed=True)["value"].sum().sort_index()


def relayed_rate(results: Results, gateway: str) -> pd.Series:
    """Bytes per second the gateway accepted from upstream in each sample interval."""
    relayed = _gateway_sum(results, gateway, "relayed_bytes")
    times = relayed.index.to_numpy(dtype=float)
    rate = np.diff(relayed.to_numpy(dtype=float)) / np.diff(times)
    return pd.Series(rate, index=pd.Index(times[1:], name="time_s"), name="bytes_per_s")


def entry_times(accepted: np.ndarray, times: np.ndarray, level: np.ndarray) -> np.ndarray:
    """When the cumulative count ``accepted`` (non-decreasing, sampled at ``times``) first
    reached each ``level``, by linear interpolation; levels below the first sample map to it."""
    upper = np.clip(np.searchsorted(accepted, level, side="left"), 1, len(accepted) - 1)
    lower = upper - 1
    span = accepted[upper] - accepted[lower]
    share = np.divide(level - accepted[lower], span, out=np.ones_like(span), where=span > 0)
    return times[lower] + np.clip(share, 0.0, 1.0) * (times[upper] - times[lower])


def pep_delay(results: Results, gateway: str) -> pd.Series:
    """d samples in model units: how long the bytes the PEP passes on at each sample waited in
    its send buffers, reading them first in, first out. The bytes sent by t are those accepted,
    A(t), less those still waiting, S(t); they entered by t' with A(t') = A(t) − S(t), so
    d(t) = t − t'. Bytes sent and awaiting the satellite's acknowledgement have passed the
    transmit queue and do not count; with nothing waiting, d = 0. t − d(t) never runs
    backwards, as for any FIFO delay."""
    accepted = _gateway_sum(results, gateway, "relayed_bytes")
    waiting = _gateway_sum(results, gateway, "send_buffer").reindex(accepted.index).fillna(0.0)
    times = accepted.index.to_numpy(dtype=float)
    total = np.maximum.accumulate(accepted.to_numpy(dtype=float))
    sent = np.maximum.accumulate(np.clip(total - waiting.to_numpy(), total[0], None))
    delay = np.where(waiting.to_numpy() > 0, times - entry_times(total, times, sent), 0.0)
    delay /= UNIT_S
    return pd.Series(delay[1:], index=pd.Index(times[1:], name="time_s"), name="delay")


def cumulative_births(results: Results) -> pd.Series | None:
    """Connections opened so far by request/response workloads (their ``births`` traces), summed
    over flows per sample time; None when the run has no such workload."""
    traces = results_argument(results).traces
    births = traces[traces["var"].astype(str) == "births"]
    if births.empty:
        return None
    wide = births.pivot_table(
        index="time_s", columns="flow", values="value", aggfunc="last", observed=True
    )
    return wide.sort_index().ffill().fillna(0.0).sum(axis=1)


def _default_connections(results: Results, flows: pd.DataFrame) -> int:
    traces = results.traces
    population = traces[traces["var"].astype(str) == "population"]
    if population.empty:
        return len(flows)
    return int(population.groupby("time_s", observed=True)["value"].sum().max())


def new_connection_fraction(
    results: Results, connections: int | None = None, window: int = 1
) -> pd.Series:
    """υ samples: connections opened in the last ``window`` intervals (default: this one) over m.

    Openings are the ``births`` of request/response workloads when the run has them, else the
    data flows' start times; m defaults to the largest population traced, else all data flows.
    A ``window`` above 1 reads "new" as a stock (opened within that many intervals) rather than
    this interval's births; the reproduction uses 1 (decision: docs/models/fluid.md).
    """
    flows = results_argument(results).flows
    flows = flows[flows["role"].astype(str) == "data"]
    if connections is not None:
        m = int(number("connections", connections, 1, integer=True))
    else:
        m = _default_connections(results, flows)
    if m <= 0:  # the default: no data flow, no population traced
        raise ScenarioError(
            "results: no data flows and no population traced, so υ has no m; expected a run "
            "with data flows, or connections=M"
        )
    window = int(number("window", window, 1, integer=True))
    ends = delivered_rate(results).index.to_numpy(dtype=float)
    edges = np.concatenate([[ends[0] - (ends[1] - ends[0]) if len(ends) > 1 else 0.0], ends])
    births = cumulative_births(results)
    if births is None:
        starts = np.sort(flows["start_s"].to_numpy(dtype=float))
        opened = np.searchsorted(starts, edges, side="right").astype(float)
    else:
        opened = births.reindex(edges, method="ffill").fillna(0.0).to_numpy()
    lagged = np.concatenate([np.full(window - 1, opened[0]), opened])[: len(opened)]
    fraction = np.clip((opened[1:] - lagged[:-1]) / m, 0.0, 1.0)
    return pd.Series(fraction, index=pd.Index(ends, name="time_s"), name="upsilon")


def sample_step_units(samples: pd.Series) -> float:
    """The series' sample interval in model units (1.0 for 100 ms); it must be uniform."""
    gaps = np.diff(samples.index.to_numpy(dtype=float))
    if len(gaps) == 0 or not np.allclose(gaps, gaps[0], rtol=1e-6):
        raise ScenarioError("samples: expected a uniform sample interval")
    return float(gaps[0]) / UNIT_S


def fit_window(samples: pd.Series, start_s: float = 0.0, points: int = POINTS) -> FourierSeries:
    """Fits a Fourier series to ``points`` samples from ``start_s`` on (source: 500 × 100 ms)."""
    if not isinstance(samples, pd.Series):
        raise ScenarioError(f"samples: got {shown(samples)}, expected a pandas Series of samples")
    start_s, count = _window(start_s, points)
    points = POINTS if count is None else count
    window = samples[samples.index >= start_s].iloc[:points]
    if len(window) < points:
        raise ScenarioError(
            f"samples: got {len(window)} samples from {start_s} s, expected {points}"
        )
    return fit_fourier(window.to_numpy(), step=sample_step_units(window))


def measure_inputs(
    results: Results,
    gateway: str | None = None,
    start_s: float = 0.0,
    points: int = POINTS,
    connections: int | None = None,
) -> dict[str, FourierSeries]:
    """Fits ω, υ and (with a gateway) d from one run; keys ``omega``, ``upsilon``, ``delay``."""
    results_argument(results)
    fitted = {
        "omega": fit_window(offered_load_ratio(results, start_s, points, gateway), start_s, points),
        "upsilon": fit_window(new_connection_fraction(results, connections), start_s, points),
    }
    if gateway is not None:
        fitted["delay"] = fit_window(pep_delay(results, gateway), start_s, points)
    return fitted

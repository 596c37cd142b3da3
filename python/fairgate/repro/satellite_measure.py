"""What one [Byun07] run measures, as [Byun07, §3.5] samples it: every 100 ms after the
population is reached, the output link (the transmit queue's departures), the input link (the
receive queue's arrivals, before any drop or mark), the transmit queue in packets, the marking
probability, drops, and (chapter 5) per-flow throughput; plus the drop raster of the first 1000
packets and its clustering.

Drop clustering (the source plots drop indicators and gives no number, [Byun07, Fig. 4.9]):
each drop at the receive queue carries the port's arrival counter (`arrival_index` of the
events table), so a drop's place among the packets that arrived since the measurement start is
exact: the counter minus its value at the start (a phase edge there gives it). A *run* is a
sequence of drops of consecutive arrivals; the metric is the mean run length of the drops among
the first 1000 packets after the start (1 = no two dropped packets arrived back to back). The
coefficient of variation of the gaps between drops over the whole measurement (1 for Poisson
drops, above 1 when clustered) is reported beside it.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from fairgate.repro.satellite_setup import (
    LINK_BPS,
    RECEIVE,
    TRANSMIT,
    UDP_KBPS,
    scenario,
    scenario_text,
)
from fairgate.results import Results
from fairgate.runner import run_text

RASTER_PACKETS = 1000
SERIES_KEEP_S = 150.0
"""The time series handed back for the figures: the first 150 s of the measurement (the
source's zoom is 50-150 s, [Byun07, §4.3])."""


def _port(series: pd.DataFrame, port: str, start: float) -> pd.DataFrame:
    rows = series[(series["port"].astype(str) == port) & (series["time_s"] > start + 1e-9)]
    return rows.set_index("time_s")


def _mean_size(ports: pd.DataFrame, port: str) -> float:
    row = ports[ports["port"].astype(str) == port].iloc[0]
    return float(row["arrivals_bytes"]) / max(float(row["arrivals_pkts"]), 1.0)


def _receive_events(res: Results, start: float) -> pd.DataFrame:
    d = res.drops
    keep = (d["port"].astype(str) == RECEIVE) & (d["time_s"] > start)
    return d.loc[keep, ["time_s", "action", "flow", "arrival_index"]]


def arrivals_before(res: Results, port: str, start: float) -> int:
    """The packets that arrived at ``port`` before ``start``, from the phases that end there."""
    pp = res.phase_ports
    rows = pp[(pp["port"].astype(str) == port) & (pp["end_s"] <= start + 1e-9)]
    if rows.empty or abs(float(rows["end_s"].max()) - start) > 1e-9:
        raise ValueError(f"simulation.phase_edges: expected an edge at {start} s")
    return int(rows["arrivals_pkts"].sum())


def index_runs(indices: np.ndarray) -> np.ndarray:
    """Lengths of the runs of consecutive arrival indices (sorted, distinct) in ``indices``."""
    if len(indices) == 0:
        return np.array([], dtype=int)
    breaks = np.flatnonzero(np.diff(indices) != 1) + 1
    return np.diff(np.concatenate(([0], breaks, [len(indices)])))


def clustering(events: pd.DataFrame, arrived_before: int) -> dict[str, Any]:
    """Drop raster of the first 1000 packets to arrive after the start (``arrived_before``: the
    port's arrival counter then): each drop's 0-based place among them, the mean and longest
    run of consecutive dropped arrivals, and the coefficient of variation of the gaps between
    drops over the whole measurement."""
    drops = events[events["action"].astype(str) == "drop"]
    index = drops["arrival_index"].to_numpy(dtype=np.int64) - arrived_before - 1
    first = index[(index >= 0) & (index < RASTER_PACKETS)]
    lengths = index_runs(first)
    gaps = np.diff(drops["time_s"].to_numpy())
    cv = float(gaps.std() / gaps.mean()) if len(gaps) > 1 and gaps.mean() > 0 else float("nan")
    return {
        "raster": first.tolist(),
        "mean_run": float(lengths.mean()) if len(lengths) else float("nan"),
        "longest_run": int(lengths.max()) if len(lengths) else 0,
        "gap_cv": cv,
    }


def _stats(values: pd.Series) -> tuple[float, float]:
    return float(values.mean()), float(values.std(ddof=0))


def marking_probability(events: pd.DataFrame, arrivals: pd.Series) -> pd.Series:
    """Drops and marks at the receive queue per 100 ms interval over that interval's arrivals."""
    slot = np.ceil(events["time_s"].to_numpy() * 10 - 1e-6) / 10
    counts = pd.Series(1.0, index=slot).groupby(level=0).sum()
    counts.index = np.round(counts.index, 1)
    index = np.round(arrivals.index.to_numpy(), 1)
    notified = counts.reindex(index).fillna(0.0).to_numpy()
    packets = arrivals.to_numpy()
    p = np.divide(notified, packets, out=np.zeros_like(packets), where=packets > 0)
    return pd.Series(np.clip(p, 0.0, 1.0), index=arrivals.index)


def slot_throughput(res: Results, start: float, end: float, slots: int) -> np.ndarray:
    """Mean b/s of each of the ``slots`` HTTP connection slots (flow, user slot) over
    [start, end]: the bytes of the pages it finished in the window; slots that finished none
    count as 0."""
    t = res.transfers
    done = t[(t["last_byte_s"] > start) & (t["last_byte_s"] <= end)]
    per_slot = done.groupby([done["flow"].astype(str), "session"], observed=True)["bytes"].sum()
    rates = per_slot.to_numpy(dtype=float) * 8 / (end - start)
    return np.concatenate((rates, np.zeros(max(slots - len(rates), 0))))


def udp_throughput(res: Results, start: float, end: float) -> dict[str, float]:
    fs = res.flow_series
    out = {}
    for kbps in UDP_KBPS:
        rows = fs[fs["flow"].astype(str) == f"udp{kbps}"].set_index("time_s")["delivered_bytes"]
        out[f"udp{kbps}"] = (float(rows.asof(end)) - float(rows.asof(start))) * 8 / (end - start)
    return out


def measure(res: Results, start: float, end: float, slots: int | None) -> dict[str, Any]:
    """Everything the report and the figures need from one run, small and picklable; with
    ``slots`` (the HTTP connections) the per-flow throughputs of chapter 5 too."""
    if not res.conserved:
        raise RuntimeError(f"conservation violated: {res.summary['conservation']['violations']}")
    qs = res.queue_series
    tx = _port(qs, TRANSMIT, start)
    rx = _port(qs, RECEIVE, start)
    size = _mean_size(res.ports, RECEIVE)
    arrivals = rx["arrival_bps"] * 0.1 / 8 / size
    events = _receive_events(res, start)
    p = marking_probability(events, arrivals)
    out_mean, out_std = _stats(tx["departure_bps"])
    in_mean, in_std = _stats(rx["arrival_bps"])
    q_mean, q_std = _stats(tx["packets"])
    drops = int((events["action"].astype(str) == "drop").sum())
    keep = tx.index <= start + SERIES_KEEP_S
    result: dict[str, Any] = {
        "out_mean_bps": out_mean,
        "out_std_bps": out_std,
        "in_mean_bps": in_mean,
        "in_std_bps": in_std,
        "q_mean": q_mean,
        "q_std": q_std,
        "drops": drops,
        "marks": int(len(events) - drops),
        "drop_fraction": drops / max(float(arrivals.sum()), 1.0),
        "p_mean": float(p.mean()),
        "p_std": float(p.std(ddof=0)),
        "clustering": clustering(events, arrivals_before(res, RECEIVE, start)),
        "series": {
            "time_s": (tx.index[keep] - start).tolist(),
            "out_mbps": (tx["departure_bps"][keep] / 1e6).tolist(),
            "in_mbps": (rx["arrival_bps"].reindex(tx.index[keep]) / 1e6).tolist(),
            "queue": tx["packets"][keep].tolist(),
            "p": p.reindex(tx.index[keep]).tolist(),
        },
    }
    if slots is not None:
        http = slot_throughput(res, start, end, slots)
        udp = udp_throughput(res, start, end)
        every = np.concatenate((list(udp.values()), http))
        result["per_flow"] = {
            "udp": udp,
            "http": http.tolist(),
            "std_bps": float(every.std()),
            "fair_bps": LINK_BPS / len(every),
        }
    return result


def run_case(
    scheme: str,
    connections: int,
    ramp_s: float,
    measure_s: float,
    quick: bool,
    fc: int | None = None,
    udp: bool = False,
    seed: int = 1,
) -> dict[str, Any]:
    """One packet-level run of the testbed with ``seed``, measured from ``ramp_s`` for
    ``measure_s``."""
    doc = scenario(scheme, connections, measure_s, quick=quick, fc=fc, udp=udp, seed=seed)
    res = run_text(scenario_text(doc))
    return measure(res, ramp_s, ramp_s + measure_s, connections if udp else None)


def run_inputs(connections: int, ramp_s: float, quick: bool) -> dict[str, Any]:
    """The no-AQM run without a bottlenecking transmit queue (the regulator at 100 Mb/s) whose
    500 samples from the end of the ramp-up give the fluid model's ω, d and υ [Byun07, §4.4]."""
    from fairgate import fluid

    points = 500
    doc = scenario("none", connections, points * 0.1, quick=quick, bottleneck=False)
    res = run_text(scenario_text(doc))
    if not res.conserved:
        raise RuntimeError("conservation violated in the fluid-input run")
    from fairgate.repro.satellite_fluid import upsilon_readings

    fitted = fluid.measure_inputs(res, gateway="pep", start_s=ramp_s, connections=connections)
    stored: dict[str, Any] = {name: series.to_dict() for name, series in fitted.items()}
    stored["upsilon_windows"] = upsilon_readings(res, ramp_s, connections)
    return stored

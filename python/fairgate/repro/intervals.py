"""The [Keshav91] measurement method: per-interval means, the first interval discarded, then the
mean of the interval means and their standard deviation."""

from __future__ import annotations

import numpy as np
import pandas as pd

from fairgate.results import Results


def interval_table(
    results: Results,
    interval_s: float,
    start_s: float = 0.0,
    end_s: float | None = None,
    packet_bytes: float | None = None,
) -> pd.DataFrame:
    """Per flow and interval: goodput (bit/s, or pkt/s when ``packet_bytes`` is given), drop
    and retransmission rates (/s) and the mean RTT of the samples taken in the interval.

    Interval boundaries must fall on samples of the flow series (``sample_interval`` divides
    ``interval_s``).
    """
    end = results.summary["time_s"] if end_s is None else end_s
    edges = np.arange(start_s, end + 1e-9, interval_s)
    fs = results.flow_series
    times = fs["time_s"].to_numpy()
    rows = []
    for flow, series in fs.groupby("flow", observed=True, sort=False):
        t = times[series.index]
        at = {
            col: np.interp(edges, t, series[col].to_numpy(dtype=float))
            for col in ("goodput_bytes", "dropped_pkts", "retransmits", "rtt_sum_s", "rtt_samples")
        }
        d = {col: np.diff(v) for col, v in at.items()}
        scale = 1.0 / packet_bytes if packet_bytes else 8.0
        with np.errstate(invalid="ignore", divide="ignore"):
            rtt = np.where(d["rtt_samples"] > 0, d["rtt_sum_s"] / d["rtt_samples"], np.nan)
        for k in range(len(edges) - 1):
            rows.append(
                {
                    "flow": str(flow),
                    "interval": k,
                    "start_s": edges[k],
                    "throughput": d["goodput_bytes"][k] * scale / interval_s,
                    "drop_rate": d["dropped_pkts"][k] / interval_s,
                    "retx_rate": d["retransmits"][k] / interval_s,
                    "rtt": rtt[k],
                }
            )
    return pd.DataFrame(rows)


def mean_of_means(table: pd.DataFrame, discard_first: bool = True) -> pd.DataFrame:
    """Mean and sample standard deviation (n - 1) of the interval means per flow and metric."""
    kept = table[table["interval"] > 0] if discard_first else table
    metrics = ["throughput", "drop_rate", "retx_rate", "rtt"]
    grouped = kept.groupby("flow", sort=False)[metrics]
    mean = grouped.mean().add_suffix("_mean")
    sd = grouped.std(ddof=1).add_suffix("_sd")
    return mean.join(sd).reset_index()

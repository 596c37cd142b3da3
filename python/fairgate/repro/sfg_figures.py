"""Figures 3-8 of the SFG-PI paper [Chung06, §4] redrawn from fairgate's runs.

Each function returns a matplotlib Figure; the reproduction saves them into its output
directory. Time series are smoothed over 10 samples (10 s) for reading.
"""

from __future__ import annotations

import pandas as pd
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from fairgate.repro.sfg_runs import SfgRun
from fairgate.repro.sfg_setup import PHASE_FLOWS

SMOOTH = 10


def _smooth(series: pd.Series) -> pd.Series:
    return series.rolling(SMOOTH, min_periods=1).mean()


def calibration(points: pd.DataFrame, line: tuple, mapped: pd.DataFrame) -> Figure:
    """Figure 3: drop-tail drop rate against the web sessions' offered load, the fitted line,
    and the TCP mix's FTP phases placed on it."""
    slope, intercept, r2 = line
    drops = points[points["link_mbps"] == points["link_mbps"].min()].set_index("sessions")
    loads = points[points["link_mbps"] == points["link_mbps"].max()].set_index("sessions")
    x = loads.loc[drops.index, "offered_load"]
    fig = Figure(figsize=(6, 4))
    ax = fig.subplots()
    ax.plot(x, drops["drop_rate"], "o", label="web only (1200-1800 sessions)")
    xs = pd.Series([min(x.min(), mapped["offered_load"].min()), x.max()])
    ax.plot(xs, slope * xs + intercept, "-", label=f"fit, R² = {r2:.3f}")
    ax.plot(mapped["offered_load"], mapped["drop_rate"], "s", label="TCP mix phases (DT)")
    for row in mapped.itertuples():
        ax.annotate(f"{row.ftp_flows} FTP", (row.offered_load, row.drop_rate), fontsize=7)
    ax.set_xlabel("offered load (offered rate / 10 Mb/s)")
    ax.set_ylabel("drop-tail packet drop rate")
    ax.legend(fontsize=7)
    fig.suptitle("Figure 3: offered load against drop rate (drop-tail, 500 KB)")
    return fig


def queue_and_throughput(runs: dict[str, SfgRun], title: str) -> Figure:
    """Figures 4 and 6: the bottleneck queue (KB, top) and the link throughput (Mb/s, bottom)
    of every scheme over time."""
    fig = Figure(figsize=(9, 7))
    top, bottom = fig.subplots(2, 1, sharex=True)
    for scheme, run in runs.items():
        top.plot(run.queue["time_s"], _smooth(run.queue["bytes"] / 1e3), lw=0.7, label=scheme)
        tp = run.throughput
        total = tp[["ftp", "web", "cbr"]].sum(axis=1)
        bottom.plot(tp["time_s"], _smooth(total), lw=0.7, label=scheme)
    top.set_ylabel("queue (KB)")
    top.set_ylim(0, 520)
    bottom.set_ylabel("link throughput (Mb/s)")
    bottom.set_xlabel("time (s)")
    top.legend(fontsize=7, ncol=4)
    fig.suptitle(title)
    return fig


def _phase_axis(ax: Axes, count: int) -> None:
    ax.set_xticks(range(count))
    ax.set_xticklabels([str(PHASE_FLOWS[k]) for k in range(count)], fontsize=7)
    ax.set_xlabel("phase (forward FTP flows)")


def per_phase(runs: dict[str, SfgRun], title: str) -> Figure:
    """Figures 5 and 8: the bottleneck's packet drop rate (top) and byte loss rate (middle),
    and the mean web object service time (bottom) per load level (phase)."""
    fig = Figure(figsize=(8, 8))
    panels = fig.subplots(3, 1, sharex=True)
    columns = ("drop_rate", "byte_loss_rate", "web_service_s")
    labels = ("packet drop rate", "byte loss rate", "web object service time (s)")
    for scheme, run in runs.items():
        for ax, column in zip(panels, columns, strict=True):
            ax.plot(run.phases["phase"], run.phases[column], "o-", ms=3, label=scheme)
    for ax, label in zip(panels, labels, strict=True):
        ax.set_ylabel(label)
    panels[2].set_yscale("log")
    _phase_axis(panels[2], len(next(iter(runs.values())).phases))
    panels[0].legend(fontsize=7, ncol=4)
    fig.suptitle(title)
    return fig


def cbr_throughput(runs: dict[str, SfgRun]) -> Figure:
    """Figure 7: system throughput (top) and the mean throughput of the five CBR flows
    (bottom) over time."""
    fig = Figure(figsize=(9, 7))
    top, bottom = fig.subplots(2, 1, sharex=True)
    for scheme, run in runs.items():
        tp = run.throughput
        cbr_columns = [c for c in tp.columns if c.startswith("cbr") and c != "cbr"]
        top.plot(tp["time_s"], _smooth(tp[["ftp", "web", "cbr"]].sum(axis=1)), lw=0.7)
        per_flow = tp[cbr_columns].mean(axis=1)
        bottom.plot(tp["time_s"], _smooth(per_flow), lw=0.7, label=scheme)
    top.set_ylabel("system throughput (Mb/s)")
    bottom.set_ylabel("mean CBR throughput (Mb/s)")
    bottom.set_xlabel("time (s)")
    bottom.legend(fontsize=7, ncol=4)
    fig.suptitle("Figure 7: CBR scenario, system and per-CBR throughput")
    return fig

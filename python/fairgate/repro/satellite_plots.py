"""Figures of the satellite reproduction, each like one of the source's: time series of output
utilisation, transmit queue and marking probability over the first 150 s of the measurement
([Byun07, Figs 4.2-4.8, 6.2-6.31]); the drop raster of the first 1000 packets (Fig. 4.9); per-flow
throughput (Figs 5.1-5.9); the UDP flows' throughput against the fair share (Fig. 5.10)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from fairgate.plot import save
from fairgate.repro.satellite_paper import CH4_SCHEMES, CH5_SCHEMES, CH6_CASES

DESCRIPTIONS = {
    "ch4_series": "the source: RED oscillates more in utilisation, its queue leaves the 60-120 "
    "band with spikes and regular large oscillations; AVQ and AVQRED lower and flatter "
    "[Byun07, Figs 4.2-4.8]",
    "ch4_drops": "the source: RED's drops in clusters, AVQ's in tail-drop clusters, AVQRED's "
    "the most uniformly spread [Byun07, Fig. 4.9]",
    "ch5_per_flow": "the source: similar spread for all but SRED 2 (tighter than SRED 1) and "
    "PFAVQRED (tightest) [Byun07, Figs 5.1-5.9]",
    "ch5_udp": "the source: SRED 2 and PFAVQRED penalise the UDP flows most, PFAVQRED closest "
    "to the fair share [Byun07, Fig. 5.10]",
    "ch6_red_series": "the source: FC 1 high and volatile, FC 5 huge swings, RED (drop) spikes; "
    "FC marking probability higher and more oscillatory than drop mode's [Byun07, Figs 6.2-6.31]",
    "ch6_avqred_series": "the source: AVQRED (drop) low and stable, the FC settings not "
    "[Byun07, Figs 6.2-6.31]",
}
"""The source's description of each figure, written beside it in the report."""

PANELS = (
    ("out_mbps", "output (Mb/s)"),
    ("in_mbps", "input (Mb/s)"),
    ("queue", "transmit queue (packets)"),
    ("p", "marking probability"),
)


def time_series(runs: dict[str, Any], names: list[str], title: str) -> Figure:
    panels = PANELS if "6" in title else tuple(p for p in PANELS if p[0] != "in_mbps")
    fig = Figure(figsize=(10, 2.3 * len(panels)), layout="constrained")
    axes: list[Axes] = list(fig.subplots(len(panels), 1, sharex=True))
    for name in names:
        s = runs[name]["series"]
        for ax, (key, _) in zip(axes, panels, strict=True):
            ax.plot(s["time_s"], s[key], lw=0.7, label=name)
    for ax, (_, label) in zip(axes, panels, strict=True):
        ax.set_ylabel(label)
        ax.grid(alpha=0.3)
    axes[0].legend(fontsize="small", ncol=3)
    axes[-1].set_xlabel("time after the population is reached (s)")
    fig.suptitle(title)
    return fig


def drop_raster(runs: dict[str, Any], names: list[str]) -> Figure:
    fig = Figure(figsize=(10, 0.6 * len(names) + 1.2), layout="constrained")
    ax = fig.subplots()
    for row, name in enumerate(names):
        cl = runs[name]["clustering"]
        ax.vlines(cl["raster"], row - 0.4, row + 0.4, lw=0.8)
    ax.set_yticks(
        range(len(names)), [f"{n} (run {runs[n]['clustering']['mean_run']:.2f})" for n in names]
    )
    ax.set_xlim(0, 1000)
    ax.set_xlabel("packet at the receive queue (first 1000 after the population is reached)")
    ax.set_title("drops (as [Byun07, Fig. 4.9]); mean run length of consecutive drops in brackets")
    return fig


def per_flow(runs: dict[str, Any], names: list[str]) -> Figure:
    fig = Figure(figsize=(10, 2.0 * len(names)), layout="constrained")
    axes: list[Axes] = list(np.atleast_1d(fig.subplots(len(names), 1, sharex=True, sharey=True)))
    for ax, name in zip(axes, names, strict=True):
        pf = runs[name]["per_flow"]
        values = list(pf["udp"].values()) + pf["http"]
        ax.scatter(range(len(values)), np.array(values) / 1e3, s=3)
        ax.axhline(pf["fair_bps"] / 1e3, color="black", lw=0.6)
        ax.set_ylabel(f"{name}\nkb/s")
    axes[-1].set_xlabel("flow (3 UDP, then the HTTP connection slots)")
    fig.suptitle("per-flow throughput (as [Byun07, Figs 5.1-5.9]); line: fair share")
    return fig


def udp_bars(runs: dict[str, Any], names: list[str]) -> Figure:
    fig = Figure(figsize=(10, 4), layout="constrained")
    ax = fig.subplots()
    flows = list(runs[names[0]]["per_flow"]["udp"])
    width = 0.8 / len(flows)
    for k, flow in enumerate(flows):
        heights = [runs[n]["per_flow"]["udp"][flow] / 1e3 for n in names]
        ax.bar(np.arange(len(names)) + k * width, heights, width, label=flow)
    fair = runs[names[0]]["per_flow"]["fair_bps"]
    ax.axhline(fair / 1e3, color="black", lw=0.8, label="fair share")
    ax.set_xticks(np.arange(len(names)) + width, names, rotation=30)
    ax.set_ylabel("throughput (kb/s)")
    ax.legend()
    ax.set_title("UDP CBR flows (as [Byun07, Fig. 5.10])")
    return fig


def chapter_figures(chapter: int, runs: dict[str, Any], out_dir: Path) -> list[Path]:
    """Writes every figure the chapter's runs allow into `out_dir`; returns the files written."""
    if chapter == 4:
        names = [n for n in CH4_SCHEMES if n in runs]
        if not names:
            return []
        return [
            save(time_series(runs, names, "chapter 4"), out_dir / "ch4_series.png", dpi=110),
            save(drop_raster(runs, names), out_dir / "ch4_drops.png", dpi=110),
        ]
    if chapter == 5:
        names = [n for n in CH5_SCHEMES if n in runs]
        if not names:
            return []
        return [
            save(per_flow(runs, names), out_dir / "ch5_per_flow.png", dpi=110),
            save(udp_bars(runs, names), out_dir / "ch5_udp.png", dpi=110),
        ]
    out = []
    for group in ("RED", "AVQRED"):
        names = [n for n in CH6_CASES if n.split(" ")[0] == group and n in runs]
        if names:
            path = out_dir / f"ch6_{group.lower()}_series.png"
            out.append(save(time_series(runs, names, f"chapter 6, {group}"), path, dpi=110))
    return out

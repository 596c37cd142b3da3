"""The standard figures: queue length over time (with a port's input and output rates),
per-flow and per-class throughput over time, and the distribution of transfer times of the
web and HTTP workloads."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
from matplotlib.backend_bases import FigureCanvasBase
from matplotlib.figure import Figure

from fairgate._core import ScenarioError
from fairgate.checks import number, shown
from fairgate.display import figure_text
from fairgate.results import Results, results_argument
from fairgate.runner import check_out_file

MAX_PORTS = 4
MAX_FLOWS = 10
"""Flows drawn in the overview: Matplotlib's colour cycle has ten, so no two lines of the
figure share a colour (at twelve the eleventh and twelfth repeated the first two); a legend
over more flows than drawn says so."""
TITLE_WIDTH = 80
"""A scenario's name as a figure's default title is clipped here (a legend's names at 40)."""


def busiest_ports(results: Results, count: int = MAX_PORTS) -> list[str]:
    """Ports that ever queued more than one packet, largest mean queue first."""
    count = int(number("count", count, 0, integer=True))
    ports = results_argument(results).ports
    queued = ports[ports["max_queue_pkts"] > 1]
    ranked = (queued if len(queued) else ports).sort_values(
        ["mean_queue_pkts", "drops_pkts", "utilisation"], ascending=False, kind="stable"
    )
    return [str(p) for p in ranked["port"].head(count)]


def overview(results: Results, path: str | Path | None = None, title: str | None = None) -> Figure:
    """The two-panel figure: queue length of the busiest ports, throughput of each flow.

    Returns the Figure (a notebook shows it); writes it to `path` (PNG) only when one is given.
    Needs no pyplot and leaves the matplotlib backend to the caller.
    """
    results = _checked(results, path, title)
    fig = Figure(figsize=(9, 6.5), layout="constrained")
    ax_q, ax_t = fig.subplots(2, 1, sharex=True)
    qs = results.queue_series
    for port in busiest_ports(results):
        series = qs[qs["port"] == port]
        ax_q.step(series["time_s"], series["packets"], where="post", label=figure_text(port), lw=1)
    ax_q.set_ylabel("queue length (packets)")
    if ax_q.get_legend_handles_labels()[0]:
        ax_q.legend(loc="upper right", fontsize="small")
    ax_q.grid(alpha=0.3)
    rates = results.throughput()
    for flow in list(rates.columns)[:MAX_FLOWS]:
        ax_t.plot(rates.index, rates[flow] / 1e6, label=figure_text(flow), lw=1)
    ax_t.set_ylabel("goodput (Mb/s)")
    ax_t.set_xlabel("time (s)")
    ax_t.grid(alpha=0.3)
    if len(rates.columns):
        ax_t.legend(loc="upper right", fontsize="small", ncol=2, title=_shown_of(rates.columns))
    return _finish(fig, results, path, title)


def _shown_of(flows: pd.Index) -> str | None:
    """The legend's title when it lists fewer flows than the run has."""
    if len(flows) <= MAX_FLOWS:
        return None
    return f"first {MAX_FLOWS} of {len(flows):,} flows"


def queue_over_time(
    results: Results,
    path: str | Path | None = None,
    title: str | None = None,
    ports: list[str] | None = None,
) -> Figure:
    """Queue length of `ports` (default: the busiest) over time, and below it each port's
    arrival rate (into the discipline, before its drops, dashed) and departure rate (onto the
    link, solid) from the core's rate series. Written to `path` (PNG) only when one is given."""
    results = _checked(results, path, title)
    fig = Figure(figsize=(9, 6.5), layout="constrained")
    ax_q, ax_r = fig.subplots(2, 1, sharex=True)
    qs = results.queue_series
    for port in _known_ports(results, ports) if ports is not None else busiest_ports(results):
        series = qs[qs["port"] == port]
        line = ax_q.step(
            series["time_s"], series["packets"], where="post", label=figure_text(port), lw=1
        )
        color = line[0].get_color()
        ax_r.plot(series["time_s"], series["arrival_bps"] / 1e6, ls="--", color=color, lw=1)
        departures = series["departure_bps"] / 1e6
        ax_r.plot(series["time_s"], departures, color=color, lw=1, label=figure_text(port))
    ax_q.set_ylabel("queue length (packets)")
    ax_r.set_ylabel("in (dashed) / out rate (Mb/s)")
    ax_r.set_xlabel("time (s)")
    for ax in (ax_q, ax_r):
        ax.grid(alpha=0.3)
        if ax.get_legend_handles_labels()[0]:
            ax.legend(loc="upper right", fontsize="small")
    return _finish(fig, results, path, title)


def _known_ports(results: Results, ports: str | list[str]) -> list[str]:
    """``ports`` (one name or a list), each checked to be a port of the run (a misspelt one
    would plot nothing; a name given alone was read letter by letter)."""
    ports = [ports] if isinstance(ports, str) else ports
    if not isinstance(ports, list | tuple):
        raise ScenarioError(f"`ports`: got {shown(ports)}, expected a port's name or a list")
    known = [str(p) for p in results.ports["port"]]
    unknown = [p for p in ports if p not in known]
    if unknown:
        listed = ", ".join(known[:8]) + (f", ... ({len(known)} in all)" if len(known) > 8 else "")
        raise ScenarioError(
            f"`ports`: got {shown(unknown[0])}, expected a port of the run: "
            f"{listed or '(it has none)'}"
        )
    return list(ports)


def save(fig: Figure, path: str | Path, dpi: int = 120) -> Path:
    """Writes `fig` to `path` (its format from the suffix: .png, .pdf, .svg, ...) and returns
    the path, for drivers that list what they wrote (the reproductions' figure functions
    return Figures and save nothing). A path that cannot take a figure raises ScenarioError
    (:func:`image_path`)."""
    out = image_path(path)
    fig.savefig(out, dpi=dpi)
    return out


def image_path(path: str | Path) -> Path:
    """``path`` when a figure can be written there: a file (not a folder) in an existing,
    writable folder, named with a suffix Matplotlib writes. Otherwise ScenarioError naming
    ``path``: Matplotlib would add ``.png`` to a folder's name or to an empty one, and write
    beside what was asked."""
    out = check_out_file(path, "path")
    formats = FigureCanvasBase.get_supported_filetypes()
    if out.suffix.lstrip(".").lower() not in formats:
        listed = ", ".join(f".{name}" for name in sorted(formats))
        raise ScenarioError(
            f"path: got {shown(str(out))}, expected a file name ending in one of {listed}"
        )
    return out


def _checked(results: object, path: str | Path | None, title: object) -> Results:
    """The arguments every figure takes, checked before any drawing: the run, the path to
    write (named before the work) and the title."""
    if path is not None:
        image_path(path)
    if title is not None and not isinstance(title, str):
        raise ScenarioError(f"`title`: got {shown(title)}, expected a string or None")
    return results_argument(results)


def _finish(fig: Figure, results: Results, path: str | Path | None, title: str | None) -> Figure:
    fig.suptitle(
        title or figure_text(results.summary.get("scenario") or "fairgate run", TITLE_WIDTH)
    )
    if path is not None:
        save(fig, path)
    return fig


def class_throughput(
    results: Results, path: str | Path | None = None, title: str | None = None
) -> Figure:
    """The goodput of each traffic class (source kind) over time; written to `path` if given."""
    results = _checked(results, path, title)
    fig = Figure(figsize=(9, 4.5), layout="constrained")
    ax = fig.subplots()
    rates = results.class_throughput()
    for kind in rates.columns:
        ax.plot(rates.index, rates[kind] / 1e6, label=figure_text(kind), lw=1)
    ax.set_xlabel("time (s)")
    ax.set_ylabel("goodput (Mb/s)")
    ax.grid(alpha=0.3)
    if len(rates.columns):
        ax.legend(loc="upper right", fontsize="small")
    return _finish(fig, results, path, title)


def transfer_time_cdf(
    results: Results, path: str | Path | None = None, title: str | None = None
) -> Figure:
    """The empirical CDF of transfer times (request to last byte), one curve per flow of the
    transfers table; written to `path` if given."""
    results = _checked(results, path, title)
    fig = Figure(figsize=(7, 4.5), layout="constrained")
    ax = fig.subplots()
    transfers = results.transfers
    for flow in transfers["flow"].unique():
        times = np.sort(transfers.loc[transfers["flow"] == flow, "transfer_time_s"].to_numpy())
        share = np.arange(1, len(times) + 1) / len(times)
        ax.step(times, share, where="post", label=figure_text(flow), lw=1)
    ax.set_xscale("log")
    ax.set_xlabel("transfer time, request to last byte (s)")
    ax.set_ylabel("fraction of transfers")
    ax.grid(alpha=0.3)
    if len(transfers):
        ax.legend(loc="lower right", fontsize="small")
    return _finish(fig, results, path, title)

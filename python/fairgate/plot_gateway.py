"""Figures of a split-connection gateway: end-to-end goodput, the gateway's buffers and its
windows over time (the panels of [Vaidyanathan99, Figs. 4.5-4.7] and [Byun07, §6])."""

from __future__ import annotations

import re
from pathlib import Path

from matplotlib.figure import Figure

from fairgate._core import ScenarioError
from fairgate.checks import shown
from fairgate.display import figure_text
from fairgate.plot import TITLE_WIDTH, image_path, save
from fairgate.results import Results, results_argument

MAX_CONNECTIONS = 6
BUFFERS = ("pep_buffer", "send_buffer", "unacked")
WINDOWS = ("rhs_cwnd", "advertised_window")


def gateways(results: Results) -> list[str]:
    """Names of the gateways that traced connections in this run (one per gateway node: the
    per-connection, per-user and per-leg traces under a gateway's name are not gateways)."""
    names = results.traces["var"].astype(str)
    found = names[names.str.endswith(".splits_opened")].str.removesuffix(".splits_opened")
    return sorted(found.unique())


STEM_BYTES = 200
"""The most of a gateway's name a figure's file name keeps: file systems take 255 bytes,
and ``gateway-`` and ``-NNN.png`` need some."""


def figure_files(names: list[str]) -> dict[str, str]:
    """A file name for each gateway's figure, ``gateway-NAME.png``: a node's name may hold
    ``/`` (``a/b`` made ``--plot`` fail after the run, naming a missing folder) or ``..``, so
    only its letters, digits, ``.``, ``-`` and ``_`` are kept (others become ``_``), and a
    name met twice so gets ``-2``, ``-3``. A long name is cut to STEM_BYTES of UTF-8 (a
    300-letter name failed after the run: "File name too long")."""
    files: dict[str, str] = {}
    taken: set[str] = set()
    for name in names:
        stem = re.sub(r"[^\w.-]+", "_", name).lstrip(".") or "_"
        stem = stem.encode()[:STEM_BYTES].decode(errors="ignore")
        file, n = f"gateway-{stem}.png", 1
        while file in taken:
            n += 1
            file = f"gateway-{stem}-{n}.png"
        taken.add(file)
        files[name] = file
    return files


def _var(results: Results, gateway: str, var: str):
    t = results.traces
    return t[t["var"].astype(str) == f"{gateway}.{var}"]


def gateway_figure(results: Results, gateway: str, path: str | Path | None = None) -> Figure:
    """The three panels of `gateway`: goodput per flow, buffered bytes summed over its
    connections, and the RHS congestion and advertised windows of its first connections.
    Returns the Figure; writes it to `path` (PNG) only when one is given. A name that is not
    a gateway of the run raises ScenarioError (it drew three empty panels)."""
    if path is not None:
        image_path(path)  # a bad path is named before a bad gateway, and before the work
    known = gateways(results_argument(results))
    if gateway not in known:
        raise ScenarioError(
            f"`gateway`: got {shown(gateway)}, expected a gateway of the run: "
            f"{', '.join(known) or '(it has none)'}"
        )
    fig = Figure(figsize=(9, 8), layout="constrained")
    ax_t, ax_b, ax_w = fig.subplots(3, 1, sharex=True)
    rates = results.throughput()
    for flow in list(rates.columns)[:MAX_CONNECTIONS]:
        ax_t.plot(rates.index, rates[flow] / 1e6, label=figure_text(flow), lw=1)
    ax_t.set_ylabel("goodput (Mb/s)")
    for var in BUFFERS:
        total = _var(results, gateway, var).groupby("time_s")["value"].sum()
        ax_b.plot(total.index, total.values / 1e3, label=var, lw=1)
    ax_b.set_ylabel(f"{gateway} buffers (KB)")
    for var, style in zip(WINDOWS, ("-", "--"), strict=True):  # a colour per connection
        series = _var(results, gateway, var)
        for i, flow in enumerate(list(series["flow"].unique())[:MAX_CONNECTIONS]):
            s = series[series["flow"] == flow]
            label = figure_text(f"{var} {flow}")
            ax_w.plot(s["time_s"], s["value"] / 1e3, f"C{i}{style}", label=label, lw=1)
    ax_w.set_ylabel("window (KB)")
    ax_w.set_xlabel("time (s)")
    for ax in (ax_t, ax_b, ax_w):
        ax.grid(alpha=0.3)
        if ax.get_legend_handles_labels()[0]:
            ax.legend(loc="upper left", fontsize="small", ncol=2)
    scenario = figure_text(results.summary.get("scenario") or "fairgate run", TITLE_WIDTH)
    fig.suptitle(f"{scenario}: gateway {figure_text(gateway)}")
    if path is not None:
        save(fig, path)
    return fig

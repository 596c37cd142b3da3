"""The standard figures: queue length over time and per-flow throughput over time."""

from __future__ import annotations

from pathlib import Path

from matplotlib.figure import Figure

from fairgate.results import Results

MAX_PORTS = 4
MAX_FLOWS = 12


def busiest_ports(results: Results, count: int = MAX_PORTS) -> list[str]:
    """Ports that ever queued more than one packet, largest mean queue first."""
    ports = results.ports
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
    fig = Figure(figsize=(9, 6.5), layout="constrained")
    ax_q, ax_t = fig.subplots(2, 1, sharex=True)
    qs = results.queue_series
    for port in busiest_ports(results):
        series = qs[qs["port"] == port]
        ax_q.step(series["time_s"], series["packets"], where="post", label=port, lw=1)
    ax_q.set_ylabel("queue length (packets)")
    ax_q.legend(loc="upper right", fontsize="small")
    ax_q.grid(alpha=0.3)
    rates = results.throughput()
    for flow in list(rates.columns)[:MAX_FLOWS]:
        ax_t.plot(rates.index, rates[flow] / 1e6, label=flow, lw=1)
    ax_t.set_ylabel("goodput (Mb/s)")
    ax_t.set_xlabel("time (s)")
    ax_t.grid(alpha=0.3)
    if len(rates.columns):
        ax_t.legend(loc="upper right", fontsize="small", ncol=2)
    fig.suptitle(title or results.summary.get("scenario") or "fairgate run")
    if path is not None:
        fig.savefig(Path(path), dpi=120)
    return fig

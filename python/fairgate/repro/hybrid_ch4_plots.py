"""Figures of the chapter-4 reproduction, like [Vaidyanathan99, Figs. 4.5-4.11]: satellite
throughput, RHS send buffer and RHS cwnd over time; IP and TCP buffering with and without the
two-server model; the scheduler-rate sweep; TCP against UDP."""

from __future__ import annotations

from pathlib import Path

from matplotlib.axes import Axes
from matplotlib.figure import Figure

from fairgate.plot import save

PANELS = (
    ("throughput_mbps", "satellite throughput (Mb/s)"),
    ("send_buffer_kb", "RHS send buffer (KB)"),
    ("rhs_cwnd_kb", "RHS cwnd (KB)"),
)


def _panels(runs: dict[str, dict], panels: tuple, title: str) -> Figure:
    fig = Figure(figsize=(9, 2.6 * len(panels)), layout="constrained")
    axes: list[Axes] = list(fig.subplots(len(panels), 1, sharex=True))
    for label, run in runs.items():
        s = run["series"]
        for ax, (key, _) in zip(axes, panels, strict=True):
            ax.plot(s["time_s"], s[key], lw=1, label=label)
    for ax, (_, ylabel) in zip(axes, panels, strict=True):
        ax.set_ylabel(ylabel)
        ax.grid(alpha=0.3)
    axes[0].legend(fontsize="small")
    axes[-1].set_xlabel("time (s)")
    fig.suptitle(title)
    return fig


def figures(values: dict[str, dict], out_dir: Path) -> list[Path]:
    """Writes every figure the runs in ``values`` allow into `out_dir`; returns the files
    written."""
    out: list[Path] = []
    if "t1" in values:
        runs = {"T1": values["t1"]}
        fig = _panels(runs, PANELS, "E4.1: vanilla spoofing, T1")
        out.append(save(fig, out_dir / "hybrid_e4_1.png", dpi=110))
    t3 = {f"T3, {k.split('-')[1][:-3]} KB": v for k, v in values.items() if k.startswith("t3-")}
    t3 = {k: v for k, v in t3.items() if "noflush" not in k}
    if t3:
        title = "E4.2: vanilla spoofing, T3, receive buffer at gateway 2"
        out.append(save(_panels(t3, PANELS, title), out_dir / "hybrid_e4_2.png", dpi=110))
    vanilla = values.get("t3-200000")
    if vanilla and "mu-500" in values:
        runs = {"vanilla": vanilla, "two-server 500/s": values["mu-500"]}
        panels = (
            PANELS[0],
            PANELS[1],
            ("ip_buffer_kb", "IP buffering (KB)"),
            ("tcp_buffer_kb", "TCP buffering (KB)"),
        )
        title = "E4.3: two-server model at 500 packets/s against vanilla, T3, 200 KB"
        out.append(save(_panels(runs, panels, title), out_dir / "hybrid_e4_3.png", dpi=110))
    sweep = {k.replace("mu-", "") + "/s": v for k, v in values.items() if k.startswith("mu-")}
    if len(sweep) > 1:
        title = "E4.4: scheduler-rate sweep, T3, 200 KB"
        out.append(save(_panels(sweep, PANELS[:2], title), out_dir / "hybrid_e4_4.png", dpi=110))
    e45 = {k: v for k, v in values.items() if k.startswith("udp-")}
    if e45:
        out.append(save(_tcp_udp(e45), out_dir / "hybrid_e4_5.png", dpi=110))
    return out


def _tcp_udp(runs: dict[str, dict]) -> Figure:
    fig = Figure(figsize=(9, 2.6 * len(runs)), layout="constrained")
    axes = fig.subplots(len(runs), 1, sharex=True, squeeze=False)[:, 0]
    for ax, (label, run) in zip(axes, runs.items(), strict=True):
        s = run["series"]
        ax.plot(s["time_s"], s["tcp_mbps"], lw=1, label="TCP")
        ax.plot(s["time_s"], s["udp_mbps"], lw=1, label="UDP")
        ax.set_ylabel("goodput (Mb/s)")
        ax.set_title(label, fontsize="small")
        ax.grid(alpha=0.3)
        ax.legend(fontsize="small")
    axes[-1].set_xlabel("time (s)")
    fig.suptitle("E4.5: TCP and UDP through a FIFO and through the two-server model")
    return fig

"""The SFG-PI paper [Chung06, §3-4] as a reproduction: the analytic configuration numbers and
its two scenarios (the TCP mix; the mix plus five 2 Mb/s CBR flows) for the seven schemes.

Every published number that fairgate can measure today is a row. Not measured yet: the load
calibration (Figure 3) and the web object service times, which need the web-session workload;
without the 300 web sessions every phase carries about 2.5 Mb/s less than the paper's, which the
on/off times and the drop rates show. Quick mode runs 20-s phases with a tenth of the flows and
scales the paper's times (SFG on/off) with the phase length.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd
from matplotlib.figure import Figure

from fairgate.analysis import sfg as analysis
from fairgate.repro.report import Report, Row, Tolerance
from fairgate.repro.sfg_setup import BOTTLENECK, CBR_START_PHASES, CBR_STOP_PHASES, SCHEMES
from fairgate.repro.sfg_setup import scenario as build_scenario
from fairgate.results import Results

TITLE = "SFG and SFG-PI (Chung, Claypool, Kinicki): analysis, TCP mix, CBR flows"
SOURCE = "[Chung06, §3-4]"
EXPERIMENTS = ["analysis", "tcp-mix", "cbr"]
PAPER_PHASE_S = 200.0
LOW_LOAD_PHASES = (0, 9)


def _analysis(report: Report) -> None:
    exp = "configuration [Chung06, §3]"
    for flows, paper in ((5, 0.01), (10, 0.06), (15, 0.15)):
        p = analysis.false_positive_probability(3, 20, flows)
        report.add(Row(exp, f"P_fp(L=3, N=20, B={flows})", paper, p, Tolerance(absolute=0.005)))
    t_tcp = analysis.tcp_friendly_rate(1500, 0.3, 0.01) / 1e6
    report.add(Row(exp, "T_tcp (Mb/s), S=1500 B, 0.3 s, p=0.01", 0.49, t_tcp, Tolerance(0.005)))
    report.add(Row(exp, "N at 10 Mb/s", 20, analysis.bins_for_capacity(10e6), Tolerance()))
    report.add(Row(exp, "memory (B), L=3, N=20", 720, analysis.memory_bytes(3, 20), Tolerance()))
    report.add(
        Row(
            exp, "memory (B), L=3, N=20,000", 720_000, analysis.memory_bytes(3, 20_000), Tolerance()
        )
    )


def _per_phase(res: Results, phase: float, prefix: str) -> pd.DataFrame:
    """Goodput bytes per phase of the flows whose names start with prefix."""
    fs = res.flow_series
    fs = fs[fs["flow"].astype(str).str.startswith(prefix)].sort_values(["flow", "time_s"])
    grouped = fs.groupby("flow", observed=True)
    steps = pd.DataFrame(
        {
            "phase": ((fs["time_s"] - 1e-9) // phase).astype(int),
            "bytes": grouped["goodput_bytes"].diff().fillna(fs["goodput_bytes"]),
        }
    )
    return steps.groupby("phase").sum()


def _mean_queue_kb(res: Results, after_s: float) -> float:
    qs = res.queue_series
    rows = qs[(qs["port"] == BOTTLENECK) & (qs["time_s"] > after_s)]
    return float(rows["bytes"].mean()) / 1e3


def _switch_times(res: Results) -> tuple[float, float]:
    """First switch-on and last switch-off of SFG at the bottleneck (NaN when absent)."""
    st = res.qdisc_state
    on = st[(st["port"] == BOTTLENECK) & (st["var"] == "sfg_on")].sort_values("time_s")
    changes = on[on["value"].diff().fillna(on["value"]) != 0]
    ups = changes[changes["value"] == 1]["time_s"]
    downs = changes[changes["value"] == 0]["time_s"]
    first_on = float(ups.iloc[0]) if len(ups) else float("nan")
    last_off = float(downs.iloc[-1]) if len(downs) else float("nan")
    return first_on, last_off


def _runs(cbr: bool, phase: float, scale: float, progress: bool) -> dict[str, Results]:
    results = {}
    for scheme in SCHEMES:
        if progress:
            print(f"sfg {'cbr' if cbr else 'tcp-mix'}: {scheme}", flush=True)
        res = build_scenario(scheme, cbr=cbr, phase=phase, scale=scale).run()
        if not res.conserved:
            raise RuntimeError(f"sfg {scheme}: packet conservation violated")
        results[scheme] = res
    return results


def _tcp_mix(report: Report, runs: dict, phase: float) -> None:
    exp = "TCP mix [Chung06, §4.1]"
    time_scale = phase / PAPER_PHASE_S
    band = Tolerance(absolute=50)
    for scheme in ("PI", "SFG-PI"):
        q = _mean_queue_kb(runs[scheme], phase / 10)
        report.add(Row(exp, f"{scheme} mean queue (KB)", 100, q, band))
    ports = {s: r.ports.set_index("port").loc[BOTTLENECK] for s, r in runs.items()}
    drop = {s: p["drops_pkts"] / p["arrivals_pkts"] for s, p in ports.items()}
    report.add(
        Row(
            exp,
            "PI / DT bottleneck packet drop rate",
            2.0,
            drop["PI"] / drop["DT"],
            Tolerance(0.5),
            note="whole run; the paper's ratio is for loads above 1.2",
        )
    )
    loss = 100 * ports["PI"]["drops_bytes"] / ports["PI"]["arrivals_bytes"]
    report.add(
        Row(
            exp,
            "PI bottleneck byte loss (%), paper < 2 at load 1.7",
            1.0,
            loss,
            Tolerance(1.0),
            note="whole run; in [0, 2] passes",
        )
    )
    for scheme in ("SFG", "SFG-PI"):
        on, off = _switch_times(runs[scheme])
        tol = Tolerance(absolute=100 * time_scale)
        report.add(Row(exp, f"{scheme} switches on (s)", 300 * time_scale, on, tol))
        report.add(Row(exp, f"{scheme} switches off (s)", 1900 * time_scale, off, tol))
    choke_phases = _per_phase(runs["CHOKe"], phase, "ftp")
    choke = choke_phases.loc[list(LOW_LOAD_PHASES), "bytes"].sum() * 8 / (2 * phase) / 1e6
    report.add(
        Row(
            exp,
            "CHOKe FTP goodput, first and last phase (Mb/s)",
            8.5,
            choke,
            Tolerance(0.5),
            note="FTP goodput only: no web sessions",
        )
    )
    utilisation = {
        s: r.ports.set_index("port").loc[BOTTLENECK, "utilisation"] for s, r in runs.items()
    }
    report.add(
        Row(
            exp,
            "SFB utilisation minus the lowest other",
            0.0,
            utilisation["SFB"] - min(v for s, v in utilisation.items() if s != "SFB"),
            note="paper: SFB lowest (difference < 0)",
        )
    )


def _cbr_goodput_mbps(res: Results, phase: float) -> float:
    phases = _per_phase(res, phase, "cbr")
    span = (CBR_STOP_PHASES - CBR_START_PHASES) * phase
    return float(phases["bytes"].sum()) * 8 / span / 5 / 1e6


def _cbr(report: Report, runs: dict, phase: float) -> None:
    exp = "CBR flows [Chung06, §4.2]"
    dt = _cbr_goodput_mbps(runs["DT"], phase)
    report.add(Row(exp, "DT: CBR share of the link", 0.95, 5 * dt / 10, Tolerance(0.10)))
    report.add(Row(exp, "DT: goodput per CBR flow (Mb/s)", 2.0, dt, Tolerance(0.2)))
    for scheme in ("SFG", "SFG-PI"):
        rate = _cbr_goodput_mbps(runs[scheme], phase)
        report.add(Row(exp, f"{scheme}: goodput per CBR flow (Mb/s)", 0.5, rate, Tolerance(0.1)))
    q = _mean_queue_kb(runs["SFG-PI"], phase / 10)
    report.add(Row(exp, "SFG-PI mean queue (KB)", 100, q, Tolerance(absolute=50)))
    pi = _cbr_goodput_mbps(runs["PI"], phase)
    report.add(Row(exp, "PI: goodput per CBR flow (Mb/s)", 2.0, pi, note="paper: unfair, >> 0.5"))


def _queue_figure(runs: dict, name: str, out_dir: Path) -> Path:
    fig = Figure(figsize=(9, 8))
    axes = fig.subplots(len(runs), 1, sharex=True)
    for ax, (scheme, res) in zip(axes, runs.items(), strict=True):
        qs = res.queue_series
        rows = qs[qs["port"] == BOTTLENECK]
        ax.plot(rows["time_s"], rows["bytes"] / 1e3, linewidth=0.5)
        ax.set_ylabel(f"{scheme}\nKB", fontsize=7)
        ax.set_ylim(0, 520)
    axes[-1].set_xlabel("time (s)")
    fig.suptitle(f"Bottleneck queue, {name}")
    path = out_dir / f"sfg-queue-{name}.png"
    fig.savefig(path, dpi=90)
    return path


def run(
    out_dir: Path, experiment: str | None = None, quick: bool = False, progress: bool = False
) -> Report:
    report = Report("sfg", TITLE, SOURCE)
    phase, scale = (20.0, 0.1) if quick else (PAPER_PHASE_S, 1.0)
    selected = [experiment] if experiment else EXPERIMENTS
    if "analysis" in selected:
        _analysis(report)
    for name, cbr, rows in (("tcp-mix", False, _tcp_mix), ("cbr", True, _cbr)):
        if name not in selected:
            continue
        runs = _runs(cbr, phase, scale, progress)
        rows(report, runs, phase)
        out_dir.mkdir(parents=True, exist_ok=True)
        report.figures.append(_queue_figure(runs, name, out_dir))
    report.notes.append(
        f"Phases of {phase:g} s, {scale:g} x the paper's flow counts, seed 1, no web sessions; "
        "not measured: Figure 3 (load calibration), web object service times."
    )
    return report

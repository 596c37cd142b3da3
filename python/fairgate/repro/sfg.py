"""The SFG-PI paper [Chung06, §3-4] as a reproduction: the analytic configuration numbers and
its two scenarios (the TCP mix; the mix plus five 2 Mb/s CBR flows) for the seven schemes.

Every published number that fairgate can measure today is a row. Not measured yet: the load
calibration (Figure 3) and the web object service times, which need the web-session workload;
without the 300 web sessions every phase carries about 2.5 Mb/s less than the paper's, which the
on/off times and the drop rates show. Quick mode runs 20-s phases with a tenth of the flows and
scales the paper's times (SFG on/off) with the phase length.
"""

from __future__ import annotations

import io
import math
from functools import cache
from importlib.resources import files
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


@cache
def paper_values() -> pd.DataFrame:
    """The published numbers, tolerances and notes (``fairgate/data/sfg/paper_values.csv``)."""
    text = files("fairgate").joinpath("data", "sfg", "paper_values.csv").read_text("utf-8")
    return pd.read_csv(io.StringIO(text)).set_index("metric")


def _row(report: Report, exp: str, metric: str, measured: float, scale: float = 1.0) -> None:
    """Adds the row for ``metric``; ``scale`` multiplies the paper's value and tolerance (times
    in quick mode)."""
    paper = paper_values().loc[metric]
    tolerance = None if math.isnan(paper["tolerance"]) else Tolerance(paper["tolerance"] * scale)
    value = float(paper["paper"]) * scale
    report.add(Row(exp, metric, value, float(measured), tolerance, note=str(paper["note"])))


def _analysis(report: Report) -> None:
    exp = "configuration [Chung06, §3]"
    for flows in (5, 10, 15):
        p_fp = analysis.false_positive_probability(3, 20, flows)
        _row(report, exp, f"P_fp(L=3, N=20, B={flows})", p_fp)
    t_tcp = analysis.tcp_friendly_rate(1500, 0.3, 0.01) / 1e6
    _row(report, exp, "T_tcp (Mb/s), S=1500 B, 0.3 s, p=0.01", t_tcp)
    _row(report, exp, "N at 10 Mb/s", analysis.bins_for_capacity(10e6))
    _row(report, exp, "memory (B), L=3, N=20", analysis.memory_bytes(3, 20))
    _row(report, exp, "memory (B), L=3, N=20,000", analysis.memory_bytes(3, 20_000))


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


def _tcp_mix(report: Report, runs: dict[str, Results], phase: float) -> None:
    exp = "TCP mix [Chung06, §4.1]"
    for scheme in ("PI", "SFG-PI"):
        _row(report, exp, f"{scheme} mean queue (KB)", _mean_queue_kb(runs[scheme], phase / 10))
    ports = {s: r.ports.set_index("port").loc[BOTTLENECK] for s, r in runs.items()}
    drop = {s: p["drops_pkts"] / p["arrivals_pkts"] for s, p in ports.items()}
    _row(report, exp, "PI / DT bottleneck packet drop rate", drop["PI"] / drop["DT"])
    loss = 100 * ports["PI"]["drops_bytes"] / ports["PI"]["arrivals_bytes"]
    _row(report, exp, "PI bottleneck byte loss (%), paper < 2 at load 1.7", loss)
    for scheme in ("SFG", "SFG-PI"):
        on, off = _switch_times(runs[scheme])
        _row(report, exp, f"{scheme} switches on (s)", on, phase / PAPER_PHASE_S)
        _row(report, exp, f"{scheme} switches off (s)", off, phase / PAPER_PHASE_S)
    choke_phases = _per_phase(runs["CHOKe"], phase, "ftp")
    choke = choke_phases.loc[list(LOW_LOAD_PHASES), "bytes"].sum() * 8 / (2 * phase) / 1e6
    _row(report, exp, "CHOKe FTP goodput, first and last phase (Mb/s)", choke)
    others = min(p["utilisation"] for s, p in ports.items() if s != "SFB")
    _row(
        report, exp, "SFB utilisation minus the lowest other", ports["SFB"]["utilisation"] - others
    )


def _cbr_goodput_mbps(res: Results, phase: float) -> float:
    phases = _per_phase(res, phase, "cbr")
    span = (CBR_STOP_PHASES - CBR_START_PHASES) * phase
    return float(phases["bytes"].sum()) * 8 / span / 5 / 1e6


def _cbr(report: Report, runs: dict[str, Results], phase: float) -> None:
    exp = "CBR flows [Chung06, §4.2]"
    dt = _cbr_goodput_mbps(runs["DT"], phase)
    _row(report, exp, "DT: CBR share of the link", 5 * dt / 10)
    _row(report, exp, "DT: goodput per CBR flow (Mb/s)", dt)
    for scheme in ("SFG", "SFG-PI"):
        rate = _cbr_goodput_mbps(runs[scheme], phase)
        _row(report, exp, f"{scheme}: goodput per CBR flow (Mb/s)", rate)
    queue_kb = _mean_queue_kb(runs["SFG-PI"], phase / 10)
    _row(report, exp, "SFG-PI mean queue (KB) with CBR", queue_kb)
    _row(report, exp, "PI: goodput per CBR flow (Mb/s)", _cbr_goodput_mbps(runs["PI"], phase))


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

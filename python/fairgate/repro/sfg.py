"""The SFG-PI paper [Chung06, §3-4] as a reproduction: the analytic configuration numbers,
the offered-load calibration (Figure 3) and its two scenarios (the TCP mix; the mix plus five
2 Mb/s CBR flows) for the seven schemes, with 300 web sessions, Figures 3-8.

Every simulation is a case on the sweep executor (:mod:`fairgate.repro.sfg_runs`,
:mod:`fairgate.repro.sfg_calibration`); the tables written (``sfg_runs.csv``,
``sfg_phases.csv``, ``sfg_calibration.csv``) are in case order, so they do not depend on how
many workers ran them. Quick mode runs 20-s phases with a tenth of the flows and sessions and
scales the paper's times (SFG on/off) with the phase length.
"""

from __future__ import annotations

import io
import math
from functools import cache
from importlib.resources import files
from pathlib import Path
from typing import Any

import pandas as pd
from matplotlib.figure import Figure

from fairgate.analysis import sfg as analysis
from fairgate.repro import sfg_calibration as calibration
from fairgate.repro import sfg_checks as checks
from fairgate.repro import sfg_figures as figures
from fairgate.repro.cases import Case, run_cases
from fairgate.repro.report import AtMost, Report, Row, Tolerance
from fairgate.repro.sfg_runs import SfgRun, run_case
from fairgate.repro.sfg_setup import CBR_START_PHASES, CBR_STOP_PHASES, PHASE_FLOWS, SCHEMES

TITLE = "SFG and SFG-PI (Chung, Claypool, Kinicki): analysis, load calibration, TCP mix, CBR flows"
SOURCE = "[Chung06, §3-4]"
EXPERIMENTS = ["analysis", "calibration", "tcp-mix", "cbr"]
PAPER_PHASE_S = 200.0
LOW_LOAD_PHASES = (0, 9)


@cache
def paper_values() -> pd.DataFrame:
    """The published numbers, tolerances and notes (``fairgate/data/sfg/paper_values.csv``)."""
    text = files("fairgate").joinpath("data", "sfg", "paper_values.csv").read_text("utf-8")
    return pd.read_csv(io.StringIO(text)).set_index("metric")


def _tolerance(paper: pd.Series, scale: float) -> Tolerance | None:
    """``within``: |measured - paper| <= tolerance (none: reported only); ``at_most``:
    measured <= paper + tolerance (none: 0)."""
    tolerance = float(paper["tolerance"]) * scale
    if paper["check"] == "at_most":
        bound = float(paper["paper"]) * scale + (0.0 if math.isnan(tolerance) else tolerance)
        return AtMost(bound=bound)
    return None if math.isnan(tolerance) else Tolerance(tolerance)


def _row(report: Report, exp: str, metric: str, measured: float, scale: float = 1.0) -> None:
    """Adds the row for ``metric``; ``scale`` multiplies the paper's value and tolerance (times
    in quick mode)."""
    paper = paper_values().loc[metric]
    tolerance = _tolerance(paper, scale)
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


def _phase_mbps(run: SfgRun, column: str, phases: list[int], phase: float) -> float:
    """Mean Mb/s of a throughput column over the given phases."""
    tp = run.throughput
    index = ((tp["time_s"] - 1e-9) // phase).astype(int)
    return float(tp.loc[index.isin(phases), column].mean())


def _mean_queue_kb(run: SfgRun, after_s: float) -> float:
    return float(run.queue.loc[run.queue["time_s"] > after_s, "bytes"].mean()) / 1e3


def _loss(run: SfgRun, min_flows: int = 0, unit: str = "pkts") -> float:
    """The bottleneck's drops over its arrivals (``unit``: pkts or bytes) in the phases with at
    least ``min_flows`` FTP flows."""
    ph = run.phases[[PHASE_FLOWS[k] >= min_flows for k in run.phases["phase"]]]
    return float(ph[f"drops_{unit}"].sum() / ph[f"arrivals_{unit}"].sum())


def _web_by_count(run: SfgRun) -> pd.Series:
    """Mean web object service time per FTP count (the mean of its phases' means)."""
    ph = run.phases.assign(ftp_flows=[PHASE_FLOWS[k] for k in run.phases["phase"]])
    return ph.groupby("ftp_flows", sort=True)["web_service_s"].mean()


def _crossover_flows(pi: SfgRun, dt: SfgRun) -> float:
    """The lowest FTP count at which PI's web object service time exceeds drop-tail's."""
    above = _web_by_count(pi) > _web_by_count(dt)
    return float(above[above].index.min()) if above.any() else math.nan


def _tcp_mix(report: Report, runs: dict[str, SfgRun], phase: float) -> None:
    exp = "TCP mix [Chung06, §4.1]"
    for scheme in ("PI", "SFG-PI"):
        _row(report, exp, f"{scheme} mean queue (KB)", _mean_queue_kb(runs[scheme], phase / 10))
    for scheme in ("PI", "SFG-PI"):
        variation = checks.queue_variation(runs[scheme], phase, len(PHASE_FLOWS)).max()
        _row(report, exp, f"{scheme} queue: largest coefficient of variation in a phase", variation)
    ratio = _loss(runs["PI"], 200) / _loss(runs["DT"], 200)
    _row(report, exp, "PI / DT bottleneck packet drop rate", ratio)
    peak = max(PHASE_FLOWS)
    pi_bytes = 100 * _loss(runs["PI"], peak, "bytes")
    _row(report, exp, "PI byte loss at load 1.7 (%)", pi_bytes)
    sfg_pi_bytes = 100 * _loss(runs["SFG-PI"], peak, "bytes")
    _row(report, exp, "SFG-PI minus PI byte loss at load 1.7 (points)", sfg_pi_bytes - pi_bytes)
    for scheme, base in (("SFG", "DT"), ("SFG-PI", "PI")):
        ratio = _loss(runs[scheme]) / _loss(runs[base])
        _row(report, exp, f"{scheme} / {base} packet drop rate, whole run", ratio)
    for scheme in ("SFG", "SFG-PI"):
        run = runs[scheme]
        _row(report, exp, f"{scheme} switches on (s)", run.sfg_on_s, phase / PAPER_PHASE_S)
        _row(report, exp, f"{scheme} switches off (s)", run.sfg_off_s, phase / PAPER_PHASE_S)
    choke = _phase_mbps(runs["CHOKe"], "ftp", list(LOW_LOAD_PHASES), phase)
    choke += _phase_mbps(runs["CHOKe"], "web", list(LOW_LOAD_PHASES), phase)
    _row(report, exp, "CHOKe throughput, first and last phase (Mb/s)", choke)
    utilisation = {s: r.port["utilisation"] for s, r in runs.items()}
    others = min(u for s, u in utilisation.items() if s != "SFB")
    _row(report, exp, "SFB utilisation minus the lowest other", utilisation["SFB"] - others)
    for scheme in ("PI", "DT"):
        service = _web_by_count(runs[scheme])[peak]
        _row(report, exp, f"{scheme} web object service time at load 1.7 (s)", service)
    crossover = _crossover_flows(runs["PI"], runs["DT"])
    _row(report, exp, "FTP flows where PI's web object time first exceeds DT's", crossover)


def _cbr_goodput_mbps(run: SfgRun, phase: float) -> float:
    tp = run.throughput
    inside = (tp["time_s"] > CBR_START_PHASES * phase) & (tp["time_s"] <= CBR_STOP_PHASES * phase)
    columns = [c for c in tp.columns if c.startswith("cbr") and c != "cbr"]
    return float(tp.loc[inside, columns].mean().mean())


def _cbr(report: Report, runs: dict[str, SfgRun], phase: float) -> None:
    exp = "CBR flows [Chung06, §4.2]"
    dt = _cbr_goodput_mbps(runs["DT"], phase)
    _row(report, exp, "DT: CBR share of the link", 5 * dt / 10)
    _row(report, exp, "DT: goodput per CBR flow (Mb/s)", dt)
    for scheme in ("SFG", "SFG-PI"):
        rate = _cbr_goodput_mbps(runs[scheme], phase)
        _row(report, exp, f"{scheme}: goodput per CBR flow (Mb/s)", rate)
    queue_kb = _mean_queue_kb(runs["SFG-PI"], phase / 10)
    _row(report, exp, "SFG-PI mean queue (KB) with CBR", queue_kb)
    variation = checks.queue_variation(runs["SFG-PI"], phase, len(PHASE_FLOWS)).max()
    _row(
        report, exp, "SFG-PI queue with CBR: largest coefficient of variation in a phase", variation
    )
    _row(report, exp, "PI: goodput per CBR flow (Mb/s)", _cbr_goodput_mbps(runs["PI"], phase))
    for scheme in ("SFB", "CHOKe", "RED-PD"):
        rate = _cbr_goodput_mbps(runs[scheme], phase)
        _row(report, exp, f"{scheme}: goodput per CBR flow (Mb/s)", rate)
    ratio = checks.friendly_ratio_by_phase(runs["RED-PD"], phase).max()
    _row(report, exp, "RED-PD: CBR goodput over the TCP-friendly rate, largest in a phase", ratio)
    delay = checks.median_detection_delay(runs["SFB"], phase)
    scale = phase / PAPER_PHASE_S
    _row(report, exp, "SFB: CBR flows' detection delay after their start (s)", delay, scale)
    spread = {s: runs[s].queue["bytes"].std() for s in ("RED-PD", "CHOKe")}
    _row(report, exp, "RED-PD / CHOKe queue standard deviation", spread["RED-PD"] / spread["CHOKe"])
    for scheme in ("DT", "PI"):
        service = runs[scheme].phases["web_service_s"]
        inside = service.iloc[math.ceil(CBR_START_PHASES) : math.floor(CBR_STOP_PHASES)]
        _row(report, exp, f"{scheme}: web object service time with CBR (s)", inside.mean())


def _calibration_rows(
    report: Report, points: pd.DataFrame, mapped: pd.DataFrame, line: tuple
) -> None:
    exp = "load calibration [Chung06, §4.1]"
    _row(report, exp, "Figure 3: R² of drop rate against offered load", line[2])
    fast = points[points["link_mbps"] == calibration.UNCONGESTED_MBPS]
    per_session = (fast["offered_load"] * calibration.LINK_MBPS / fast["sessions"]).mean()
    _row(report, exp, "web offered rate of 300 sessions (Mb/s)", 300 * per_session)
    for row in mapped.itertuples():
        _row(report, exp, f"equivalent offered load, {row.ftp_flows} FTP flows", row.offered_load)


def _planned(selected: list[str], phase: float, scale: float, quick: bool) -> list[Case]:
    cases = []
    for name, cbr in (("tcp-mix", False), ("cbr", True)):
        if name in selected or (name == "tcp-mix" and "calibration" in selected):
            for scheme in SCHEMES:
                if name in selected or scheme == "DT":
                    args = (scheme, cbr, phase, scale, len(PHASE_FLOWS))
                    cases.append(Case(f"{name}/{scheme}", run_case, args))
    if "calibration" in selected:
        sessions = calibration.QUICK_SESSIONS if quick else calibration.SESSIONS
        measure = calibration.QUICK_MEASURE_S if quick else calibration.MEASURE_S
        for count in sessions:
            for mbps in (calibration.LINK_MBPS, calibration.UNCONGESTED_MBPS):
                args = (count, mbps, scale, measure)
                cases.append(Case(f"calibration/{count}/{mbps:g}", calibration.run_point, args))
    return cases


def _tables(runs: dict[str, dict[str, SfgRun]]) -> tuple[pd.DataFrame, pd.DataFrame]:
    rows, phases = [], []
    for name, by_scheme in runs.items():
        for scheme, run in by_scheme.items():
            port = {k: run.port[k] for k in RUN_COLUMNS}
            rows.append(
                {
                    "scenario": name,
                    "scheme": scheme,
                    **port,
                    "sfg_on_s": run.sfg_on_s,
                    "sfg_off_s": run.sfg_off_s,
                }
            )
            phases.append(
                run.phases.assign(scenario=name, scheme=scheme, ftp_flows=list(PHASE_FLOWS))
            )
    return pd.DataFrame(rows), pd.concat(phases, ignore_index=True)


RUN_COLUMNS = (
    "arrivals_pkts",
    "arrivals_bytes",
    "drops_pkts",
    "drops_bytes",
    "drops_filter",
    "drops_overflow",
    "drops_early",
    "drops_forced",
    "marks",
    "utilisation",
    "mean_queue_bytes",
)


def _save(fig: Figure, path: Path) -> Path:
    fig.savefig(path, dpi=90)
    return path


def run(
    out_dir: Path,
    experiment: str | None = None,
    quick: bool = False,
    progress: bool = False,
    client: Any = None,
) -> Report:
    """Runs the selected experiments' cases on the executor (``client``: a Dask client; by
    default ``$FAIRGATE_SCHEDULER`` or the local cluster); writes the tables and Figures 3-8
    into ``out_dir`` and returns the report."""
    report = Report("sfg", TITLE, SOURCE)
    phase, scale = (20.0, 0.1) if quick else (PAPER_PHASE_S, 1.0)
    selected = [experiment] if experiment else EXPERIMENTS
    if "analysis" in selected:
        _analysis(report)
    values, errors = run_cases(_planned(selected, phase, scale, quick), client, progress, "sfg")
    if errors:
        raise RuntimeError(f"sfg: runs failed: {errors}")
    out_dir.mkdir(parents=True, exist_ok=True)
    runs: dict[str, dict[str, SfgRun]] = {}
    for key, value in values.items():
        name, rest = key.split("/", 1)
        if name != "calibration":
            runs.setdefault(name, {})[rest] = value
    if "calibration" in selected:
        points = pd.DataFrame([v for k, v in values.items() if k.startswith("calibration/")])
        points.to_csv(out_dir / "sfg_calibration.csv", index=False)
        line = calibration.fit(points)
        mapped = calibration.equivalent_loads(runs["tcp-mix"]["DT"].phases, list(PHASE_FLOWS), line)
        _calibration_rows(report, points, mapped, line)
        report.figures.append(
            _save(figures.calibration(points, line, mapped), out_dir / "sfg-figure3.png")
        )
    for name, rows, numbers in (("tcp-mix", _tcp_mix, (4, 5)), ("cbr", _cbr, (6, 8))):
        if name not in selected:
            continue
        rows(report, runs[name], phase)
        title = "TCP mix" if name == "tcp-mix" else "CBR scenario"
        fig = figures.queue_and_throughput(
            runs[name], f"Figure {numbers[0]}: {title}, queue and throughput"
        )
        report.figures.append(_save(fig, out_dir / f"sfg-figure{numbers[0]}.png"))
        fig = figures.per_phase(
            runs[name],
            f"Figure {numbers[1]}: {title}, drop rate, byte loss and web object time per phase",
        )
        report.figures.append(_save(fig, out_dir / f"sfg-figure{numbers[1]}.png"))
        if name == "cbr":
            report.figures.append(
                _save(figures.cbr_throughput(runs[name]), out_dir / "sfg-figure7.png")
            )
    if runs:
        table, phases = _tables(runs)
        table.to_csv(out_dir / "sfg_runs.csv", index=False)
        phases.to_csv(out_dir / "sfg_phases.csv", index=False)
    report.notes.append(
        f"Phases of {phase:g} s, {scale:g} x the paper's flow and session counts, seed 1. "
        "Per-phase packet drop rate, byte loss rate, SFG drops, queue drops and ECN marks at "
        "the bottleneck in sfg_phases.csv; whole-run counters in sfg_runs.csv."
    )
    return report

"""[Keshav91] (Keshav 1991, "Congestion Control in Computer Networks", chapter 6): the eight
scenarios with the protocol pairs of table 6.1, measured as the text does.

Scenario files: ``s1.toml`` ... ``s8.toml`` (each runnable alone with PP/FQ), the pairs in
``pairs.toml`` and the paper's numbers in ``paper_results.csv``, shipped with the package in
``fairgate/data/keshav`` (``scenarios/keshav`` in the source tree links there). A run is split
into intervals, the first discarded; a metric is the mean of the interval means with their
standard deviation ([Keshav91, §6.6]).

Decisions where the text is silent (see docs/reproductions/keshav.md):
- Interval lengths: 200 s x 7 (S1, S2, S4-S8); S3 one 300 s phase each, background off =
  [300, 600), on = [600, 900] (the first on-phase holds the start-up). Quick mode: 4 intervals
  of 50 s (S7, S8: 4 of 100 s, S3 unchanged).
- Telnet is a Generic source with window 5 fed by an application that hands over a 40-byte
  packet after exponential gaps of mean 5 s (``app_gap``), so its RTT comes from its samples.
- Throughput is goodput in 1000-byte packets per second (Telnet: 40-byte packets).
"""

from __future__ import annotations

import io
import math
import tomllib
from collections.abc import Callable
from dataclasses import dataclass
from importlib.resources import files
from importlib.resources.abc import Traversable
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import tomli_w
from matplotlib.figure import Figure
from matplotlib.patches import Rectangle

from fairgate import _core
from fairgate.plot import save
from fairgate.repro.cases import Case, run_cases
from fairgate.repro.intervals import interval_table
from fairgate.repro.report import Report, Row, Tolerance
from fairgate.results import Results
from fairgate.runner import run_text

TITLE = "Keshav 1991, chapter 6: eight scenarios, seven protocol pairs"
SOURCE = "[Keshav91, tab. 6.2-6.11]"
EXPERIMENTS = ["1", "2", "3", "4", "5", "6", "7", "8"]
PAIRS = ["G/FCFS", "G/FQ", "JK/FCFS", "JK/FQ", "DEC/DEC", "DEC/FQB", "PP/FQ"]
FQ_PAIRS = {"G/FQ", "JK/FQ", "DEC/FQB", "PP/FQ"}
PACKET_BYTES = 1000.0
TELNET_BYTES = 40.0
TCP_PAYLOAD_BYTES = 960.0
"""JK's goodput counts payload: a 1000-byte packet carries 960 bytes (mss in pairs.toml)."""
TELNET = {1: {"3", "4"}, 2: {"7", "8"}, 4: {"2"}}
"""Sources that are Telnets, per scenario (scenario 4's source 3 is the ill-behaved one)."""


def data_dir() -> Traversable:
    """The scenario and data files, shipped inside the package (``fairgate/data/keshav``)."""
    return files("fairgate").joinpath("data", "keshav")


def read_data(name: str) -> str:
    return data_dir().joinpath(name).read_text(encoding="utf-8")


@dataclass(frozen=True)
class Timing:
    interval_s: float
    intervals: int

    @property
    def duration_s(self) -> float:
        return self.interval_s * self.intervals


def timing(scenario: int, quick: bool) -> Timing:
    if scenario == 3:
        return Timing(300.0, 3)
    if quick:
        return Timing(100.0 if scenario in (7, 8) else 50.0, 4)
    return Timing(200.0, 7)


# --- building a run ------------------------------------------------------------------------


def load_pairs() -> dict[str, Any]:
    return tomllib.loads(read_data("pairs.toml"))


def load_paper() -> pd.DataFrame:
    frame = pd.read_csv(io.StringIO(read_data("paper_results.csv")), dtype={"source": str})
    frame["phase"] = frame["phase"].fillna("")
    return frame


def ftp_source(pair: dict[str, Any], scenario_source: dict[str, Any]) -> dict[str, Any]:
    """The pair's FTP source with the scenario's window and initial RTT estimate."""
    source = dict(pair["ftp"])
    source[pair["window_key"]] = int(scenario_source["window"] * pair.get("window_scale", 1))
    if "initial_rtt" in scenario_source:
        source[pair.get("initial_rtt_key", "initial_rtt")] = scenario_source["initial_rtt"]
    return source


def scenario_doc(scenario: int, label: str, pairs: dict[str, Any], quick: bool) -> dict:
    """The scenario's TOML as a dict, with ``label``'s sources and queues substituted."""
    doc = tomllib.loads(read_data(f"s{scenario}.toml"))
    per_source, queue_pair = sources_of(label, pairs)
    for link in doc["links"]:
        if link["queue"]["kind"] == "fq":
            link["queue"] = {**queue_pair["queue"], "limit": link["queue"]["limit"]}
    for flow in doc["flows"]:
        if flow["source"]["kind"] == "pp_cth":
            number = int(flow["name"].removeprefix("src"))
            pair = per_source(number)
            flow["source"] = ftp_source(pair, flow["source"])
    doc["simulation"]["duration"] = f"{timing(scenario, quick).duration_s:g}s"
    return doc


def sources_of(label: str, pairs: dict[str, Any]) -> tuple[Callable[[int], dict], dict]:
    """(source number -> pair whose FTP source it runs, the pair whose queue the switches run)."""
    if label in pairs["pairs"]:
        pair = pairs["pairs"][label]
        return (lambda _n: pair), pair
    mixed = pairs["mixed"][label]
    protocols = pairs["protocols"]

    def per_source(number: int) -> dict[str, Any]:
        return pairs["pairs"][protocols[mixed["sources"][number - 1]]]

    return per_source, pairs["pairs"][mixed["queue_of"]]


def run_pair(scenario: int, label: str, pairs: dict[str, Any], quick: bool) -> Results:
    return run_text(tomli_w.dumps(scenario_doc(scenario, label, pairs, quick)))


def run_case(scenario: int, label: str, pairs: dict[str, Any], quick: bool) -> dict[str, Any]:
    """One case on a worker: the pair's run reduced to its statistics (and window traces for
    the figures of S3 and S7)."""
    results = run_pair(scenario, label, pairs, quick)
    return {
        "conserved": results.conserved,
        "stats": measure(results, scenario, quick),
        "traces": results.traces if scenario in (3, 7) else None,
    }


# --- measuring -----------------------------------------------------------------------------


def measure(results: Results, scenario: int, quick: bool) -> pd.DataFrame:
    """Per source number (and phase for S3): mean and SD of the interval means."""
    t = timing(scenario, quick)
    table = interval_table(results, t.interval_s, end_s=t.duration_s, packet_bytes=PACKET_BYTES)
    table = table[~table["flow"].str.endswith(".ack")].copy()
    table["source"] = table["flow"].map(source_number)
    telnets = TELNET.get(scenario, set())
    is_telnet = table["source"].isin(telnets)
    table.loc[is_telnet, "throughput"] *= PACKET_BYTES / TELNET_BYTES
    kinds = results.flows.set_index("flow")["kind"].astype(str)
    is_tcp = table["flow"].map(kinds) == "tcp"
    table.loc[is_tcp, "throughput"] *= PACKET_BYTES / TCP_PAYLOAD_BYTES
    if scenario == 3:
        return phases(table)
    kept = table[table["interval"] > 0]
    grouped = kept.groupby("source", sort=False)[["throughput", "drop_rate", "retx_rate", "rtt"]]
    stats = grouped.mean().add_suffix("_mean").join(grouped.std(ddof=1).add_suffix("_sd"))
    stats = stats.reset_index()
    stats["phase"] = ""
    return stats


def phases(table: pd.DataFrame) -> pd.DataFrame:
    names = {1: "background_off", 2: "background_on"}
    kept = table[table["interval"].isin(names)].copy()
    kept["phase"] = kept["interval"].map(names)
    for metric in ("throughput", "drop_rate", "retx_rate", "rtt"):
        kept[f"{metric}_mean"] = kept[metric]
        kept[f"{metric}_sd"] = np.nan
    return kept


def source_number(flow: str) -> str:
    if flow == "bkg":
        return "Bkg"
    return flow.removeprefix("src")


# --- comparing -----------------------------------------------------------------------------


def tolerance(paper_row: Any, quick: bool) -> Tolerance | None:
    """The acceptance tolerances of this reproduction; None = reported for comparison only."""
    widen = 2.0 if quick else 1.0
    s, pair, src, metric = paper_row.scenario, paper_row.pair, paper_row.source, paper_row.metric
    telnet = src in TELNET.get(s, set())
    if s == 4 and src == "3":
        return (
            Tolerance(relative=0.1 * widen) if metric == "throughput" and pair in FQ_PAIRS else None
        )
    if telnet and metric == "rtt" and pair in FQ_PAIRS:
        return Tolerance(absolute=0.02 * widen)
    if telnet or src == "Bkg":
        return None
    if pp_source(s, pair, src) and metric in ("drop_rate", "retx_rate") and s != 3:
        return Tolerance(absolute=0.02 * widen)
    if metric == "throughput":
        return throughput_tolerance(s, pair, widen)
    if s == 1 and metric == "rtt" and paper_row.value == 1.0:
        return Tolerance(relative=0.03 * widen)
    if s == 2 and pair == "DEC/DEC" and metric == "drop_rate":
        return Tolerance(absolute=0.02 * widen)
    return None


def pp_source(s: int, pair: str, src: str) -> bool:
    """Whether source ``src`` runs PP_CTH under ``pair`` (scenario 5: PP1 and PP2 of a mix)."""
    if s == 5:
        return pair.startswith("PP/") and src in ("1", "2")
    return pair == "PP/FQ"


def throughput_tolerance(s: int, pair: str, widen: float) -> Tolerance | None:
    three = Tolerance(relative=0.03 * widen)
    if s == 1:
        return three
    if s == 2 and pair in ("PP/FQ", "DEC/DEC"):
        return three
    if s == 3 and pair == "PP/FQ":
        return three
    if s == 4 and pair in FQ_PAIRS:
        return Tolerance(relative=0.1 * widen)
    if s == 6 and pair in ("G/FCFS", "JK/FCFS", "JK/FQ", "DEC/FQB", "PP/FQ"):
        return three
    if s in (7, 8) and pair == "PP/FQ":
        return Tolerance(relative=0.1 * widen)
    return None


def lookup(stats: pd.DataFrame, source: str, metric: str, phase: str) -> float:
    hit = stats[(stats["source"] == source) & (stats["phase"] == phase)]
    if hit.empty:
        return math.nan
    return float(hit.iloc[0][f"{metric}_mean"])


def experiment_name(row: Any) -> str:
    phase = f" ({row.phase.replace('_', ' ')})" if row.phase else ""
    return f"S{row.scenario} {row.pair} src {row.source}{phase}"


def add_rows(
    report: Report, paper: pd.DataFrame, runs: dict, quick: bool, failed: dict | None = None
) -> None:
    for row in paper.itertuples(index=False):
        stats = runs.get((row.scenario, row.pair))
        if stats is None:
            note = (failed or {}).get((row.scenario, row.pair), "not run (scenario not selected)")
            measured = math.nan
        else:
            measured = lookup(stats, row.source, row.metric, row.phase)
            note = "" if not math.isnan(measured) else "no samples in the measured intervals"
        report.add(
            Row(experiment_name(row), row.metric, row.value, measured, tolerance(row, quick), note)
        )


# --- figures -------------------------------------------------------------------------------


def utility_figure(scenario: int, runs: dict) -> Figure | None:
    """Throughput (x) against RTT (y), a box of +-3 SD per source (the text's 95% CI)."""
    entries = [(pair, stats) for (s, pair), stats in runs.items() if s == scenario]
    if not entries:
        return None
    fig = Figure(figsize=(7, 5), layout="constrained")
    ax = fig.subplots()
    for k, (pair, stats) in enumerate(entries):
        colour = f"C{k % 10}"
        for r in stats.itertuples(index=False):
            if math.isnan(r.rtt_mean):
                continue
            ax.scatter(r.throughput_mean, r.rtt_mean, s=4, color=colour)
            ax.annotate(str(r.source), (r.throughput_mean, r.rtt_mean), color=colour)
            dx, dy = 3 * nan0(r.throughput_sd), 3 * nan0(r.rtt_sd)
            if dx or dy:
                box = Rectangle(
                    (r.throughput_mean - dx, r.rtt_mean - dy), 2 * dx, 2 * dy, fill=False, ec=colour
                )
                ax.add_patch(box)
        ax.plot([], [], color=colour, label=pair)
    ax.set_xlabel("throughput (pkt/s)")
    ax.set_ylabel("round-trip delay (s, log)")
    ax.set_yscale("log")
    ax.set_title(f"Scenario {scenario}: utility diagram (boxes: ±3 SD)")
    ax.autoscale()
    ax.legend(fontsize="small")
    return fig


def nan0(x: float) -> float:
    return 0.0 if math.isnan(x) else float(x)


WINDOW_TRACES = ("window", "cwnd", "outstanding")


FTP_WINDOW = {3: 40, 7: 60}


def in_packets(sel: pd.DataFrame, scenario: int) -> np.ndarray:
    """TCP's cwnd (bytes) as its usable window in packets: cwnd / mss, capped by rwnd."""
    values = sel["value"].to_numpy(dtype=float, copy=True)
    cwnd = (sel["var"] == "cwnd").to_numpy()
    values[cwnd] = np.minimum(values[cwnd] / TCP_PAYLOAD_BYTES, FTP_WINDOW[scenario])
    return values


def window_figure(scenario: int, traces: dict) -> Figure | None:
    """Window, usable cwnd or PP's outstanding packets of sources 1 and 2 against time."""
    entries = [(pair, t) for (s, pair), t in traces.items() if s == scenario]
    if not entries:
        return None
    fig = Figure(figsize=(8, 1.8 * len(entries)))
    axes = fig.subplots(len(entries), 1, sharex=True)
    axes = np.atleast_1d(axes)
    for ax, (pair, frame) in zip(axes, entries, strict=True):
        for flow in ("src1", "src2"):
            sel = frame[(frame["flow"] == flow) & frame["var"].isin(WINDOW_TRACES)]
            ax.step(sel["time_s"], in_packets(sel, scenario), where="post", lw=0.8, label=flow)
        names = sorted(set(frame["var"]) & set(WINDOW_TRACES))
        ax.set_ylabel(f"{pair}\n{'/'.join(names)}", fontsize="small")
    axes[0].legend(fontsize="small")
    axes[-1].set_xlabel("time (s)")
    return fig


def probe_figure(traces: dict) -> Figure | None:
    """Figure 6.21: PP_CTH source 1 in S7, probe, predicted spacing and alpha over 100 s."""
    frame = traces.get((7, "PP/FQ"))
    if frame is None:
        return None
    sel = frame[frame["flow"] == "src1"]
    start = 200.0
    sel = sel[(sel["time_s"] >= start) & (sel["time_s"] < start + 100)]
    fig = Figure(figsize=(8, 4), layout="constrained")
    ax = fig.subplots()
    for name, style in (("probe", "-"), ("predicted_spacing", "--")):
        s = sel[sel["var"] == name]
        ax.step(s["time_s"], s["value"], where="post", ls=style, label=name)
    ax.set_xlabel("time (s)")
    ax.set_ylabel("inter-ack spacing (s)")
    alpha = sel[sel["var"] == "alpha"]
    ax2 = ax.twinx()
    ax2.step(alpha["time_s"], alpha["value"], where="post", ls=":", color="C2", label="alpha")
    ax2.set_ylabel("alpha")
    ax2.set_ylim(0, 1)
    ax.set_ylim(0, max(1.0, 1.2 * float(sel[sel["var"] == "probe"]["value"].max() or 0)))
    for axis in (ax, ax2):
        axis.ticklabel_format(axis="y", useOffset=False)
    ax.legend(loc="upper left", fontsize="small")
    ax2.legend(loc="upper right", fontsize="small")
    return fig


# --- driver --------------------------------------------------------------------------------


def labels_for(scenario: int, paper: pd.DataFrame) -> list[str]:
    if scenario == 5:
        return list(dict.fromkeys(paper[paper["scenario"] == 5]["pair"]))
    return PAIRS


def run(
    out_dir: Path,
    experiment: str | None = None,
    quick: bool = False,
    progress: bool = False,
    client: Any = None,
) -> Report:
    """Runs the selected scenarios' pairs as cases on the executor (``client``: a Dask
    client; by default ``$FAIRGATE_SCHEDULER`` or the local cluster)."""
    report = Report("keshav", TITLE, SOURCE)
    pairs = load_pairs()
    paper = load_paper()
    selected = [int(experiment)] if experiment else [int(e) for e in EXPERIMENTS]
    keys = {(s, label): f"s{s}-{label}" for s in selected for label in labels_for(s, paper)}
    cases = [Case(key, run_case, (s, label, pairs, quick)) for (s, label), key in keys.items()]
    values, errors = run_cases(cases, client, progress, desc="keshav")
    runs: dict = {}
    traces: dict = {}
    failed: dict = {}
    for (scenario, label), key in keys.items():
        if key in errors:
            failed[(scenario, label)] = f"run failed: {errors[key]}"
            report.notes.append(f"S{scenario} {label}: run failed: {errors[key]}")
            continue
        value = values[key]
        if not value["conserved"]:
            report.notes.append(f"S{scenario} {label}: conservation violated")
        runs[(scenario, label)] = value["stats"]
        if value["traces"] is not None:
            traces[(scenario, label)] = value["traces"]
    add_rows(report, paper[paper["scenario"].isin(selected)], runs, quick, failed)
    out_dir.mkdir(parents=True, exist_ok=True)
    figures = {f"keshav_s{s}_utility.png": utility_figure(s, runs) for s in selected}
    figures |= {f"keshav_s{s}_window.png": window_figure(s, traces) for s in (3, 7)}
    figures["keshav_s7_pp_probe.png"] = probe_figure(traces)
    for name, fig in figures.items():
        if fig is not None:
            report.figures.append(save(fig, out_dir / name, dpi=110))
    report.notes.extend(notes(quick))
    report.notes.extend(fairness_notes(runs))
    return report


FTP_SOURCES = {2: 6, 6: 4, 7: 2, 8: 2}
"""Scenarios whose PP/FQ fairness this reproduction checks (Jain's index >= 0.99 in S2, S6, S7)."""


def jain_index(values: list[float]) -> float:
    """(sum x)^2 / (n sum x^2): 1 when all equal, 1/n when one source takes everything; the
    core computes it (the same function as the run summary's fairness)."""
    return _core.jain_index(values)


def fairness_notes(runs: dict) -> list[str]:
    """Jain's index of the FTP throughputs per pair, for the scenarios FTP_SOURCES names."""
    out = []
    for scenario, count in FTP_SOURCES.items():
        indices = []
        for pair in PAIRS:
            stats = runs.get((scenario, pair))
            if stats is None:
                continue
            thr = [lookup(stats, str(n), "throughput", "") for n in range(1, count + 1)]
            indices.append(f"{pair} {jain_index(thr):.3f}")
        if indices:
            out.append(f"S{scenario} Jain's index of the FTP throughputs: " + ", ".join(indices))
    return out


def notes(quick: bool) -> list[str]:
    mode = "quick: 4 intervals of 50 s (S7, S8: 100 s)" if quick else "7 intervals of 200 s"
    return [
        f"Intervals: {mode}, the first discarded; S3: background off = [300, 600) s, on = "
        "[600, 900] s, one interval each (no SD).",
        "Telnets: Generic, window 5, a 40-byte packet handed over after exponential gaps of "
        "mean 5 s.",
        "Tolerances (a decision of this reproduction): 3% on the deterministic rows, ±0.02 s "
        "on FQ Telnet RTTs, ±0.02/s "
        "on PP/FQ drops (S2, S4-S8), 10% on S4's FQ firewall and S7/S8 PP/FQ throughput; quick "
        "mode doubles them. Rows with tolerance '-' are stochastic or phase-sensitive and "
        "reported for comparison only.",
    ]

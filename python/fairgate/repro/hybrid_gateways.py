"""[Vaidyanathan99] chapter 3: buffer management under start-time fair queueing (E3.1-E3.5);
chapter 4 (the spoofing gateway, E4.1-E4.5) is in :mod:`fairgate.repro.hybrid_ch4`.

Ten Reno connections with window scaling and infinite transfers share one router's 2 Mb/s
bottleneck. Each scheme (drop-tail, drop-from-front, RED, LQD, RND, PFD, PFD with RTT-
proportional thresholds, quasi-pushout PFD, all under start-time FQ, plus FCFS and packet round
robin with drop-tail) runs over a buffer grid given in link-milliseconds, with several seeds;
goodput and Jain's fairness are taken over the whole run ([Vaidyanathan99, §3.4.1]) and
reported as the mean over seeds with a 95% Student-t interval; every run is a case on the
sweep executor.

Decisions where the text is silent (docs/reproductions/hybrid_gateways.md gives the reasons):
- 1000-byte segments (1040 B on the wire); B = round(ms x 250 B / 1040 B), at least 2 packets.
- Low RTT: every connection 20 ms; heterogeneous: 20, 40, ..., 200 ms (connection k).
- rwnd 1 MB with window scale 5, no delayed ACKs, no timestamps, 10 ms timer ticks (set in the
  scenario: fairgate's TCP defaults are ns-3's), start times uniform in [0, 1) s.
- PFD thresh 0.2, p 0.02 [Vaidyanathan99, §3.3]; RTT dimensioning uses the propagation RTTs,
  known a priori (§3.4.3); RED is the global FQ-RED of docs/models/fq_red.md.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pandas as pd
from matplotlib.figure import Figure

from fairgate import _core
from fairgate.plot import save
from fairgate.repro import hybrid_ch4
from fairgate.repro.cases import Case, run_cases
from fairgate.repro.report import Report, Row, Tolerance
from fairgate.runner import run_text
from fairgate.sweeps.stats import repetitions

TITLE = "Vaidyanathan 1999, chapters 3 and 4: buffer management and spoofing gateways"
SOURCE = "[Vaidyanathan99, §3.5, figs. 3.5-3.9; §4.4, figs. 4.5-4.11]"
CHAPTER3 = ["3.2", "3.3"]
"""3.2: low RTT (figs. 3.5, 3.6); 3.3: RTTs 20-200 ms (figs. 3.7-3.9, E3.3-E3.5)."""
PACKET_SIZE = "mss"
"""E3.3-E3.4 again with 536- and 1460-byte segments (:mod:`fairgate.repro.hybrid_packet_size`)."""
EXPERIMENTS = [*CHAPTER3, PACKET_SIZE, *hybrid_ch4.EXPERIMENTS]

LINK_BPS = 2_000_000
MSS = 1000
BUFFER_MS = [25, 50, 100, 200, 400]
QUICK_BUFFER_MS = [25, 100, 400]
DURATION_S = 500.0
QUICK_DURATION_S = 100.0
SEEDS = 10
QUICK_SEEDS = 3
FLOWS = 10
RTTS_MS = {"3.2": [20] * FLOWS, "3.3": [20 * (k + 1) for k in range(FLOWS)]}
PFD = 'kind = "pfd", thresh = 0.2, p = 0.02'


def tcp_source(mss: int = MSS) -> str:
    """Reno with window scaling; the options the text leaves open pinned (module docstring)."""
    return (
        f'{{ kind = "tcp", cc = "reno", mss = {mss}, rwnd = 1000000, window_scale = 5, '
        'timestamps = false, delayed_ack = false, granularity = "10ms" }'
    )


FIG35_SCHEMES = ["FQ-PFD", "FQ-RED", "FQ-LQD", "FQ-RND"]
FIG35_MS = 100
QUICK_SCHEMES = {"3.2": FIG35_SCHEMES, "3.3": [*FIG35_SCHEMES, "FQ-PFD-RTT", "FQ-QPPFD"]}
"""--quick runs only the schemes the findings compare (the full run adds FCFS, RR, FQ-TD and
FQ-DFF to the tables and figures)."""
SCHEMES: dict[str, tuple[str, str]] = {
    "FCFS": ("fcfs", ""),
    "RR": ("wrr", 'kind = "droptail"'),
    "FQ-TD": ("stfq", 'kind = "droptail"'),
    "FQ-DFF": ("stfq", 'kind = "drop_from_front"'),
    "FQ-RED": ("stfq", 'kind = "red"'),
    "FQ-LQD": ("stfq", 'kind = "lqd"'),
    "FQ-RND": ("stfq", 'kind = "rnd"'),
    "FQ-PFD": ("stfq", PFD),
    "FQ-PFD-RTT": ("stfq", PFD + ', thresholds = "rtt", rtts = {rtts}'),
    "FQ-QPPFD": ("stfq", 'kind = "quasi_pushout_pfd", thresh = 0.2, p = 0.02'),
}


def buffer_packets(ms: float, mss: int = MSS) -> int:
    """B in packets of `mss` + 40 bytes for a buffer of `ms` link-milliseconds (2 Mb/s: 1 ms =
    250 bytes)."""
    return max(2, round(ms * LINK_BPS / 8 / 1000 / (mss + 40)))


def scenario(
    experiment: str,
    scheme: str,
    ms: float,
    seed: int,
    duration: float,
    sample_s: float = 0.0,
    mss: int = MSS,
) -> str:
    """The TOML of one run (sampled every `sample_s` seconds when given) with `mss`-byte
    segments."""
    rtts = RTTS_MS[experiment]
    rtt_list = "[" + ", ".join(f'"{r}ms"' for r in rtts) + "]"
    kind, buffer = SCHEMES[scheme]
    limit = buffer_packets(ms, mss)
    if kind == "fcfs":
        queue = f'{{ kind = "fcfs", limit = {limit} }}'
    else:
        manager = buffer.format(rtts=rtt_list)
        queue = f'{{ kind = "{kind}", buffer = {{ {manager}, limit = {limit} }} }}'
    return f"""name = "hybrid-e{experiment}-{scheme}-{ms}ms"
[simulation]
duration = "{duration}s"
{f'sample_interval = "{sample_s}s"' if sample_s else ""}
seed = {seed}
[topology]
kind = "dumbbell"
senders = {FLOWS}
bottleneck = {{ rate = "2Mbps", delay = "1ms", queue = {queue} }}
access = {{ rate = "100Mbps", delay = "0.5ms" }}
rtt = {rtt_list}
[[flows]]
name = "tcp{{i}}"
count = {FLOWS}
src = "s{{i}}"
dst = "d{{i}}"
start = {{ dist = "uniform", min = "0s", max = "1s" }}
source = {tcp_source(mss)}
"""


def run_one(
    experiment: str, scheme: str, ms: float, seed: int, duration: float, mss: int = MSS
) -> dict:
    """Goodput (Mb/s, all flows) and Jain's index of the per-flow goodputs of one run."""
    results = run_text(scenario(experiment, scheme, ms, seed, duration, mss=mss))
    if not results.conserved:
        raise RuntimeError(f"conservation violated: E{experiment} {scheme} {ms} ms seed {seed}")
    flows = results.flows[results.flows["role"] == "data"]
    rates = (flows["goodput_bytes"].astype(float) * 8 / duration).tolist()
    return {
        "experiment": experiment,
        "scheme": scheme,
        "buffer_ms": ms,
        "mss": mss,
        "buffer_pkts": buffer_packets(ms, mss),
        "seed": seed,
        "goodput_mbps": sum(rates) / 1e6,
        "fairness": _core.jain_index(rates),
    }


def goodput_over_time(scheme: str, ms: float, seed: int, duration: float) -> dict:
    """Fig. 3.5: the ten connections' goodput averaged from the start up to each second."""
    results = run_text(scenario("3.2", scheme, ms, seed, duration, sample_s=1.0))
    data = results.flows.loc[results.flows["role"] == "data", "flow"]
    fs = results.flow_series[results.flow_series["flow"].isin(data)]
    total = fs.groupby("time_s")["goodput_bytes"].sum()
    total = total[total.index > 0]
    return {"time_s": total.index.tolist(), "mbps": (total * 8 / total.index / 1e6).tolist()}


def figure_3_5(
    quick: bool, out_dir: Path, progress: bool = False, client: Any = None
) -> Path | None:
    """Goodput against time for PFD, RED, LQD and RND under start-time FQ, one seed, at
    FIG35_MS link-milliseconds of buffer [Vaidyanathan99, fig. 3.5]."""
    duration = QUICK_DURATION_S if quick else DURATION_S
    args = (FIG35_MS, 1, duration)
    cases = [Case(f"fig3.5-{s}", goodput_over_time, (s, *args)) for s in FIG35_SCHEMES]
    values, _ = run_cases(cases, client, progress, desc="hybrid-gateways fig. 3.5")
    if not values:
        return None
    fig = Figure(figsize=(8, 4), layout="constrained")
    ax = fig.subplots()
    for scheme in FIG35_SCHEMES:
        curve = values.get(f"fig3.5-{scheme}")
        if curve:
            ax.plot(curve["time_s"], curve["mbps"], lw=1, label=scheme)
    ax.set_xlabel("time (s)")
    ax.set_ylabel("goodput since the start (Mb/s, all connections)")
    ax.grid(alpha=0.3)
    ax.legend(fontsize="small")
    fig.suptitle(f"Fig. 3.5: ten 20 ms connections, 2 Mb/s, {FIG35_MS} ms buffer, seed 1")
    path = out_dir / "hybrid_fig3_5.png"
    fig.savefig(path, dpi=110)
    return path


def sweep(
    experiments: list[str], quick: bool, progress: bool = False, client: Any = None
) -> tuple[pd.DataFrame, dict[str, str]]:
    """Every (experiment, scheme, buffer, seed) run as a case on the sweep executor, one row
    each in case order; the errors of the cases that failed, by key."""
    grid = QUICK_BUFFER_MS if quick else BUFFER_MS
    seeds = range(1, (QUICK_SEEDS if quick else SEEDS) + 1)
    duration = QUICK_DURATION_S if quick else DURATION_S
    cases = [
        Case(f"e{e}-{scheme}-{ms}ms-s{seed}", run_one, (e, scheme, ms, seed, duration))
        for e in experiments
        for scheme in (QUICK_SCHEMES[e] if quick else SCHEMES)
        for ms in grid
        for seed in seeds
    ]
    values, errors = run_cases(cases, client, progress, desc="hybrid-gateways")
    rows = [values[c.key] for c in cases if c.key in values]
    return pd.DataFrame(rows), errors


def summarise(runs: pd.DataFrame) -> pd.DataFrame:
    """Mean, std and 95% half-width (Student t over seeds) per (experiment, scheme, buffer)."""
    keys = ["experiment", "mss", "scheme", "buffer_ms", "buffer_pkts"]
    out = repetitions(runs, keys, ["goodput_mbps", "fairness"])
    for metric in ("goodput_mbps", "fairness"):
        out[f"{metric}_ci95"] = out[f"{metric}_mean"] - out[f"{metric}_ci_low"]
    return out


def _mean(
    table: pd.DataFrame, experiment: str, scheme: str, metric: str, ms: float | None = None
) -> float:
    part = table[(table["experiment"] == experiment) & (table["scheme"] == scheme)]
    if ms is not None:
        part = part[part["buffer_ms"] == ms]
    return float(part[f"{metric}_mean"].mean()) if len(part) else math.nan


def findings(table: pd.DataFrame) -> list[tuple[str, str, bool, str]]:
    """The thesis's qualitative findings as (experiment, finding, holds, measured numbers)."""
    out: list[tuple[str, str, bool, str]] = []
    grid = sorted(table["buffer_ms"].unique())
    small, large = grid[0], grid[-1]

    def m(exp: str, scheme: str, metric: str, ms: float | None = None) -> float:
        return _mean(table, exp, scheme, metric, ms)

    def add(exp: str, text: str, holds: bool, numbers: str) -> None:
        out.append((exp, text, bool(holds), numbers))

    if "3.2" in set(table["experiment"]):
        g = {s: m("3.2", s, "goodput_mbps") for s in ("FQ-PFD", "FQ-RED", "FQ-LQD", "FQ-RND")}
        add(
            "3.2",
            "PFD highest goodput of PFD, RED, LQD, RND (fig. 3.5-3.6)",
            g["FQ-PFD"] >= max(g.values()),
            ", ".join(f"{k} {v:.3f}" for k, v in g.items()),
        )
        f = {s: m("3.2", s, "fairness") for s in ("FQ-PFD", "FQ-RED", "FQ-LQD", "FQ-RND")}
        add(
            "3.2",
            "every FQ scheme F >= 0.99 at low RTT (fig. 3.6)",
            min(f.values()) >= 0.99,
            ", ".join(f"{k} {v:.3f}" for k, v in f.items()),
        )
    if "3.3" not in set(table["experiment"]):
        return out
    e = "3.3"
    rnd_g, pfd_g = m(e, "FQ-RND", "goodput_mbps", small), m(e, "FQ-PFD", "goodput_mbps", small)
    add(
        e,
        f"RND goodput above PFD at the smallest buffer ({small} ms)",
        rnd_g > pfd_g,
        f"RND {rnd_g:.3f}, PFD {pfd_g:.3f} Mb/s",
    )
    rnd_f, pfd_f = m(e, "FQ-RND", "fairness", small), m(e, "FQ-PFD", "fairness", small)
    add(
        e,
        f"RND less fair than PFD at the smallest buffer ({small} ms)",
        rnd_f < pfd_f,
        f"RND {rnd_f:.3f}, PFD {pfd_f:.3f}",
    )
    lqd_f, rnd_fm = m(e, "FQ-LQD", "fairness"), m(e, "FQ-RND", "fairness")
    add(
        e,
        "LQD fairer than RND (mean over buffers)",
        lqd_f > rnd_fm,
        f"LQD {lqd_f:.3f}, RND {rnd_fm:.3f}",
    )
    pfd_fm = m(e, "FQ-PFD", "fairness")
    add(
        e,
        "PFD fairer than LQD (mean over buffers)",
        pfd_fm > lqd_f,
        f"PFD {pfd_fm:.3f}, LQD {lqd_f:.3f}",
    )
    g = {s: m(e, s, "goodput_mbps") for s in ("FQ-PFD", "FQ-RED", "FQ-LQD", "FQ-RND")}
    add(
        e,
        "RED lowest goodput of PFD, RED, LQD, RND (mean)",
        g["FQ-RED"] <= min(g.values()),
        ", ".join(f"{k} {v:.3f}" for k, v in g.items()),
    )
    red_f = m(e, "FQ-RED", "fairness", small)
    add(
        e,
        f"PFD fairer than RED at the smallest buffer ({small} ms)",
        pfd_f > red_f,
        f"PFD {pfd_f:.3f}, RED {red_f:.3f}",
    )
    rtt_f, rtt_g = m(e, "FQ-PFD-RTT", "fairness"), m(e, "FQ-PFD-RTT", "goodput_mbps")
    add(
        "3.4",
        "RTT dimensioning raises PFD's fairness (mean)",
        rtt_f > pfd_fm,
        f"with {rtt_f:.3f}, without {pfd_fm:.3f}",
    )
    add(
        "3.4",
        "RTT dimensioning lowers PFD's goodput somewhat (mean)",
        rtt_g < g["FQ-PFD"],
        f"with {rtt_g:.3f}, without {g['FQ-PFD']:.3f} Mb/s",
    )
    lo, hi = m(e, "FQ-PFD-RTT", "fairness", small), m(e, "FQ-PFD-RTT", "fairness", large)
    add(
        "3.4",
        f"dimensioned PFD's fairness falls as the buffer grows ({small} -> {large} ms)",
        hi < lo,
        f"{lo:.3f} -> {hi:.3f}",
    )
    qp = table[(table["experiment"] == e) & (table["scheme"] == "FQ-QPPFD")]
    add(
        "3.5",
        "quasi-pushout PFD fairness >= 0.92 at every buffer",
        bool((qp["fairness_mean"] >= 0.92).all()),
        f"min {qp['fairness_mean'].min():.3f}",
    )
    qp_g = m(e, "FQ-QPPFD", "goodput_mbps")
    add(
        "3.5",
        "quasi-pushout PFD goodput within 5% of PFD (mean)",
        abs(qp_g - g["FQ-PFD"]) <= 0.05 * g["FQ-PFD"],
        f"QP {qp_g:.3f}, PFD {g['FQ-PFD']:.3f}",
    )
    return out


def figure(table: pd.DataFrame, experiment: str) -> Figure:
    """Goodput and fairness against buffer size per scheme, with 95% intervals."""
    fig = Figure(figsize=(11, 4), layout="constrained")
    axes = fig.subplots(1, 2)
    part = table[table["experiment"] == experiment]
    for scheme, rows in part.groupby("scheme", sort=False):
        for ax, metric in zip(axes, ("goodput_mbps", "fairness"), strict=True):
            ax.errorbar(
                rows["buffer_ms"],
                rows[f"{metric}_mean"],
                yerr=rows[f"{metric}_ci95"].fillna(0.0),
                marker="o",
                ms=3,
                capsize=2,
                label=scheme,
            )
    axes[0].set_ylabel("goodput (Mb/s, all connections)")
    axes[1].set_ylabel("Jain's fairness index")
    for ax in axes:
        ax.set_xscale("log")
        ax.set_xlabel("buffer (link-milliseconds)")
        ax.grid(alpha=0.3)
    axes[1].legend(fontsize="small")
    fig.suptitle(f"E{experiment}: RTTs {'20 ms' if experiment == '3.2' else '20-200 ms'}")
    return fig


def run(
    out_dir: Path,
    experiment: str | None = None,
    quick: bool = False,
    progress: bool = False,
    client: Any = None,
) -> Report:
    """Runs the chosen experiments (default: chapters 3 and 4) as cases on the executor
    (``client``: a Dask client; by default ``$FAIRGATE_SCHEDULER`` or the local cluster) and
    returns the report (findings and acceptance checks as PASS/MISS rows with the numbers)."""
    experiments = [experiment] if experiment else EXPERIMENTS
    report = Report("hybrid_gateways", TITLE, SOURCE)
    chapter3 = [e for e in experiments if e in CHAPTER3]
    if chapter3:
        run_chapter3(out_dir, chapter3, quick, report, progress, client)
    if PACKET_SIZE in experiments:
        from fairgate.repro import hybrid_packet_size

        hybrid_packet_size.run(out_dir, quick, report, progress, client)
    chapter4 = [e for e in experiments if e in hybrid_ch4.EXPERIMENTS]
    if chapter4:
        hybrid_ch4.run(out_dir, chapter4, quick, report, progress, client)
    return report


def add_findings(report: Report, found: list[tuple[str, str, bool, str]]) -> None:
    """Each (experiment, finding, holds, numbers) as an ok/MISS row and a note."""
    for exp, text, holds, numbers in found:
        report.add(Row(f"E{exp}", text, 1.0, 1.0 if holds else 0.0, Tolerance(), numbers))
        report.notes.append(f"E{exp} {'PASS' if holds else 'MISS'}: {text}: {numbers}")


def run_chapter3(
    out_dir: Path,
    experiments: list[str],
    quick: bool,
    report: Report,
    progress: bool = False,
    client: Any = None,
) -> None:
    """The chapter-3 sweep, its findings, tables and figures, added to ``report``."""
    runs, errors = sweep(experiments, quick, progress, client)
    if runs.empty:
        raise RuntimeError(f"every run failed, e.g. {next(iter(errors.items()))}")
    table = summarise(runs)
    out_dir.mkdir(parents=True, exist_ok=True)
    runs.to_csv(out_dir / "hybrid_gateways_runs.csv", index=False)
    table.to_csv(out_dir / "hybrid_gateways_summary.csv", index=False)
    report.notes.extend(f"run failed: {key}: {error}" for key, error in errors.items())
    add_findings(report, findings(table))
    for e in experiments:
        png = out_dir / f"hybrid_e{e.replace('.', '_')}.png"
        report.figures.append(save(figure(table, e), png, dpi=110))
    if "3.2" in experiments:
        fig35 = figure_3_5(quick, out_dir, progress, client)
        report.figures.extend([fig35] if fig35 else [])
    seeds = QUICK_SEEDS if quick else SEEDS
    duration = QUICK_DURATION_S if quick else DURATION_S
    report.notes.append(
        f"{seeds} seeds x {duration:g} s per point; buffers {table['buffer_ms'].unique().tolist()}"
        " ms; means over seeds, 95% Student-t intervals in hybrid_gateways_summary.csv."
    )

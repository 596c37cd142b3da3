"""[Vaidyanathan99] chapter 3 at other packet sizes: the heterogeneous-RTT study (E3.3, E3.4)
repeated with 536-byte and 1460-byte segments beside the 1000-byte runs of experiment 3.3.

The thesis does not give its OPNET segment size, and the buffer is given in link-milliseconds,
so the segment size sets how many packets a buffer holds (B = round(ms x 250 B / (MSS + 40 B)))
and with it the soft thresholds of PFD and of its RTT-dimensioned variant (b_i = RTT_i / Σ RTT
x B). The findings that depend on packet counts are checked once per size: RTT dimensioning
against plain PFD (fairness up, goodput down, fairness falling with the buffer), PFD against
LQD, RND against PFD at the smallest buffer. Same seeds, run length and TCP as experiment 3.3.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd

from fairgate.repro.cases import Case, run_cases
from fairgate.repro.report import Report

EXPERIMENT = "mss"
SIZES = [536, 1460]
"""The classic default MSS and Ethernet's; 1000 B is experiment 3.3 itself."""
QUICK_SIZES = [536]
SCHEMES = ["FQ-PFD", "FQ-PFD-RTT", "FQ-LQD", "FQ-RND"]
QUICK_SCHEMES = ["FQ-PFD", "FQ-PFD-RTT"]
QUICK_BUFFER_MS = [25, 400]
QUICK_SEEDS = 2


def cases(quick: bool) -> list[Case]:
    """One case per (size, scheme, buffer, seed) of the heterogeneous-RTT set-up."""
    from fairgate.repro import hybrid_gateways as hg

    sizes = QUICK_SIZES if quick else SIZES
    schemes = QUICK_SCHEMES if quick else SCHEMES
    grid = QUICK_BUFFER_MS if quick else hg.BUFFER_MS
    seeds = range(1, (QUICK_SEEDS if quick else hg.SEEDS) + 1)
    duration = hg.QUICK_DURATION_S if quick else hg.DURATION_S
    return [
        Case(f"mss{mss}-{s}-{ms}ms-s{seed}", hg.run_one, ("3.3", s, ms, seed, duration, mss))
        for mss in sizes
        for s in schemes
        for ms in grid
        for seed in seeds
    ]


def findings(table: pd.DataFrame) -> list[tuple[str, str, bool, str]]:
    """Per segment size: the packet-count-dependent findings as (experiment, finding, holds,
    measured numbers)."""
    out: list[tuple[str, str, bool, str]] = []
    for mss, part in table.groupby("mss", sort=True):
        grid = sorted(part["buffer_ms"].unique())
        small, large = grid[0], grid[-1]

        def m(scheme: str, metric: str, ms: float | None = None, part: Any = part) -> float:
            rows = part[part["scheme"] == scheme]
            if ms is not None:
                rows = rows[rows["buffer_ms"] == ms]
            return float(rows[f"{metric}_mean"].mean())

        pkts = part.groupby("buffer_ms")["buffer_pkts"].first()
        size = f"{mss} B, B = {pkts[small]}-{pkts[large]} packets"
        pfd_f, rtt_f = m("FQ-PFD", "fairness"), m("FQ-PFD-RTT", "fairness")
        out.append(
            (
                "3.4",
                f"RTT dimensioning raises PFD's fairness (mean; {size})",
                rtt_f > pfd_f,
                f"with {rtt_f:.3f}, without {pfd_f:.3f}",
            )
        )
        pfd_g, rtt_g = m("FQ-PFD", "goodput_mbps"), m("FQ-PFD-RTT", "goodput_mbps")
        out.append(
            (
                "3.4",
                f"RTT dimensioning lowers PFD's goodput somewhat (mean; {size})",
                rtt_g < pfd_g,
                f"with {rtt_g:.3f}, without {pfd_g:.3f} Mb/s",
            )
        )
        lo, hi = m("FQ-PFD-RTT", "fairness", small), m("FQ-PFD-RTT", "fairness", large)
        out.append(
            (
                "3.4",
                f"dimensioned PFD's fairness falls as the buffer grows ({mss} B, "
                f"{small} -> {large} ms)",
                hi < lo,
                f"{lo:.3f} -> {hi:.3f}",
            )
        )
        if {"FQ-LQD", "FQ-RND"} <= set(part["scheme"]):
            lqd_f = m("FQ-LQD", "fairness")
            out.append(
                (
                    "3.3",
                    f"PFD fairer than LQD (mean; {mss} B)",
                    pfd_f > lqd_f,
                    f"PFD {pfd_f:.3f}, LQD {lqd_f:.3f}",
                )
            )
            rnd_f, pfd_small = m("FQ-RND", "fairness", small), m("FQ-PFD", "fairness", small)
            out.append(
                (
                    "3.3",
                    f"RND less fair than PFD at the smallest buffer ({mss} B, {small} ms)",
                    rnd_f < pfd_small,
                    f"RND {rnd_f:.3f}, PFD {pfd_small:.3f}",
                )
            )
    return out


def run(
    out_dir: Path, quick: bool, report: Report, progress: bool = False, client: Any = None
) -> None:
    """The packet-size sweep, its summary CSV and its per-size findings, added to
    ``report``."""
    from fairgate.repro import hybrid_gateways as hg

    todo = cases(quick)
    values, errors = run_cases(todo, client, progress, desc="hybrid-gateways packet size")
    report.notes.extend(f"run failed: {key}: {error}" for key, error in errors.items())
    runs = pd.DataFrame([values[c.key] for c in todo if c.key in values])
    if runs.empty:
        return
    table = hg.summarise(runs)
    out_dir.mkdir(parents=True, exist_ok=True)
    runs.to_csv(out_dir / "hybrid_packet_size_runs.csv", index=False)
    table.to_csv(out_dir / "hybrid_packet_size_summary.csv", index=False)
    hg.add_findings(report, findings(table))

"""[Byun07] satellite AQM behind a PEP: chapters 4-6 and the fluid models, in one command.

``fairgate reproduce satellite [--quick] [--experiment 4|5|6] --out DIR``. Every run is a case
on the sweep executor: chapter 4 (400 HTTP connections, drop marking: RED 1-4, AVQ, AVQRED),
chapter 5 (500 HTTP connections and UDP CBR at 80, 160 and 320 kb/s: RED 1-4, SRED 1-2, AVQ,
AVQRED, PFAVQRED), chapter 6 (500 connections, 15 minutes: RED and AVQRED with buffer flow
control FC1-FC5 and with drop marking). Each experiment also runs the testbed without AQM and
without a bottlenecking transmit queue, fits the fluid model's inputs ω, d, υ from it (stored
beside the results) and solves equations (4.1)-(4.5) or (6.1)-(6.6).

Every published number is reported beside fairgate's; the acceptance items of the source's
results (orderings and ratios, since its testbed was proprietary hardware) are PASS/MISS
checks. Decisions where the text is silent: satellite_setup.py, satellite_measure.py and
docs/reproductions/satellite.md. ``--quick`` runs 200 connections, reaches them in 20 s and
measures 30 s from 40 s, so its absolute numbers are not the source's; its checks are the same
with wider bounds.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd

from fairgate.repro import satellite_checks as checks
from fairgate.repro import satellite_plots as plots
from fairgate.repro.cases import Case, run_cases
from fairgate.repro.report import Report
from fairgate.repro.satellite_measure import run_case, run_inputs
from fairgate.repro.satellite_paper import CH4_SCHEMES, CH5_SCHEMES, CH6_CASES
from fairgate.repro.satellite_setup import (
    CONNECTIONS,
    MEASURE_S,
    QUICK_CONNECTIONS,
    QUICK_MEASURE_S,
    QUICK_RAMP_S,
    RAMP_S,
)

TITLE = "Byun 2007: AQM at a satellite gateway with a PEP (chapters 4-6, fluid models)"
SOURCE = "[Byun07, ch. 4-6, Tables 4.1-4.3, 5.1-5.2, 6.1-6.3; §4.4, §6.6 fluid models]"
EXPERIMENTS = ["4", "5", "6"]


def _ch6_args(name: str) -> tuple[str, int | None]:
    """('RED FC 2' -> ('RED 4', 2)), ('AVQRED (drop)' -> ('AVQRED', None))."""
    base = "RED 4" if name.startswith("RED") else "AVQRED"
    return base, (int(name.rsplit(" ", 1)[1]) if " FC " in name else None)


def cases(chapter: int, quick: bool) -> list[Case]:
    """Every run of one chapter, the fluid-input run included."""
    ramp = QUICK_RAMP_S if quick else RAMP_S
    measure = QUICK_MEASURE_S if quick else MEASURE_S[chapter]
    m = QUICK_CONNECTIONS if quick else CONNECTIONS[chapter]
    out = []
    if chapter in (4, 6):
        out.append(Case(f"ch{chapter}:inputs", run_inputs, (m, ramp, quick)))
    if chapter == 4:
        for s in CH4_SCHEMES:
            out.append(Case(f"ch4:{s}", run_case, (s, m, ramp, measure, quick)))
    if chapter == 5:
        for s in CH5_SCHEMES:
            out.append(Case(f"ch5:{s}", run_case, (s, m, ramp, measure, quick, None, True)))
    if chapter == 6:
        for name in CH6_CASES:
            scheme, fc = _ch6_args(name)
            out.append(Case(f"ch6:{name}", run_case, (scheme, m, ramp, measure, quick, fc)))
    return out


def _of(values: dict[str, Any], chapter: int) -> dict[str, Any]:
    prefix = f"ch{chapter}:"
    return {k[len(prefix) :]: v for k, v in values.items() if k.startswith(prefix)}


SCALARS = [
    "out_mean_bps",
    "out_std_bps",
    "in_mean_bps",
    "in_std_bps",
    "q_mean",
    "q_std",
    "drops",
    "marks",
    "drop_fraction",
    "p_mean",
    "p_std",
]


def runs_table(values: dict[str, Any]) -> pd.DataFrame:
    """One row of scalars per packet-level case (the fluid-input runs excluded)."""
    rows = []
    for key, v in values.items():
        if key.endswith(":inputs"):
            continue
        row = {"case": key, **{name: v[name] for name in SCALARS}}
        row.update({f"drop_{k}": v["clustering"][k] for k in ("mean_run", "longest_run", "gap_cv")})
        if "per_flow" in v:
            row["per_flow_std_bps"] = v["per_flow"]["std_bps"]
            row.update(v["per_flow"]["udp"])
        rows.append(row)
    return pd.DataFrame(rows)


def run(
    out_dir: Path,
    experiment: str | None = None,
    quick: bool = False,
    progress: bool = False,
    client: Any = None,
) -> Report:
    """Runs the chosen chapters (default all three) on the executor and returns the report."""
    chapters = [int(experiment)] if experiment else [4, 5, 6]
    every = [c for chapter in chapters for c in cases(chapter, quick)]
    values, errors = run_cases(every, client, progress, desc="satellite")
    report = Report("satellite", TITLE, SOURCE)
    for key, error in errors.items():
        report.notes.append(f"case {key} failed: {error}")
    if errors and not values:
        raise RuntimeError(f"every case failed, e.g. {next(iter(errors.items()))}")
    out_dir.mkdir(parents=True, exist_ok=True)
    runs_table(values).to_csv(out_dir / "satellite_runs.csv", index=False)
    for chapter in chapters:
        runs = _of(values, chapter)
        if chapter == 4:
            checks.chapter4(report, runs, quick, out_dir)
        elif chapter == 5:
            checks.chapter5(report, runs, quick)
        else:
            checks.chapter6(report, runs, quick, out_dir)
        for figure in plots.chapter_figures(chapter, runs, out_dir):
            report.figures.append(figure)
            report.notes.append(f"{figure.name}: {plots.DESCRIPTIONS[figure.stem]}")
    if quick:
        report.notes.append(
            "--quick: 200 connections reached in 20 s, 30 s measured from 40 s; absolute "
            "values are not comparable with the source's 15-20 minute runs."
        )
    return report

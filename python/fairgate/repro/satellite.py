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
from fairgate.repro.satellite_loop import LOOP_KEYS, add_rows, run_loop
from fairgate.repro.satellite_measure import run_case, run_inputs
from fairgate.repro.satellite_paper import CH4_SCHEMES, CH5_SCHEMES, CH6_CASES
from fairgate.repro.satellite_seeds import averaged, split_key, summary
from fairgate.repro.satellite_setup import (
    CONNECTIONS,
    MEASURE_S,
    QUICK_CONNECTIONS,
    QUICK_MEASURE_S,
    QUICK_RAMP_S,
    RAMP_S,
    SEEDS,
)

TITLE = "Byun 2007: AQM at a satellite gateway with a PEP (chapters 4-6, fluid models)"
SOURCE = "[Byun07, ch. 4-6, Tables 4.1-4.3, 5.1-5.2, 6.1-6.3; §4.4, §6.4 fluid models]"
EXPERIMENTS = ["4", "5", "6"]
SEED_SUFFIX = " seed "


def _ch6_args(name: str) -> tuple[str, int | None]:
    """('RED FC 2' -> ('RED 4', 2)), ('AVQRED (drop)' -> ('AVQRED', None))."""
    base = "RED 4" if name.startswith("RED") else "AVQRED"
    return base, (int(name.rsplit(" ", 1)[1]) if " FC " in name else None)


def seed_key(key: str, seed: int) -> str:
    """A case's key for ``seed``: seed 1 keeps the plain key ('ch4:RED 4'), others say it
    ('ch4:RED 4 seed 2')."""
    return key if seed == 1 else f"{key}{SEED_SUFFIX}{seed}"


def cases(chapter: int, quick: bool, seeds: tuple[int, ...] = SEEDS) -> list[Case]:
    """Every run of one chapter, each packet-level case once per seed of ``seeds`` (seed 1
    only in --quick); the fluid-input run and (chapter 4) the controlled PEP-loop runs once."""
    ramp = QUICK_RAMP_S if quick else RAMP_S
    measure = QUICK_MEASURE_S if quick else MEASURE_S[chapter]
    m = QUICK_CONNECTIONS if quick else CONNECTIONS[chapter]
    out = []
    if chapter in (4, 6):
        out.append(Case(f"ch{chapter}:inputs", run_inputs, (m, ramp, quick)))
    if chapter == 4:
        for scheme, key in LOOP_KEYS.items():
            out.append(Case(f"ch4:{key}", run_loop, (scheme,)))
    for seed in (1,) if quick else seeds:
        for name, args in _packet_cases(chapter).items():
            key = seed_key(f"ch{chapter}:{name}", seed)
            out.append(Case(key, run_case, (args[0], m, ramp, measure, quick, *args[1:], seed)))
    return out


def _packet_cases(chapter: int) -> dict[str, tuple[str, int | None, bool]]:
    """{name: (scheme, fc, udp)} of the chapter's packet-level cases."""
    if chapter == 4:
        return {s: (s, None, False) for s in CH4_SCHEMES}
    if chapter == 5:
        return {s: (s, None, True) for s in CH5_SCHEMES}
    return {name: (*_ch6_args(name), False) for name in CH6_CASES}


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
    """One row of scalars per packet-level run (``case``, ``seed``; the fluid-input and
    controlled-loop runs excluded)."""
    rows = []
    for key, v in values.items():
        case, seed = split_key(key, SEED_SUFFIX)
        if case.endswith(":inputs") or case.split(":", 1)[1] in LOOP_KEYS.values():
            continue
        row = {"case": case, "seed": seed, **{name: v[name] for name in SCALARS}}
        row.update({f"drop_{k}": v["clustering"][k] for k in ("mean_run", "longest_run", "gap_cv")})
        if "per_flow" in v:
            row["per_flow_std_bps"] = v["per_flow"]["std_bps"]
            row.update(v["per_flow"]["udp"])
        rows.append(row)
    return pd.DataFrame(rows)


def chapter_runs(values: dict[str, Any], chapter: int, stats: pd.DataFrame | None) -> dict:
    """The chapter's runs by name: seed 1's, with every scalar the mean over the seeds when
    ``stats`` (the repetition summary) is given."""
    runs = {k: v for k, v in _of(values, chapter).items() if SEED_SUFFIX not in k}
    return runs if stats is None else averaged(runs, stats, chapter)


def run(
    out_dir: Path,
    experiment: str | None = None,
    quick: bool = False,
    progress: bool = False,
    client: Any = None,
    seeds: tuple[int, ...] = SEEDS,
) -> Report:
    """Runs the chosen chapters (default all three) on the executor with ``seeds`` (seed 1
    first) and returns the report."""
    chapters = [int(experiment)] if experiment else [4, 5, 6]
    every = [c for chapter in chapters for c in cases(chapter, quick, seeds)]
    values, errors = run_cases(every, client, progress, desc="satellite")
    report = Report("satellite", TITLE, SOURCE)
    for key, error in errors.items():
        report.notes.append(f"case {key} failed: {error}")
    if errors and not values:
        raise RuntimeError(f"every case failed, e.g. {next(iter(errors.items()))}")
    out_dir.mkdir(parents=True, exist_ok=True)
    table = runs_table(values)
    table.to_csv(out_dir / "satellite_runs.csv", index=False)
    stats = summary(table) if table["seed"].nunique() > 1 else None
    if stats is not None:
        stats.to_csv(out_dir / "satellite_seeds.csv", index=False)
        report.notes.append(
            f"tables and checks: the mean over seeds {', '.join(map(str, seeds))} with its 95% "
            "Student-t interval (satellite_seeds.csv); figures: seed 1"
        )
    for chapter in chapters:
        runs = chapter_runs(values, chapter, stats)
        if chapter == 4:
            checks.chapter4(report, runs, quick, out_dir)
            add_rows(report, runs)
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

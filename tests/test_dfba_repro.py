"""The cell-level GFR network and the DFBA reproduction: API, errors, quick and full runs."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
import tomli_w

import fairgate
from fairgate.atm import PAPER_VCS_B, AtmRun, paper_vcs, run_atm
from fairgate.repro import dfba
from fairgate.repro.report import Report
from fairgate.runner import validate_file, validate_text


def small_config(**extra):
    """A small cell network as a scenario dict; ``extra`` replaces fields of ``[atm]``."""
    atm = {
        "start_spread": 0.05,
        "vcs": paper_vcs(PAPER_VCS_B[:2], 3),
        "buffer": {"kind": "dfba", "limit": 3000},
    }
    atm.update(extra)
    simulation = {"duration": 0.6, "warmup": 0.2, "seed": 4, "sample_interval": 0.01}
    return {"simulation": simulation, "atm": atm}


def test_run_atm_reports_every_vc_and_is_deterministic():
    a = run_atm(small_config())
    b = run_atm(small_config())
    assert list(a.vcs["name"]) == ["vc1", "vc2"]
    assert a.total_goodput_mbps > 40
    assert a.total_goodput_mbps < dfba.MAX_GOODPUT_MBPS
    pd.testing.assert_frame_equal(a.vcs, b.vcs)
    pd.testing.assert_frame_equal(a.occupancy, b.occupancy)
    assert set(a.occupancy["vc"]) == {"vc1", "vc2"}
    assert (a.refused["region"].isin([2, 3, 4])).all()


def test_bad_configs_name_the_field():
    with pytest.raises(fairgate.ScenarioError, match=r"atm\.vcs\[0\]\.mcr"):
        run_atm(small_config(vcs=[{"name": "a", "mcr": -1, "tcps": 1}]))
    with pytest.raises(fairgate.ScenarioError, match=r"atm\.buffer\.limit"):
        run_atm(small_config(buffer={"kind": "fifo", "limit": 0}))
    with pytest.raises(fairgate.ScenarioError, match="simulation.duration"):
        run_atm(small_config(), ["simulation.duration=long"])
    with pytest.raises(fairgate.ScenarioError, match="nodes"):
        run_atm({**small_config(), "nodes": [{"name": "h"}]})
    with pytest.raises(fairgate.ScenarioError, match="atm"):
        fairgate.sweep(tomli_w.dumps(small_config()), seeds=2)


def fairgate_cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "fairgate.cli", *args], capture_output=True, text=True, check=False
    )


def test_fairgate_run_runs_an_atm_scenario_file(tmp_path):
    scenario = Path(__file__).parent.parent / "scenarios" / "dfba_e3.toml"
    short = ["--set", "simulation.duration=0.6", "--set", "simulation.warmup=0.2"]
    out = fairgate_cli("run", str(scenario), "--out", str(tmp_path), *short)
    assert out.returncode == 0, out.stderr
    assert "vc5" in out.stdout
    vcs = pd.read_parquet(tmp_path / "vcs.parquet")
    assert list(vcs["name"]) == ["vc1", "vc2", "vc3", "vc4", "vc5"]
    window_s = json.loads((tmp_path / "summary.json").read_text())["window_s"]
    straddling = dfba.MSS * 8 / window_s / 1e6  # a segment straddling the 0.4 s window
    assert vcs["goodput_mbps"].sum() <= dfba.MAX_GOODPUT_MBPS + straddling
    assert (tmp_path / "occupancy.parquet").exists() and (tmp_path / "summary.json").exists()
    bad = fairgate_cli("run", str(scenario), "--out", str(tmp_path), "--set", "atm.vcs[1].tcps=0")
    assert bad.returncode == 2 and "atm.vcs[1].tcps" in bad.stderr, bad.stderr


def test_the_e3_scenario_file_is_the_reproductions_e3():
    scenario = Path(__file__).parent.parent / "scenarios" / "dfba_e3.toml"
    from_file = validate_file(scenario)
    planned = validate_text(tomli_w.dumps(dfba.table_config("E3", quick=False)))
    assert from_file["atm"] == planned["atm"]
    assert from_file["simulation"] == planned["simulation"]


def test_cases_are_independent_configs():
    quick = dfba.cases(None, quick=True)
    assert [c.label for c in quick[:7]] == dfba.EXPERIMENTS
    assert {c.group for c in quick} == {"table", "lh"}
    seeds = {c.label for c in dfba.cases(None, quick=False) if c.group == "seed"}
    assert seeds == {"seed 2", "seed 3", "seed 4", "seed 5"}
    full = dfba.cases(None, quick=False)
    assert {c.label for c in full if c.group == "discipline"} == {
        "epd",
        "ppd",
        "selective_drop",
        "fba",
        "fifo",
    }
    e5 = next(c for c in full if c.label == "E5")
    assert e5.config["atm"]["buffer"]["limit"] == 3000
    assert sum(vc["tcps"] for vc in e5.config["atm"]["vcs"]) == 100


def fake_run(goodputs: list[float]) -> AtmRun:
    mcrs = [7.68, 15.36, 23.04, 30.72, 38.4]
    vcs = pd.DataFrame(
        {
            "name": [f"vc{i + 1}" for i in range(5)],
            "goodput_mbps": goodputs,
            "excess_over_mcr": [(g - m) / m for g, m in zip(goodputs, mcrs, strict=True)],
        }
    )
    empty = pd.DataFrame()
    return AtmRun(vcs, empty, empty, sum(goodputs), 25.0, 0, 0)


def test_e3_over_seeds_gets_student_t_intervals():
    e3 = fake_run([10.0, 18.0, 26.0, 33.0, 41.0])
    results = {("seed", "seed 2"): fake_run([11.0, 17.0, 26.0, 33.0, 41.0])}
    runs = dfba.seed_runs(results, e3)
    assert list(runs["seed"].unique()) == [1, 2]
    report = Report("dfba", "t", "s")
    summary = dfba.add_seed_intervals(report, runs)
    vc1 = summary[summary["vc"] == "vc1"].iloc[0]
    assert vc1["goodput_mbps_mean"] == 10.5
    # n = 2: half-width t(0.975, 1) x 0.7071 / sqrt(2) = 12.706 x 0.5
    assert vc1["goodput_mbps_ci_high"] - 10.5 == pytest.approx(12.7062 * 0.5, rel=1e-4)
    frame = report.frame()
    assert (frame["verdict"] == "report").all()
    assert frame["note"].str.startswith("95% CI").all()
    assert "E3 total over seeds 1-2" in set(frame["experiment"])
    assert dfba.add_seed_intervals(Report("d", "t", "s"), dfba.seed_runs({}, e3)) is None


def test_quick_reproduction_writes_tables_checks_and_the_figure(tmp_path):
    report = dfba.run(tmp_path, quick=True)
    frame = report.frame()
    assert {"E1 total", "E5 total", "check E3", "check E6b"} <= set(frame["experiment"])
    totals = frame[(frame["metric"] == "achieved Mb/s") & frame["experiment"].str.endswith("total")]
    assert len(totals) == 5
    assert (totals["fairgate"] > 100).all(), totals
    checks = frame[frame["experiment"].str.startswith("check")]
    assert set(checks["verdict"]) <= {"PASS", "MISS"} and set(totals["verdict"]) <= {"PASS", "MISS"}
    assert (tmp_path / "dfba_occupancy_E3.png").exists()
    assert (tmp_path / "dfba_lh_sweep.csv").exists()
    assert (tmp_path / "dfba_refused_frames.csv").exists()
    assert_at_most_the_maximum(frame, tmp_path, experiments=7)


def assert_at_most_the_maximum(frame: pd.DataFrame, out, experiments: int) -> None:
    """No experiment and no side run carries more goodput than 32-cell frames allow."""
    bounded = frame[frame["metric"] == "total at most the maximum possible Mb/s"]
    assert len(bounded) == experiments
    assert (bounded["verdict"] == "PASS").all(), bounded
    assert (bounded["fairgate"] <= dfba.MAX_GOODPUT_MBPS + 0.01).all(), bounded
    for side in sorted(out.glob("dfba_*.csv")):
        if "total_mbps" in (table := pd.read_csv(side)).columns:
            assert (table["total_mbps"] <= dfba.MAX_GOODPUT_MBPS + 0.01).all(), (side, table)


def test_cli_reproduce_one_experiment(tmp_path):
    out = fairgate_cli("reproduce", "dfba", "--quick", "--scenario", "E1", "--out", str(tmp_path))
    assert out.returncode == 0, out.stderr
    assert "E1 total" in out.stdout
    assert (tmp_path / "dfba.md").exists()


@pytest.mark.slow
def test_full_reproduction(tmp_path):
    report = dfba.run(tmp_path, quick=False)
    frame = report.frame()
    assert len(frame[frame["experiment"].str.startswith("check")]) >= 14
    assert (tmp_path / "dfba_disciplines.csv").exists()
    assert (tmp_path / "dfba_tagging.csv").exists()
    assert_at_most_the_maximum(frame, tmp_path, experiments=7)

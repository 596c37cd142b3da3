"""The cell-level GFR network and the DFBA reproduction: API, errors, quick and full runs."""

from __future__ import annotations

import subprocess
import sys

import pandas as pd
import pytest

import fairgate
from fairgate.atm import PAPER_VCS_B, paper_vcs, run_atm
from fairgate.repro import dfba


def small_config(**extra):
    config = {
        "duration": 0.6,
        "warmup": 0.2,
        "seed": 4,
        "start_spread": 0.05,
        "vcs": paper_vcs(PAPER_VCS_B[:2], 3),
        "buffer": {"kind": "dfba", "limit": 3000},
    }
    config.update(extra)
    return config


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
    with pytest.raises(fairgate.ScenarioError, match=r"vcs\[0\]\.mcr"):
        run_atm(small_config(vcs=[{"name": "a", "mcr": -1, "tcps": 1}]))
    with pytest.raises(fairgate.ScenarioError, match="buffer.limit"):
        run_atm(small_config(buffer={"kind": "fifo", "limit": 0}))
    with pytest.raises(fairgate.ScenarioError, match="duration"):
        run_atm(small_config(duration="long"))


def test_cases_are_independent_configs():
    quick = dfba.cases(None, quick=True)
    assert [c.label for c in quick[:7]] == dfba.EXPERIMENTS
    assert {c.group for c in quick} == {"table", "lh"}
    assert {c.label for c in dfba.cases(None, quick=False) if c.group == "seed"} == {
        "seed 2",
        "seed 3",
    }
    full = dfba.cases(None, quick=False)
    assert {c.label for c in full if c.group == "discipline"} == {
        "epd",
        "ppd",
        "selective_drop",
        "fba",
        "fifo",
    }
    e5 = next(c for c in full if c.label == "E5")
    assert e5.config["buffer"]["limit"] == 3000
    assert sum(vc["tcps"] for vc in e5.config["vcs"]) == 100


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
    out = subprocess.run(
        [sys.executable, "-m", "fairgate.cli", "reproduce", "dfba", "--quick", "--scenario", "E1"]
        + ["--out", str(tmp_path)],
        capture_output=True,
        text=True,
        check=False,
    )
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

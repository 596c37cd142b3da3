"""[Vaidyanathan99, ch. 3] reproduction (`fairgate reproduce hybrid-gateways`): the scenario
each point runs, the quick run through the CLI, and the full run under the `slow` marker.
The findings are stochastic: the tests pin that every finding is reported with its numbers,
not which of them hold (docs/reproductions/hybrid_gateways.md lists the misses and causes)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from fairgate.repro import hybrid_gateways as hg
from fairgate.repro import hybrid_packet_size
from fairgate.runner import run_text

FINDINGS = 13
"""Chapter-3 findings; the quick chapter-4 run adds CHAPTER4_QUICK_ROWS acceptance checks."""
CHAPTER4_QUICK_ROWS = 17
PACKET_SIZE_QUICK_ROWS = 3
"""One segment size, PFD with and without RTT dimensioning: three findings."""
PACKET_SIZE_ROWS = 10


def test_buffer_grid_in_link_milliseconds() -> None:
    # 2 Mb/s: 1 ms = 250 B; 1040-byte packets.
    assert hg.buffer_packets(100) == 24
    assert hg.buffer_packets(400) == 96
    assert hg.buffer_packets(1) == 2
    assert hg.buffer_packets(25, 536) == 11 and hg.buffer_packets(400, 1460) == 67


def test_packet_size_sweep_sets_the_segment_and_the_buffer_in_packets() -> None:
    text = hg.scenario("3.3", "FQ-PFD-RTT", 25, 1, 5.0, mss=536)
    assert "mss = 536" in text and "limit = 11" in text
    keys = [c.key for c in hybrid_packet_size.cases(quick=False)]
    assert len(keys) == 2 * 4 * len(hg.BUFFER_MS) * hg.SEEDS
    assert keys[0] == "mss536-FQ-PFD-25ms-s1"
    row = hg.run_one("3.3", "FQ-PFD", 25, 1, 5.0, mss=1460)
    assert row["mss"] == 1460 and row["buffer_pkts"] == 4


def test_every_scheme_builds_a_valid_scenario_and_conserves_packets() -> None:
    for scheme in hg.SCHEMES:
        text = hg.scenario("3.3", scheme, 50, 1, 5.0)
        results = run_text(text)
        assert results.conserved, scheme
        data = results.flows[results.flows["role"] == "data"]
        assert len(data) == hg.FLOWS
        assert data["goodput_bytes"].sum() > 0, scheme


def test_rtt_dimensioning_passes_the_propagation_rtts() -> None:
    text = hg.scenario("3.3", "FQ-PFD-RTT", 50, 1, 5.0)
    assert 'thresholds = "rtt"' in text
    assert 'rtts = ["20ms", "40ms"' in text and '"200ms"]' in text


def test_goodput_over_time_is_the_running_average() -> None:
    curve = hg.goodput_over_time("FQ-PFD", 100, 1, 10.0)
    assert curve["time_s"] == [float(t) for t in range(1, 11)]
    assert 0 < curve["mbps"][-1] <= 2.0


def test_runs_are_deterministic_per_seed() -> None:
    a = hg.run_one("3.3", "FQ-PFD", 50, 3, 10.0)
    b = hg.run_one("3.3", "FQ-PFD", 50, 3, 10.0)
    assert a == b


def test_quick_reproduction_through_the_cli(tmp_path: Path) -> None:
    out = tmp_path / "hg"
    cmd = [sys.executable, "-m", "fairgate.cli", "reproduce", "hybrid-gateways", "--quick"]
    done = subprocess.run([*cmd, "--out", str(out)], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    report = pd.read_csv(out / "hybrid_gateways.csv")
    chapter3 = report[report["experiment"].str.startswith("E3")]
    assert len(chapter3) == FINDINGS + PACKET_SIZE_QUICK_ROWS
    assert set(chapter3["verdict"]) <= {"ok", "MISS"}
    assert len(report) - len(chapter3) == CHAPTER4_QUICK_ROWS
    assert set(report["verdict"]) <= {"ok", "MISS", "PASS", "report"}
    assert report["note"].str.len().gt(0).all()
    summary = pd.read_csv(out / "hybrid_gateways_summary.csv")
    assert (summary["fairness_mean"] <= 1.0 + 1e-9).all()
    assert summary["goodput_mbps_ci95"].notna().all()
    assert (out / "hybrid_e3_3.png").exists() and (out / "hybrid_e3_2.png").exists()
    assert (out / "hybrid_fig3_5.png").exists()
    for e in ("4_1", "4_2", "4_3", "4_4", "4_5"):
        assert (out / f"hybrid_e{e}.png").exists()
    assert len(pd.read_csv(out / "hybrid_ch4_runs.csv")) == 16
    sizes = pd.read_csv(out / "hybrid_packet_size_summary.csv")
    assert set(sizes["mss"]) == set(hybrid_packet_size.QUICK_SIZES)


def test_unknown_experiment_is_refused() -> None:
    cmd = [sys.executable, "-m", "fairgate.cli", "reproduce", "hybrid-gateways"]
    done = subprocess.run(
        [*cmd, "--experiment", "9.9"], capture_output=True, text=True, check=False
    )
    assert done.returncode == 2
    assert "3.2" in done.stderr


@pytest.mark.slow
def test_full_reproduction(tmp_path: Path) -> None:
    report = hg.run(tmp_path, quick=False)
    assert len(report.rows) == FINDINGS + PACKET_SIZE_ROWS + 20
    report.write(tmp_path)
    runs = pd.read_csv(tmp_path / "hybrid_gateways_runs.csv")
    assert len(runs) == 2 * len(hg.SCHEMES) * len(hg.BUFFER_MS) * hg.SEEDS

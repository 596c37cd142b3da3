"""[Keshav91, ch. 6] reproduction (`fairgate reproduce keshav`): quick runs of every scenario
with the reproduction's acceptance tolerances (tolerances doubled in quick mode), and the full
run under the `slow` marker. Rows that miss are listed in docs/reproductions/keshav.md; the
tests pin the rows that pass and the behaviour behind the misses that stay."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import tomllib
from functools import cache
from pathlib import Path

import pandas as pd
import pytest

import fairgate
from fairgate.repro import keshav
from fairgate.repro.report import Report

PAPER_ROWS = 701


@cache
def quick(scenario: str) -> Report:
    """One quick run per scenario, shared by the tests; figures go to a fresh directory."""
    return keshav.run(Path(tempfile.mkdtemp()), experiment=scenario, quick=True)


def rows(report: Report, prefix: str, metric: str | None = None) -> pd.DataFrame:
    frame = report.frame()
    frame = frame[frame["experiment"].str.startswith(prefix)]
    return frame if metric is None else frame[frame["metric"] == metric]


def assert_all_ok(frame: pd.DataFrame) -> None:
    checked = frame[frame["verdict"] != "report"]
    assert len(checked) > 0
    missed = checked[checked["verdict"] == "MISS"]
    assert missed.empty, missed.to_string()


def test_every_paper_row_of_the_scenario_is_reported() -> None:
    report = quick("1")
    paper = keshav.load_paper()
    assert len(paper) == PAPER_ROWS
    assert len(report.rows) == (paper["scenario"] == 1).sum() == 56
    assert not any("conservation" in n for n in report.notes)
    assert not rows(report, "S1")["fairgate"].isna().any()


def test_s1_deterministic_rows_and_fq_telnet_rtt() -> None:
    report = quick("1")
    assert_all_ok(rows(report, "S1"))
    # FTPs split the line: 10 pkt/s minus the Telnets' 0.2 each gives 4.99 for both.
    for pair in ("G/FCFS", "JK/FQ", "PP/FQ"):
        ftp = rows(report, f"S1 {pair} src 1", "throughput")["fairgate"].iloc[0]
        assert ftp == pytest.approx(4.99, rel=0.03)
    # Telnet under FCFS waits behind ~9.5 FTP packets of 0.1 s; under FQ behind at most one.
    fcfs = rows(report, "S1 G/FCFS src 3", "rtt")["fairgate"].iloc[0]
    fq = rows(report, "S1 G/FQ src 3", "rtt")["fairgate"].iloc[0]
    assert fcfs > 0.8 and fq < 0.1


def test_s2_decbit_and_pp_get_the_fair_share() -> None:
    report = quick("2")
    assert_all_ok(rows(report, "S2 DEC/DEC"))
    for pair in ("DEC/DEC", "PP/FQ"):
        frame = rows(report, f"S2 {pair}", "throughput")
        ftp = frame[~frame["experiment"].str.endswith(("src 7", "src 8"))]["fairgate"]
        # (10 pkt/s - two Telnets at 0.2) / 6 = 1.6, the text's 1.66 within 6%.
        assert len(ftp) == 6 and ftp.min() > 1.66 * 0.94
    assert_all_ok(rows(report, "S2 PP/FQ src 7", "rtt"))  # Telnet behind one FTP packet at most


def test_s2_pp_fq_loses_next_to_nothing() -> None:
    # Window-bound PP sources skip a blocked pair slot, so six of them hold fewer than the 25
    # buffers on average; drops and retransmissions stay within 0.04/s (quick tolerance).
    assert_all_ok(rows(quick("2"), "S2 PP/FQ"))


def test_s3_pp_fq_phases() -> None:
    assert_all_ok(rows(quick("3"), "S3 PP/FQ"))


def test_s4_fq_is_a_firewall() -> None:
    report = quick("4")
    assert_all_ok(rows(report, "S4"))
    for pair in keshav.FQ_PAIRS:
        ill = rows(report, f"S4 {pair} src 3", "throughput")["fairgate"].iloc[0]
        assert ill == pytest.approx(5.0, rel=0.2)  # half the line: two active conversations
    fcfs_ftp = rows(report, "S4 G/FCFS src 1", "throughput")["fairgate"].iloc[0]
    assert fcfs_ftp < 2.0  # FCFS lets the ill-behaved source shut the FTP out


def test_s5_fq_gives_every_source_a_quarter() -> None:
    report = quick("5")
    for mix in ("JK/G, FQ", "PP/G, FQ", "PP/JK, FQ"):
        thr = rows(report, f"S5 {mix}", "throughput")["fairgate"]
        assert len(thr) == 4
        # 10 pkt/s over 4 sources; quick runs are three 50 s intervals, hence 20%.
        assert thr.to_numpy() == pytest.approx([2.5] * 4, rel=0.2)
    fcfs = rows(report, "S5 JK/G, FCFS", "throughput")["fairgate"].to_numpy()
    assert fcfs[2:].min() > fcfs[:2].max()  # FCFS rewards the non-adaptive Generic sources


def test_s6_fq_removes_the_long_path_bias() -> None:
    report = quick("6")
    for pair in ("JK/FQ", "DEC/FQB", "PP/FQ"):
        assert_all_ok(rows(report, f"S6 {pair}"))
    # FCFS is window-limited: each bottleneck carries short + long = 10 pkt/s, short > long.
    short = rows(report, "S6 G/FCFS src 1", "throughput")["fairgate"].iloc[0]
    long = rows(report, "S6 G/FCFS src 4", "throughput")["fairgate"].iloc[0]
    assert short + long == pytest.approx(10.0, rel=0.02)
    assert short > 2.5 * long


@pytest.mark.parametrize("scenario", ["7", "8"])
def test_s7_s8_pp_fq_share_and_no_loss(scenario: str) -> None:
    assert_all_ok(rows(quick(scenario), f"S{scenario} PP/FQ"))


def test_jain_index_by_hand() -> None:
    assert keshav.jain_index([1.0, 1.0, 1.0]) == 1.0
    # (1 + 3)^2 / (2 x (1 + 9)) = 16 / 20
    assert keshav.jain_index([1.0, 3.0]) == pytest.approx(0.8)
    assert keshav.jain_index([5.0, 0.0, 0.0, 0.0]) == pytest.approx(0.25)


@pytest.mark.parametrize(("scenario", "ftps"), [("2", 6), ("6", 4), ("7", 2)])
def test_pp_fq_jain_index_at_least_0_99(scenario: str, ftps: int) -> None:
    thr = rows(quick(scenario), f"S{scenario} PP/FQ", "throughput").iloc[:ftps]["fairgate"]
    assert keshav.jain_index(list(thr)) >= 0.99


def test_window_traces_in_packets() -> None:
    traces = pd.DataFrame(
        {"var": ["cwnd", "cwnd", "window"], "value": [9600.0, 96000.0, 40.0], "time_s": [0, 1, 2]}
    )
    # 9600 B / 960 B = 10 packets; 100 packets of cwnd are capped by S3's window of 40.
    assert list(keshav.in_packets(traces, 3)) == [10.0, 40.0, 40.0]


def test_quick_runs_are_deterministic(tmp_path: Path) -> None:
    again = keshav.run(tmp_path, experiment="4", quick=True)
    pd.testing.assert_frame_equal(again.frame(), quick("4").frame())


def test_pairs_substitute_sources_and_queues() -> None:
    pairs = keshav.load_pairs()
    doc = keshav.scenario_doc(7, "JK/FCFS", pairs, quick=True)
    ftp = next(f for f in doc["flows"] if f["name"] == "src1")["source"]
    assert ftp == {
        "kind": "tcp",
        "cc": "tahoe",
        "mss": 960,
        "rwnd": 60 * 960,
        "initial_rto": "12s",
        "limited_transmit": False,
        "max_retries": 1_000_000,
        "timestamps": False,
        "delayed_ack": False,
        "granularity": "10ms",
    }
    bottlenecks = [link["queue"] for link in doc["links"] if link["queue"]["kind"] != "fifo"]
    assert bottlenecks == [{"kind": "fcfs", "limit": 120}] * 3
    mixed = keshav.scenario_doc(5, "PP/JK, FQ (PP1 PP2 JK1 JK2)", pairs, quick=True)
    kinds = [f["source"]["kind"] for f in mixed["flows"]]
    assert kinds == ["pp_cth", "pp_cth", "tcp", "tcp"]
    switch = [link["queue"] for link in mixed["links"] if link["queue"]["kind"] != "fifo"]
    assert switch == [{"kind": "fq", "victim": "before_admission", "limit": 15}]


def test_fq_switches_choose_the_victim_before_admission() -> None:
    # [Keshav91, §2.1] read literally ("the conversation currently using the most buffer
    # space"): every FQ and FQbit switch of the pairs and of the scenario files (run alone as
    # PP/FQ).
    pairs = keshav.load_pairs()["pairs"]
    fair = [p["queue"] for p in pairs.values() if p["queue"]["kind"] in ("fq", "fqbit")]
    assert len(fair) == 4 and all(q["victim"] == "before_admission" for q in fair)
    for n in range(1, 9):
        doc = tomllib.loads(keshav.read_data(f"s{n}.toml"))
        queues = [link["queue"] for link in doc["links"] if link["queue"]["kind"] == "fq"]
        assert queues and all(q["victim"] == "before_admission" for q in queues), n


def test_data_files_ship_inside_the_package() -> None:
    package = Path(fairgate.__file__).parent
    data = Path(str(keshav.data_dir()))
    assert data == package / "data" / "keshav"
    names = {p.name for p in data.iterdir()}
    assert {"pairs.toml", "paper_results.csv", *(f"s{n}.toml" for n in range(1, 9))} <= names


def test_reproduce_runs_outside_the_source_tree(tmp_path: Path) -> None:
    # The package is imported from wherever it is installed; nothing is read from the cwd.
    env = {**os.environ, "PYTHONPATH": str(Path(fairgate.__file__).parents[1])}
    command = [sys.executable, "-m", "fairgate.cli", "reproduce", "keshav", "--quick"]
    command += ["--scenario", "4", "--out", str(tmp_path / "out")]
    done = subprocess.run(command, cwd=tmp_path, env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "out" / "keshav.md").exists()


@pytest.mark.slow
def test_full_reproduction(tmp_path: Path) -> None:
    report = keshav.run(tmp_path, quick=False)
    frame = report.frame()
    assert len(frame) == PAPER_ROWS
    assert not any("conservation" in n for n in report.notes)
    for prefix in ("S1", "S3 PP/FQ", "S4", "S6 JK/FQ", "S6 PP/FQ", "S7 PP/FQ", "S8 PP/FQ"):
        assert_all_ok(rows(report, prefix))
    written = report.write(tmp_path)
    assert all(p.exists() for p in written)

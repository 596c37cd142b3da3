"""[Vaidyanathan99, ch. 4] reproduction (`fairgate reproduce hybrid-gateways --experiment 4.x`):
the scenarios each case runs, the cases an experiment needs, and the full run under `slow`.
The quick run of every experiment through the CLI is in tests/test_hybrid_repro.py."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from fairgate.repro import hybrid_ch4 as ch4
from fairgate.repro.report import Report


def test_scenarios_set_the_tcp_options_of_the_text_explicitly() -> None:
    doc = ch4.spoofing(ch4.T3, 200_000, 10.0, mu=500.0).to_dict()
    gw1, gw2 = doc["nodes"][1]["gateway"], doc["nodes"][2]["gateway"]
    assert gw2["lhs"]["rwnd"] == 200_000 and gw2["lhs"]["delayed_ack"] is True
    assert gw1["two_server"]["rate"] == 500.0
    assert gw1["two_server"]["queue"]["buffer"]["kind"] == "pfd"
    assert gw1["flush_period"] == gw2["flush_period"] == "0.5s"
    for side in (gw1["lhs"], gw1["rhs"], doc["flows"][0]["source"]):
        assert side["mss"] == 536 and side["timestamps"] is False and side["cc"] == "sack"
    udp = ch4.spoofing(ch4.T1, 65_535, 10.0, udp=True).to_dict()
    assert [f["name"] for f in udp["flows"]] == ["file", "udp"]
    assert udp["links"][1]["queue"]["limit"] == 100


def test_each_experiment_runs_each_case_once() -> None:
    keys = [c.key for c in ch4.cases(["4.3", "4.4"], quick=False)]
    assert keys == ["t3-200000", "mu-500", "mu-400", "mu-450", "mu-540", "mu-550", "mu-600"]
    assert len({c.key for c in ch4.cases(ch4.EXPERIMENTS, quick=True)}) == 11


def test_a_short_t3_run_is_bounded_by_the_far_buffer_and_conserves() -> None:
    run = ch4.run_gateway(ch4.T3, 200_000, 20.0, None, 0.0)
    bound = 200_000 * 8 / ch4.SAT_RTT_S / 1e6
    assert run["throughput_mbps"] <= bound * 1.01
    assert len(run["series"]["time_s"]) == len(run["series"]["send_buffer_kb"])


@pytest.mark.slow
def test_full_chapter_4(tmp_path: Path) -> None:
    report = Report("hybrid_gateways", "ch4", "")
    ch4.run(tmp_path, ch4.EXPERIMENTS, quick=False, report=report)
    frame = report.frame()
    assert len(frame) == 20
    assert set(frame["verdict"]) <= {"PASS", "MISS", "report"}
    runs = pd.read_csv(tmp_path / "hybrid_ch4_runs.csv")
    assert len(runs) == 14
    for e in ("4_1", "4_2", "4_3", "4_4", "4_5"):
        assert (tmp_path / f"hybrid_e{e}.png").exists()

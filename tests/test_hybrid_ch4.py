"""[Vaidyanathan99, ch. 4] reproduction (`fairgate reproduce hybrid-gateways --experiment 4.x`):
the scenarios each case runs, the cases an experiment needs, and the full run under `slow`.
The quick run of every experiment through the CLI is in tests/test_hybrid_repro.py."""

from __future__ import annotations

import math
from pathlib import Path

import pandas as pd
import pytest

from fairgate.repro import hybrid_ch4 as ch4
from fairgate.repro.report import Report

QUICK_RUNS = 16
"""Quick: T1, four T3 runs, 400/500/550 packets/s and two E4.5 settings over 2 seeds, FIFO."""
FULL_RUNS = 46


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


def test_each_experiment_runs_each_case_once_and_the_two_server_runs_per_seed() -> None:
    keys = [c.key for c in ch4.cases(["4.3", "4.4"], quick=False)]
    rates = ["500", "400", "450", "540", "550", "600"]
    seeds = range(1, ch4.SEEDS + 1)
    assert keys == ["t3-200000"] + [f"mu-{r}-s{s}" for r in rates for s in seeds]
    assert [c.args[-1] for c in ch4.cases(["4.3"], quick=False)[1:]] == list(seeds)
    assert len({c.key for c in ch4.cases(ch4.EXPERIMENTS, quick=True)}) == QUICK_RUNS


def test_seeds_fold_into_means_with_intervals() -> None:
    runs = {
        "t1": {"throughput_mbps": 1.0, "starves": False, "series": {}},
        "mu-500-s1": {"throughput_mbps": 1.0, "starves": True, "series": {"a": [1]}},
        "mu-500-s2": {"throughput_mbps": 2.0, "starves": True, "series": {"a": [2]}},
        "mu-500-s3": {"throughput_mbps": 3.0, "starves": False, "series": {"a": [3]}},
    }
    values, table = ch4.combine_seeds(runs)
    assert set(values) == {"t1", "mu-500"}
    mu = values["mu-500"]
    assert mu["throughput_mbps"] == pytest.approx(2.0)
    # t(0.975, 2) = 4.303; std 1, n 3
    assert mu["throughput_mbps_ci95"] == pytest.approx(4.303 / 3**0.5, rel=1e-3)
    assert mu["starves"] is True and mu["seeds"] == 3 and mu["series"] == {"a": [1]}
    assert values["t1"]["seeds"] == 1 and math.isnan(values["t1"]["throughput_mbps_ci95"])
    assert list(table["case"]) == ["t1", "mu-500"]


def test_a_pushed_out_udp_flow_keeps_its_share_under_fq_and_pfd() -> None:
    # Before pushed-out heads were refunded their tags, UDP was never served after about 6 s.
    run = ch4.run_tcp_udp(30.0, float(ch4.UDP_MU), 65_535)
    assert run["udp_mbps"] > 0.4 and run["tcp_mbps"] > 0.3


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
    assert len(runs) == FULL_RUNS
    summary = pd.read_csv(tmp_path / "hybrid_ch4_summary.csv")
    assert summary.loc[summary["runs"] == ch4.SEEDS, "throughput_mbps_ci_low"].notna().any()
    for e in ("4_1", "4_2", "4_3", "4_4", "4_5"):
        assert (tmp_path / f"hybrid_e{e}.png").exists()

"""[Byun07] reproduction (`fairgate reproduce satellite`): the scenario of each case, the cases
of each chapter, the drop-clustering and marking-probability measures on known inputs, the quick
run of every chapter through the CLI, and the full run under `slow`."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from fairgate import fluid
from fairgate.repro import satellite
from fairgate.repro.satellite_fluid import model_vs_simulation, run_models
from fairgate.repro.satellite_measure import (
    arrivals_before,
    clustering,
    index_runs,
    marking_probability,
)
from fairgate.repro.satellite_paper import CH4_SCHEMES, CH5_SCHEMES, CH6_CASES
from fairgate.repro.satellite_setup import QUICK_RAMP_S, RECEIVE, SEEDS, scenario, scenario_text
from fairgate.results import Results
from fairgate.runner import run_text, validate_text


def test_every_scheme_builds_a_valid_scenario_with_the_texts_tcp_options() -> None:
    for scheme in [*CH5_SCHEMES, "none"]:
        doc = scenario(scheme, 400, 60.0)
        validate_text(scenario_text(doc))
        tcp = doc["flows"][0]["source"]["tcp"]
        assert tcp["cc"] == "reno" and tcp["timestamps"] is False and tcp["delayed_ack"] is True
        assert tcp["initial_window"] == 2 and tcp["rate_cap"] == "5Mbps"
        assert doc["links"][1]["monitor"] == "pep->regulator"
    avq = scenario("AVQ", 400, 60.0)["links"][1]["queue"]
    assert avq["alpha"] == 0.0 and avq["virtual_buffer"] == 123_750
    assert scenario("SRED 2", 400, 60.0)["links"][1]["queue"]["lookups"] == 50


def test_flow_control_marks_instead_of_dropping_and_udp_joins_chapter_5() -> None:
    doc = scenario("RED 4", 500, 60.0, fc=3)
    assert doc["nodes"][2]["gateway"]["flow_control"] == {"preset": "fc3"}
    assert doc["links"][1]["queue"]["ecn"] is True
    assert doc["flows"][0]["count"] == 25
    udp = scenario("PFAVQRED", 500, 60.0, udp=True)
    assert [f["name"] for f in udp["flows"][1:]] == ["udp80", "udp160", "udp320"]
    assert udp["flows"][0]["source"]["record_transfers"] is True
    free = scenario("none", 400, 50.0, bottleneck=False)
    assert free["links"][2]["rate"] == "100Mbps" and free["links"][1]["queue"]["kind"] == "fifo"


def test_each_chapter_has_its_cases() -> None:
    keys = {ch: [c.key for c in satellite.cases(ch, quick=True)] for ch in (4, 5, 6)}
    loop = ["ch4:loop RED 4", "ch4:loop none"]
    assert keys[4] == ["ch4:inputs", *loop] + [f"ch4:{s}" for s in CH4_SCHEMES]
    assert keys[5] == [f"ch5:{s}" for s in CH5_SCHEMES]
    assert keys[6] == ["ch6:inputs"] + [f"ch6:{c}" for c in CH6_CASES]
    full = {c.key: c for c in satellite.cases(6, quick=False)}
    fc2 = full["ch6:AVQRED FC 2"]
    assert fc2.args[0] == "AVQRED" and fc2.args[5] == 2 and fc2.args[3] == 900.0
    assert fc2.args[-1] == 1 and full["ch6:AVQRED FC 2 seed 3"].args[-1] == 3
    assert len(full) == 1 + len(CH6_CASES) * len(SEEDS)


def test_runs_of_consecutive_arrivals() -> None:
    assert index_runs(np.array([3, 4, 5, 9, 20, 21])).tolist() == [3, 1, 2]
    assert index_runs(np.array([], dtype=int)).tolist() == []


def test_clustering_places_drops_by_their_arrival_index_and_stops_at_1000_packets() -> None:
    events = pd.DataFrame(
        {
            "time_s": [10.05, 10.06, 10.15, 10.2, 10.25],
            "action": ["drop", "drop", "drop", "mark", "drop"],
            "flow": "f",
            "arrival_index": [5_001, 5_002, 5_400, 5_401, 6_001],
        }
    )
    cl = clustering(events, arrived_before=5_000)
    assert cl["raster"] == [0, 1, 399]
    assert cl["mean_run"] == 1.5 and cl["longest_run"] == 2


def test_the_raster_starts_at_the_measurement_start_of_a_real_run() -> None:
    doc = scenario("RED 4", 40, 5.0, quick=True)
    doc["simulation"]["duration"] = "45s"
    res = run_text(scenario_text(doc))
    before = arrivals_before(res, RECEIVE, QUICK_RAMP_S)
    ports = res.ports.set_index("port")
    assert 0 < before < ports.loc[RECEIVE, "arrivals_pkts"]
    events = res.drops[res.drops["port"].astype(str) == RECEIVE]
    late = events[events["time_s"] > QUICK_RAMP_S]
    assert (late["arrival_index"] > before).all()
    with pytest.raises(ValueError, match="phase_edges"):
        arrivals_before(res, RECEIVE, 41.0)


def _leg_total(res: Results, name: str) -> float:
    traces = res.traces
    rows = traces[traces["var"].astype(str) == f"pep.{name}"]
    return float(rows.groupby(rows["flow"].astype(str))["value"].max().sum())


def test_the_satellite_leg_never_times_out_when_nothing_is_lost_after_the_pep() -> None:
    """The leg's round trip (about 0.8 s) plus the clients' 200 ms delayed-ACK timer exceeds RFC
    6298's 1 s floor: with it the lossless leg retransmits; with the testbed's 1.2 s, never."""
    doc = scenario("RED 4", 400, 20.0)
    assert doc["nodes"][2]["gateway"]["rhs"]["min_rto"] == "1.2s"
    res = run_text(scenario_text(doc))
    assert _leg_total(res, "leg_timeouts") == 0 and _leg_total(res, "leg_retransmits") == 0
    doc["nodes"][2]["gateway"]["rhs"]["min_rto"] = "1s"
    spurious = run_text(scenario_text(doc))
    assert _leg_total(spurious, "leg_timeouts") > 20
    assert _leg_total(spurious, "leg_retransmits") > _leg_total(spurious, "leg_timeouts")


def test_marking_probability_counts_drops_and_marks_per_interval() -> None:
    arrivals = pd.Series([10.0, 20.0, 0.0], index=[0.1, 0.2, 0.3])
    events = pd.DataFrame({"time_s": [0.05, 0.07, 0.15, 0.25], "action": "drop", "flow": "f"})
    p = marking_probability(events, arrivals)
    assert p.tolist() == [0.2, 0.05, 0.0]


def test_quick_run_of_every_chapter_through_the_cli(tmp_path: Path) -> None:
    out = tmp_path / "sat"
    cmd = [sys.executable, "-m", "fairgate.cli", "reproduce", "satellite", "--quick"]
    done = subprocess.run([*cmd, "--out", str(out)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-2000:]
    frame = pd.read_csv(out / "satellite.csv")
    assert "failed" not in (out / "satellite.md").read_text()
    checks = frame[frame["experiment"].str.endswith("check")]
    items = {m.split(":")[0] for m in checks["metric"]}
    assert items == {str(k) for k in range(1, 16)}
    assert set(checks["verdict"]) <= {"PASS", "MISS"}
    for name in ("ch4_series", "ch4_drops", "ch5_per_flow", "ch5_udp", "ch6_red_series"):
        assert (out / f"{name}.png").exists()
    assert (out / "fluid_inputs_ch4.json").exists() and (out / "fluid_inputs_ch6.json").exists()
    spread = frame[frame["experiment"] == "ch4 model input"]["fairgate"].tolist()
    assert len(spread) == 3 and spread == sorted(spread) and spread[0] >= 0.0
    prompt = frame[frame["experiment"].str.endswith("constant d = 0")]
    assert len(prompt) == 8 and prompt["fairgate"].notna().all()


@pytest.mark.slow
def test_full_reproduction(tmp_path: Path) -> None:
    report = satellite.run(tmp_path)
    frame = report.frame()
    assert not report.notes or all("failed" not in n for n in report.notes)
    checks = frame[frame["experiment"].str.endswith("check")]
    assert {m.split(":")[0] for m in checks["metric"]} == {str(k) for k in range(1, 16)}
    assert (frame["verdict"] == "PASS").sum() > 0


def test_the_chapter6_model_sits_beside_the_runs_and_the_paper(tmp_path: Path) -> None:
    ablation = pd.DataFrame(
        {
            "scheme": ["red", "red", "avqred", "avqred"],
            "upsilon": ["measured", "zero"] * 2,
            "q_mean": [500.0, 490.0, 80.0, 79.0],
            "q_std": [300.0, 290.0, 20.0, 19.0],
        }
    )
    runs = {"RED FC 2": {"q_mean": 160.0, "q_std": 120.0}}
    table = model_vs_simulation(ablation, runs)
    red = table[table["scheme"] == "RED FC 2"].set_index("statistic")
    assert red.loc["mean"].tolist()[1:] == [119.59, 160.0, 500.0]
    assert red.loc["std"].tolist()[1:] == [90.48, 120.0, 300.0]
    avqred = table[table["scheme"] == "AVQRED FC 2"].set_index("statistic")
    assert np.isnan(avqred.loc["mean", "simulation"]) and avqred.loc["mean", "model"] == 80.0
    fig = fluid.model_simulation_figure(table, tmp_path / "bars.png")
    assert len(fig.axes) == 2 and (tmp_path / "bars.png").stat().st_size > 0


def test_the_fluid_part_runs_alone_with_every_reading(tmp_path: Path) -> None:
    frame = run_models(tmp_path, quick=True).frame()
    readings = frame[frame["experiment"].str.contains("υ opened in the last")]
    assert {e.split("last ")[1].split(" ")[0] for e in readings["experiment"]} == {"5", "10", "20"}
    assert readings["fairgate"].notna().all() and (readings["fairgate"] >= 0).all()
    checks = frame[frame["experiment"].str.endswith("check")]
    assert {m.split(":")[0] for m in checks["metric"]} == {"14", "15"}
    stored = fluid.load_inputs(tmp_path / "fluid_inputs_ch6.json")
    assert set(stored) == {"omega", "delay", "upsilon"}

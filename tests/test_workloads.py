"""The web and HTTP workloads from Python: a few lines of builder code, the transfers table
as a data frame, and its CDF figure."""

from __future__ import annotations

import pytest

import fairgate as fg
from fairgate.plot import class_throughput, transfer_time_cdf


def web_scenario(duration: float = 60) -> fg.Scenario:
    sc = fg.Scenario("web", duration=duration, seed=3)
    sc.dumbbell(
        senders=1,
        bottleneck=fg.link_params("10Mbps", "20ms", fg.queue("fifo", limit=100)),
        access=fg.link_params("100Mbps", "1ms"),
    )
    sc.flow("s0", "d0", fg.source("web", sessions=50, start_window="30s"), name="web")
    sc.flow("s0", "d0", fg.source("http", connections=10, page_size=20000), name="http")
    return sc


def test_transfers_table_holds_one_row_per_object_grouped_by_class(tmp_path):
    results = web_scenario().run()
    assert results.conserved
    t = results.transfers
    assert set(t["class"]) == {"web", "http"}
    assert (t["last_byte_s"] >= t["first_byte_s"]).all()
    assert (t["transfer_time_s"] > 0).all()
    bytes_per_class = t.groupby("class")["bytes"].sum()
    assert bytes_per_class["http"] == 20000 * (t["class"] == "http").sum()
    saved = fg.Results.load(results.save(tmp_path / "out"))
    assert len(saved.transfers) == len(t)
    transfer_time_cdf(results, tmp_path / "cdf.png")
    assert (tmp_path / "cdf.png").stat().st_size > 0
    per_class = results.class_throughput()
    assert set(per_class.columns) == {"web", "http"}
    assert per_class["http"].mean() > 0
    class_throughput(results, tmp_path / "classes.png")
    assert (tmp_path / "classes.png").stat().st_size > 0


def test_a_bad_workload_setting_is_a_scenario_error():
    sc = fg.Scenario("bad", duration=1)
    sc.node("a").node("b").link("a", "b", "10Mbps", "1ms")
    sc.flow("a", "b", fg.source("web", objects=0))
    with pytest.raises(fg.ScenarioError, match=r"flows\[0\]\.source\.objects"):
        sc.run()


SFG_COUNTS = [10, 50, 100, 200, 400, 400, 200, 100, 50, 10]


def test_phase_groups_give_the_scheduled_count_in_every_phase():
    sc = fg.Scenario("sfg-schedule", duration=2000, seed=1)
    sc.node("a").node("b").link("a", "b", "100Mbps", "1ms")
    sc.phases("a", "b", fg.source("cbr", rate="1Mbps"), SFG_COUNTS, phase=200.0, name="ftp")
    groups = [(f["count"], f["start"]["value"], f.get("stop")) for f in sc.validate()["flows"]]
    for j, expected in enumerate(SFG_COUNTS):
        mid = j * 200.0 + 100.0
        active = sum(
            c for c, start, stop in groups if start <= mid and (stop is None or mid < stop)
        )
        assert active == expected, f"phase {j}"
    assert len(groups) == 5


def test_phases_in_a_scenario_switch_cbr_flows_on_and_off():
    sc = fg.Scenario("phases", duration=3, seed=1)
    sc.node("a").node("b").link("a", "b", "100Mbps", "1ms")
    sc.phases("a", "b", fg.source("cbr", rate="1Mbps"), [1, 3, 2], phase=1.0, name="cbr")
    sc.flow("a", "b", fg.source("cbr", rate="1Mbps"), name="solo", start=0.5, stop=2.5)
    flows = sc.run().flows
    starts = sorted(zip(flows["start_s"], flows["stop_s"].fillna(-1.0), strict=True))
    assert starts[:2] == [(0.0, -1.0), (0.5, 2.5)]
    assert (flows["flow"].str.startswith("cbr")).sum() == 3


def test_phase_schedule_errors_name_the_argument():
    sc = fg.Scenario("bad-schedule", duration=3, seed=1)
    sc.node("a").node("b").link("a", "b", "100Mbps", "1ms")
    sc.phases("a", "b", fg.source("cbr", rate="1Mbps"), [1, 2], phase=0)
    with pytest.raises(fg.ScenarioError, match=r"flows\[0\]\.phases\.length"):
        sc.validate()


def _rss_kib() -> float:
    with open("/proc/self/status", encoding="ascii") as status:
        line = next(x for x in status if x.startswith("VmRSS:"))
    return float(line.split()[1])


@pytest.mark.slow
def test_memory_stays_flat_over_a_million_connections():
    """Over 10^6 web objects (each a request and a response connection) the process's memory at
    10% of the run and at its end are within 10%."""
    from fairgate import _core

    sc = fg.Scenario("churn", duration=300, seed=2, sample_interval=30)
    sc.node("server").node("client").link("server", "client", "1Gbps", "5ms")
    think = {"dist": "exponential", "mean": "0.5s"}
    web = fg.source("web", sessions=2000, start_window="1s", think=think, record_transfers=False)
    sc.flow("server", "client", web, name="web")
    sim = _core.load(sc.to_toml(), [])
    sim.run_until(30.0)
    early = _rss_kib()
    sim.run_until(300.0)
    late = _rss_kib()
    assert sim.conservation_violations() == []
    results = fg.Results.from_core(sim.results())
    traces = results.traces
    objects = traces.loc[traces["var"] == "objects", "value"].max()
    assert objects > 1_000_000
    assert abs(late - early) / early < 0.10, f"RSS {early} -> {late} KiB"

"""The web and HTTP workloads from Python: a few lines of builder code, the transfers table
as a data frame, and its CDF figure."""

from __future__ import annotations

import pytest

import fairgate as fg
from fairgate.plot import transfer_time_cdf


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
    per_class = t.groupby("class")["bytes"].sum()
    assert per_class["http"] == 20000 * (t["class"] == "http").sum()
    saved = fg.Results.load(results.save(tmp_path / "out"))
    assert len(saved.transfers) == len(t)
    figure = transfer_time_cdf(results, tmp_path / "cdf.png")
    assert figure.stat().st_size > 0


def test_a_bad_workload_setting_is_a_scenario_error():
    sc = fg.Scenario("bad", duration=1)
    sc.node("a").node("b").link("a", "b", "10Mbps", "1ms")
    sc.flow("a", "b", fg.source("web", objects=0))
    with pytest.raises(fg.ScenarioError, match=r"flows\[0\]\.source\.objects"):
        sc.run()

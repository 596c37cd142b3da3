"""The measurement window from Python: ``warmup`` and ``end`` bound the summaries, and a bad
window is a ScenarioError naming its field."""

from __future__ import annotations

import pytest

import fairgate as fg


def cbr(**window: float) -> fg.Scenario:
    sc = fg.Scenario("window", duration=10, **window)
    sc.node("a").node("b").link("a", "b", "10Mbps", "10ms")
    sc.flow("a", "b", fg.source("cbr", rate="5Mbps", size=1000), name="cbr", stop=4)
    return sc


def test_window_bounds_utilisation_and_counts():
    res = cbr(warmup=2, end=6).run()
    port = res.ports.set_index("port").loc["a->b"]
    # The flow sends at half the link's rate during 2 s of the 4 s window.
    assert port["utilisation"] == pytest.approx(0.25, abs=1e-3)
    assert port["departures_pkts"] == pytest.approx(1250, abs=1)
    assert res.summary["window"] == {"start_s": 2.0, "end_s": 6.0}


def test_bad_window_is_a_scenario_error():
    with pytest.raises(fg.ScenarioError, match=r"simulation\.warmup"):
        cbr(warmup=10).run()
    with pytest.raises(fg.ScenarioError, match=r"simulation\.end"):
        cbr(end=11).run()

"""The measurement tables from Python: drop and mark events (``Results.drops``), the ports'
input and output rate series, the per-class series of the core, and the queue figure."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from matplotlib.figure import Figure

import fairgate as fg
from fairgate.plot import queue_over_time


def overload(record_drops: int | str | None) -> fg.Scenario:
    """Two CBR flows of 6 Mb/s into a 10 Mb/s link with a 20-packet buffer."""
    sc = fg.Scenario("overload", duration=4, seed=2, sample_interval=0.5, record_drops=record_drops)
    sc.node("a").node("b").link("a", "b", "10Mbps", "5ms", fg.queue("fifo", limit=20))
    sc.flow("a", "b", fg.source("cbr", rate="6Mbps", size=1000), name="x")
    sc.flow("a", "b", fg.source("cbr", rate="6Mbps", size=500), name="y")
    return sc


def test_drops_table_has_one_row_per_drop_and_round_trips(tmp_path: Path) -> None:
    results = overload("all").run()
    drops = results.drops
    port = results.ports.set_index("port").loc["a->b"]
    assert len(drops) == port["drops_pkts"] > 100
    assert list(drops.columns) == [
        "time_s",
        "port",
        "flow",
        "class",
        "action",
        "reason",
        "size",
        "seq",
        "cause",
        "arrival_index",
    ]
    assert drops["cause"].astype(str).tolist() == drops["reason"].astype(str).tolist()
    assert set(drops["reason"]) == {"overflow"} and set(drops["action"]) == {"drop"}
    assert drops.groupby("flow", observed=False)["size"].sum().to_dict() == {
        "x": results.flows.set_index("flow").loc["x", "dropped_bytes"],
        "y": results.flows.set_index("flow").loc["y", "dropped_bytes"],
    }
    assert np.all(np.diff(drops["time_s"].to_numpy()) >= 0)
    assert results.summary["drop_events"] == {"recorded": len(drops), "not_recorded": 0}
    loaded = fg.Results.load(results.save(tmp_path / "out"))
    assert (tmp_path / "out" / "drops.parquet").is_file()
    assert loaded.drops["seq"].tolist() == drops["seq"].tolist()


def test_the_first_n_events_and_none_by_default() -> None:
    first = overload(50).run()
    assert len(first.drops) == 50
    assert first.summary["drop_events"]["not_recorded"] > 0
    assert len(overload(None).run().drops) == 0


def test_a_bad_record_drops_is_a_scenario_error() -> None:
    with pytest.raises(fg.ScenarioError, match=r"simulation\.record_drops"):
        overload("most").run()


def test_port_rates_show_the_overload_and_class_series_the_goodput(tmp_path: Path) -> None:
    results = overload(None).run()
    qs = results.queue_series
    port = qs[qs["port"] == "a->b"]
    assert np.isnan(port["arrival_bps"].iloc[0])
    assert port["arrival_bps"].iloc[2:].mean() == pytest.approx(12e6, rel=0.01)
    assert port["departure_bps"].iloc[2:].mean() == pytest.approx(10e6, rel=0.01)
    per_class = results.class_throughput("throughput_bps")
    assert list(per_class.columns) == ["cbr"]
    assert per_class["cbr"].iloc[2:].mean() == pytest.approx(10e6, rel=0.02)
    fig = queue_over_time(results, tmp_path / "queue.png", ports=["a->b"])
    assert isinstance(fig, Figure)
    assert (tmp_path / "queue.png").stat().st_size > 0


def test_phase_summary_follows_the_phases_of_the_schedule() -> None:
    sc = fg.Scenario("phases", duration=6, seed=1)
    sc.node("a").node("b").link("a", "b", "10Mbps", "5ms", fg.queue("fifo", limit=20))
    sc.phases("a", "b", fg.source("cbr", rate="4Mbps", size=1000), [1, 3, 1], phase=2, name="c")
    assert sc.validate()["simulation"]["phase_edges"] == [2, 4]
    results = sc.run()
    summary = results.phase_summary()
    assert summary["phase"].tolist() == [0, 1, 2]
    assert summary["port"].unique().tolist() == ["a->b"]
    assert summary["drop_rate"].iloc[0] == 0 and summary["drop_rate"].iloc[2] == 0
    # 12 Mb/s offered into 10 Mb/s in the middle phase.
    assert summary["drop_rate"].iloc[1] == pytest.approx(1 / 6, abs=0.01)
    assert summary["port_utilisation"].iloc[1] > 0.99
    assert summary["throughput_bps"].iloc[0] == pytest.approx(4e6, rel=0.01)
    with pytest.raises(fg.ScenarioError, match=r"`port`: got 'x->y', expected one of a->b"):
        results.phase_summary("x->y")
    with pytest.raises(fg.ScenarioError, match=r"`role`: got 'acks', expected one of data, ack"):
        results.throughput("acks")
    with pytest.raises(fg.ScenarioError, match=r"`column`: got 'goodput'"):
        results.class_throughput("goodput")

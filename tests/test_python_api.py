"""The Python builders produce the structure the TOML files hold, and errors surface as
fairgate.ScenarioError."""

from __future__ import annotations

import threading
import time

import pandas as pd
import pytest

import fairgate as fg


def build() -> fg.Scenario:
    sc = fg.Scenario("api", duration=4, seed=5, sample_interval=0.1)
    sc.dumbbell(
        senders=2,
        bottleneck=fg.link_params("10Mbps", "10ms", fg.queue("fifo", limit=40)),
        access=fg.link_params("100Mbps", "1ms"),
        rtt=["40ms", "80ms"],
    )
    sc.flow("s{i}", "d{i}", fg.source("cbr", rate="6Mbps"), name="c{i}", count=2)
    return sc


def test_builder_and_toml_give_identical_results(tmp_path):
    sc = build()
    direct = sc.run()
    via_file = tmp_path / "api.toml"
    via_file.write_text(sc.to_toml())
    loaded = fg.run_file(via_file)
    pd.testing.assert_frame_equal(direct.flows, loaded.flows)
    pd.testing.assert_frame_equal(direct.queue_series, loaded.queue_series)
    assert list(direct.flows["flow"]) == ["c0", "c1"]


@pytest.mark.parametrize("rtt_split", [None, "sender", "even"])
def test_rtt_list_sets_round_trip_delay(rtt_split):
    sc = fg.Scenario("rtt", duration=1)
    sc.dumbbell(
        senders=2,
        bottleneck=fg.link_params("10Mbps", "10ms"),
        access=fg.link_params("100Mbps", "1ms"),
        rtt=["40ms", "80ms"],
        rtt_split=rtt_split,
    )
    sc.flow("s{i}", "d{i}", fg.source("cbr", rate="6Mbps", packets=1), name="c{i}", count=2)
    res = sc.run()
    delays = res.flows.set_index("flow")["min_delay_s"]
    # One-way propagation is rtt/2; the minimum delay adds three serialisations.
    tx = 1000 * 8 * (2 / 100e6 + 1 / 10e6)
    assert delays["c0"] == pytest.approx(0.020 + tx, rel=1e-9)
    assert delays["c1"] == pytest.approx(0.040 + tx, rel=1e-9)


def test_errors_are_scenario_errors():
    sc = fg.Scenario("bad", duration=1)
    sc.node("a").node("b").link("a", "b", "1Mbps")
    sc.flow("a", "b", fg.source("cbr", rate="1Mbps", size=0))
    with pytest.raises(fg.ScenarioError, match=r"flows\[0\]\.source\.size"):
        sc.run()
    with pytest.raises(ValueError):
        sc.validate()


def test_results_round_trip_through_parquet(tmp_path):
    res = build().run()
    res.save(tmp_path / "r")
    back = fg.Results.load(tmp_path / "r")
    pd.testing.assert_frame_equal(res.flows, back.flows)
    assert back.summary == res.summary


def test_results_print_as_one_line_saying_what_ran():
    assert repr(build()) == "<Scenario 'api', duration 4: a dumbbell topology, 1 flow entry>"
    shown = repr(build().run())
    assert shown.startswith("<Results 'api' seed 5, 4 s simulated, ") and "valid;" in shown
    assert "rows: flows 2, ports " in shown and "\n" not in shown and len(shown) < 400


def test_throughput_series_matches_totals():
    res = build().run()
    rates = res.throughput()
    assert list(rates.columns) == ["c0", "c1"]
    assert (rates.to_numpy() >= 0).all()
    assert "cbr" in fg.registry()["source"]


def test_a_thread_waiting_for_a_running_simulation_lets_others_run():
    """`now_s` asked while another thread runs the simulation waits for that run to return,
    without holding the GIL: the interpreter's other threads go on meanwhile."""
    from pathlib import Path

    from fairgate import _core

    soak = Path(__file__).parent.parent / "scenarios" / "soak.toml"
    sim = _core.load(soak.read_text(), ["simulation.duration=600s"])
    runner = threading.Thread(target=sim.run_until, args=(sim.end_s,))
    waiting = threading.Event()
    rounds_while_waiting = []

    def other() -> None:
        while runner.is_alive():
            if waiting.is_set():
                rounds_while_waiting.append(1)
            time.sleep(0.001)

    runner.start()
    time.sleep(0.2)
    watcher = threading.Thread(target=other)
    watcher.start()
    waiting.set()
    now = sim.now_s
    waiting.clear()
    runner.join()
    watcher.join()
    assert now == sim.end_s == 600.0
    # The run takes about 2 s after the call; with the GIL held by the waiting thread, the
    # other ran at most once or twice (before the wait began).
    assert len(rounds_while_waiting) > 20


class _SlowSimulation:
    """Stands in for the core's simulation: each simulated second costs `cost` seconds of a
    fake wall clock, which `run_until` advances."""

    def __init__(self, end: float, cost: float) -> None:
        self.end_s, self.now_s, self.cost, self.clock = end, 0.0, cost, 0.0
        self.calls: list[tuple[float, float]] = []

    def run_until(self, t: float) -> None:
        took = (t - self.now_s) * self.cost
        self.clock += took
        self.calls.append((t, took))
        self.now_s = t


@pytest.mark.parametrize("end, cost", [(2e6, 5e-3), (60.0, 30.0), (1.0, 1e-4), (0.0, 1.0)])
def test_a_run_advances_in_chunks_of_a_fraction_of_a_second(monkeypatch, end, cost):
    """Python sees Ctrl-C only between chunks, so a chunk is sized by the wall time it takes
    (the soak's 2,000,000 s took 55 s a chunk when chunks were 1/200 of the run)."""
    from fairgate import runner

    sim = _SlowSimulation(end, cost)
    monkeypatch.setattr(runner.time, "perf_counter", lambda: sim.clock)
    runner._advance(sim, progress=False)
    targets = [t for t, _ in sim.calls]
    assert targets[-1] == end and targets == sorted(targets)
    assert max(took for _, took in sim.calls) <= max(0.01 * cost, 2 * runner.CHUNK_WALL_SECONDS)
    assert len(sim.calls) >= min(runner.PROGRESS_STEPS, 1 + end * cost / 0.5)


def test_a_sweep_file_given_as_a_scenario_says_so(tmp_path):
    sweep_file = tmp_path / "sweep.toml"
    sweep_file.write_text('scenario = "s.toml"\n[grid]\nseed = [1, 2]\n', encoding="utf-8")
    for call in (fg.run_file, fg.validate_file, fg.sweep):
        with pytest.raises(fg.ScenarioError, match="got a sweep file .*`fairgate sweep PATH`"):
            call(sweep_file)

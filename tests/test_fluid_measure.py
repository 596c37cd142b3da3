"""Measuring the fluid models' inputs from fairgate runs [Byun07, §4.4, §6.4]."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import fairgate as fg
from conftest import SCENARIOS
from fairgate import fluid
from fairgate.fluid.measure import entry_times

# The satellite PEP scenario sampled every 100 ms for a little over 500 samples, as the source does.
SAMPLED = ['simulation.sample_interval="100ms"', 'simulation.duration="51s"']


@pytest.fixture(scope="module")
def satellite_run() -> fg.Results:
    return fg.run_file(SCENARIOS / "satellite_pep.toml", SAMPLED)


def test_offered_load_ratio_has_mean_one(satellite_run) -> None:
    omega = fluid.offered_load_ratio(satellite_run)
    assert omega.mean() == pytest.approx(1.0)
    assert len(omega) >= fluid.measure.POINTS


def test_offered_load_ratio_has_mean_one_over_the_fitted_window(satellite_run) -> None:
    omega = fluid.offered_load_ratio(satellite_run, start_s=10.0, points=50)
    window = omega[omega.index >= 10.0].iloc[:50]
    assert len(window) == 50
    assert window.mean() == pytest.approx(1.0)
    whole = fluid.offered_load_ratio(satellite_run)
    assert not whole[whole.index >= 10.0].iloc[:50].mean() == pytest.approx(1.0)


def test_entry_times_invert_a_cumulative_count() -> None:
    accepted = np.array([0.0, 100.0, 100.0, 300.0])
    times = np.array([0.0, 1.0, 2.0, 3.0])
    level = np.array([-5.0, 50.0, 100.0, 200.0, 300.0])
    assert entry_times(accepted, times, level).tolist() == [0.0, 0.5, 1.0, 2.5, 3.0]


def test_pep_delay_is_the_fifo_wait_in_the_send_buffers(satellite_run) -> None:
    delay = fluid.pep_delay(satellite_run, "pep")
    traces = satellite_run.traces

    def summed(var: str) -> pd.Series:
        rows = traces[traces["var"].astype(str) == f"pep.{var}"]
        return rows.groupby("time_s", observed=True)["value"].sum().reindex(delay.index)

    accepted, waiting = summed("relayed_bytes"), summed("send_buffer")
    times = delay.index.to_numpy()
    entered = times - delay.to_numpy() * 0.1
    assert (delay >= 0).all() and delay.max() > 0
    assert (np.diff(entered) >= -1e-9).all()
    assert (delay[waiting.to_numpy() == 0] == 0).all()
    busy = (waiting.to_numpy() > 0) & ((accepted - waiting).to_numpy() >= accepted.iloc[0])
    reached = np.interp(entered[busy], times, accepted.to_numpy())
    expected = (accepted - waiting).to_numpy()[busy]
    assert np.allclose(reached, expected, rtol=1e-6, atol=1.0)


def test_new_connection_fraction_counts_every_start_once(satellite_run) -> None:
    upsilon = fluid.new_connection_fraction(satellite_run)
    flows = satellite_run.flows
    data = flows[flows["role"].astype(str) == "data"]
    inside = (data["start_s"] > upsilon.index[0] - 0.1) & (data["start_s"] <= upsilon.index[-1])
    assert upsilon.sum() * len(data) == pytest.approx(inside.sum())


def test_measure_inputs_fits_and_stores_every_input(satellite_run, tmp_path) -> None:
    inputs = fluid.measure_inputs(satellite_run, gateway="pep")
    assert set(inputs) == {"omega", "upsilon", "delay"}
    assert inputs["omega"].period == pytest.approx(500.0)
    assert inputs["omega"].a0 == pytest.approx(1.0, abs=0.1)
    path = fluid.save_inputs(inputs, tmp_path / "fluid_inputs.json")
    assert fluid.load_inputs(path) == inputs
    solution = fluid.solve("red", fluid.FluidParams(horizon=20.0), fluid.FluidInputs(**inputs))
    assert np.isfinite(solution[["lam", "q", "p"]].to_numpy()).all()


def test_measuring_needs_the_gateway_and_enough_samples(satellite_run) -> None:
    with pytest.raises(fg.ScenarioError, match="no 'nowhere.relayed_bytes' samples"):
        fluid.pep_delay(satellite_run, "nowhere")
    with pytest.raises(fg.ScenarioError, match=r"samples from 40\.0 s, expected 500"):
        fluid.measure_inputs(satellite_run, start_s=40.0)


def test_new_connections_of_an_http_population_come_from_its_births() -> None:
    sc = fg.Scenario("http-births", duration=30, seed=5, sample_interval="100ms")
    sc.dumbbell(
        senders=1,
        bottleneck=fg.link_params("20Mbps", "20ms", fg.queue("fifo", limit=200)),
        access=fg.link_params("100Mbps", "1ms"),
    )
    sc.flow("s0", "d0", fg.source("http", connections=20, page_size=20000), name="http")
    run = sc.run()
    births = fluid.measure.cumulative_births(run)
    assert births is not None and births.iloc[-1] > 20
    upsilon = fluid.new_connection_fraction(run, connections=20)
    first = births[births.index <= upsilon.index[0] - 0.1]
    opened = births.iloc[-1] - (first.iloc[-1] if len(first) else 0.0)
    assert upsilon.sum() * 20 == pytest.approx(opened)
    assert fluid.new_connection_fraction(run).index.equals(upsilon.index)


def test_a_longer_new_connection_window_counts_the_recent_openings(satellite_run) -> None:
    per_interval = fluid.new_connection_fraction(satellite_run)
    stock = fluid.new_connection_fraction(satellite_run, window=10)
    expected = per_interval.rolling(10, min_periods=1).sum().clip(0.0, 1.0)
    assert np.allclose(stock.to_numpy(), expected.to_numpy())
    assert fluid.new_connection_fraction(satellite_run, window=1).equals(per_interval)
    with pytest.raises(fg.ScenarioError, match="`window`: got 0, expected a whole number >= 1"):
        fluid.new_connection_fraction(satellite_run, window=0)

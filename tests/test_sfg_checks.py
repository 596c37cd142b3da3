"""The SFG-PI reproduction's measured checks [Chung06, §4.1-4.2] on hand-made runs: the queue's
coefficient of variation per phase, the CBR flows' goodput over the TCP-friendly rate of
equation 4, and the detection delay of the CBR flows."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from fairgate.analysis.sfg import tcp_friendly_rate
from fairgate.repro import sfg_checks as checks
from fairgate.repro.sfg_runs import SfgRun

PHASE = 20.0
COUNT = 10


def make_run(
    queue: np.ndarray | None = None,
    cbr_mbps: float = 0.0,
    phases: pd.DataFrame | None = None,
    first: dict[str, float] | None = None,
) -> SfgRun:
    times = np.arange(1.0, PHASE * COUNT + 1.0)
    queue_bytes = np.zeros(len(times)) if queue is None else queue
    throughput = pd.DataFrame({"time_s": times, "cbr": 2 * cbr_mbps})
    throughput["cbr0"] = cbr_mbps
    throughput["cbr1"] = cbr_mbps
    return SfgRun(
        scenario="cbr",
        scheme="X",
        port={},
        queue=pd.DataFrame({"time_s": times, "bytes": queue_bytes}),
        throughput=throughput,
        phases=phases if phases is not None else pd.DataFrame(),
        sfg_on_s=math.nan,
        sfg_off_s=math.nan,
        first_filter_drop_s=first or {},
    )


def test_a_steady_queue_varies_by_nothing_and_a_square_wave_by_one():
    times = np.arange(1.0, PHASE * COUNT + 1.0)
    square = np.where(times % 2 == 0, 0.0, 200e3)
    steady = checks.queue_variation(make_run(np.full(len(times), 100e3)), PHASE, COUNT)
    swinging = checks.queue_variation(make_run(square), PHASE, COUNT)
    assert (steady == 0).all()
    assert swinging.to_numpy() == pytest.approx(np.ones(COUNT), abs=0.1)


def test_the_first_tenth_of_a_phase_is_left_out():
    times = np.arange(1.0, PHASE * COUNT + 1.0)
    offset = times - np.minimum(times // PHASE, COUNT - 1) * PHASE
    queue = np.where(offset < checks.SETTLE_FRACTION * PHASE, 0.0, 50e3)
    assert (checks.queue_variation(make_run(queue), PHASE, COUNT) == 0).all()


def test_cbr_phases_are_the_whole_phases_between_start_and_stop():
    assert checks.cbr_phases(COUNT) == [1, 2, 3, 4, 5, 6, 7]


def test_goodput_over_the_tcp_friendly_rate_of_each_phase():
    rate = np.linspace(0.01, 0.1, COUNT)
    arrivals = np.full(COUNT, 10_000)
    phases = pd.DataFrame(
        {
            "arrivals_pkts": arrivals + 1000,
            "filter_drops": np.full(COUNT, 1000),
            "queue_drops": (rate * arrivals / 2).astype(int),
            "marks": (rate * arrivals / 2).astype(int),
        }
    )
    run = make_run(cbr_mbps=0.3, phases=phases)
    ratio = checks.friendly_ratio_by_phase(run, PHASE)
    expected = [0.3 / (tcp_friendly_rate(1000, 0.1, rate[k]) / 1e6) for k in range(1, 8)]
    assert ratio.index.tolist() == list(range(1, 8))
    assert ratio.to_numpy() == pytest.approx(expected, rel=1e-9)


def test_detection_delay_counts_from_the_cbr_start_and_misses_are_infinite():
    run = make_run(first={"cbr0": 90.0, "cbr1": math.nan, "cbr2": 50.0})
    delays = checks.detection_delays(run, PHASE)
    assert delays == {"cbr0": 80.0, "cbr1": math.inf, "cbr2": 40.0}
    assert checks.median_detection_delay(run, PHASE) == 80.0

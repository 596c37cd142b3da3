"""The engine against queueing theory: M/M/1 and M/D/1 at load 0.8 within 2%."""

from __future__ import annotations

import pytest

import fairgate as fg
from conftest import assert_conserved

RATE_BPS = 80e6
MEAN_BYTES = 10_000  # a mean service time of 1 ms
LOAD = 0.8
PACKETS = 4_000_000


def single_queue(size: int | dict) -> fg.Results:
    service_s = MEAN_BYTES * 8 / RATE_BPS
    duration = PACKETS * service_s / LOAD
    sc = fg.Scenario("mm1", duration=duration, sample_interval=duration / 10, seed=3)
    sc.node("a").node("b")
    sc.link("a", "b", RATE_BPS, 0, fg.queue("fifo", limit=1_000_000), duplex=False)
    sc.flow("a", "b", fg.source("poisson", rate=LOAD * RATE_BPS, size=size))
    res = sc.run()
    assert_conserved(res)
    return res


def test_mm1_mean_queue_and_delay():
    res = single_queue({"dist": "exponential", "mean": MEAN_BYTES})
    port = res.ports.iloc[0]
    rho, service_s = LOAD, MEAN_BYTES * 8 / RATE_BPS
    assert port["mean_system_pkts"] == pytest.approx(rho / (1 - rho), rel=0.02)
    assert port["mean_queue_pkts"] == pytest.approx(rho**2 / (1 - rho), rel=0.02)
    sojourn = service_s / (1 - rho)
    assert res.flows.iloc[0]["mean_delay_s"] == pytest.approx(sojourn, rel=0.02)
    assert port["utilisation"] == pytest.approx(rho, rel=0.01)


def test_md1_pollaczek_khinchine():
    res = single_queue(MEAN_BYTES)
    port = res.ports.iloc[0]
    rho, service_s = LOAD, MEAN_BYTES * 8 / RATE_BPS
    lq = rho**2 / (2 * (1 - rho))
    assert port["mean_queue_pkts"] == pytest.approx(lq, rel=0.02)
    wait = lq * service_s / rho
    assert port["mean_wait_s"] == pytest.approx(wait, rel=0.02)
    assert res.flows.iloc[0]["mean_delay_s"] == pytest.approx(wait + service_s, rel=0.02)

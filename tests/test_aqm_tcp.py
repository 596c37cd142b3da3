"""Active queue management under TCP load (issue 5's behavioural tests with closed-loop
traffic): RED keeps its average queue between its thresholds, PI holds the queue at its
reference, and SFB and RED-PD cut an unresponsive flow down toward its fair share."""

from __future__ import annotations

import pytest

import fairgate as fg
from conftest import assert_conserved

BOTTLENECK = "left->right"


def dumbbell(
    queue: dict,
    tcp_flows: int,
    rate: str = "10Mbps",
    rtts: list[str] | None = None,
    duration: float = 40,
    cbr: str | None = None,
    mss: int = 1000,
) -> fg.Results:
    senders = tcp_flows + (1 if cbr else 0)
    sc = fg.Scenario("aqm-tcp", duration=duration, sample_interval=0.1, seed=2)
    sc.dumbbell(
        senders=senders,
        bottleneck=fg.link_params(rate, "10ms", queue),
        access=fg.link_params("1Gbps", "1ms"),
        rtt=rtts or [f"{40 + 8 * i}ms" for i in range(senders)],
    )
    tcp = fg.source("tcp", cc="newreno", mss=mss)
    start = {"dist": "uniform", "min": 0, "max": 1}
    sc.flow("s{i}", "d{i}", tcp, name="tcp{i}", count=tcp_flows, start=start)
    if cbr:
        sc.flow(f"s{tcp_flows}", f"d{tcp_flows}", fg.source("cbr", rate=cbr), name="cbr")
    res = sc.run()
    assert_conserved(res)
    return res


def test_red_average_stays_between_thresholds_under_tcp():
    red = fg.queue("red", min_th=5, max_th=15, w_q=0.002, max_p=0.02, limit=60)
    res = dumbbell(red, tcp_flows=8)
    state = res.qdisc_state
    avg = state[(state["port"] == BOTTLENECK) & (state["var"] == "avg") & (state["time_s"] > 10)]
    assert 5 < avg["value"].mean() < 15, avg["value"].describe()
    # 0.912 before Limited Transmit became the default, 0.886 with it (seeds 1-8: mean 0.877 with
    # it, 0.898 without): the segments it sends on the first duplicates meet RED's early drops.
    assert res.ports.set_index("port").loc[BOTTLENECK, "utilisation"] > 0.85


def test_pi_holds_the_queue_at_its_reference():
    # Hollot et al. (INFOCOM 2001): 60 TCP flows, 15 Mb/s of 500-byte packets, RTT ~ 0.2 s,
    # q_ref = 200 packets, a = 1.822e-5, b = 1.816e-5 at 160 Hz.
    pi = fg.queue(
        "pi", a=1.822e-5, b=1.816e-5, sampling_hz=160, q_ref=200, mode="packets", limit=800
    )
    rtts = [f"{200 + i}ms" for i in range(60)]
    res = dumbbell(pi, tcp_flows=60, rate="15Mbps", rtts=rtts, duration=60, mss=460)
    qs = res.queue_series
    queue = qs[(qs["port"] == BOTTLENECK) & (qs["time_s"] > 20)]["packets"]
    assert queue.mean() == pytest.approx(200, rel=0.1)
    assert res.ports.set_index("port").loc[BOTTLENECK, "utilisation"] > 0.95


@pytest.mark.parametrize("kind", ["sfb", "red_pd"])
def test_unresponsive_flow_is_cut_toward_its_fair_share(kind):
    # Four TCP flows and a 6 Mb/s CBR flow on 10 Mb/s: the fair share is 2 Mb/s each.
    greedy = dumbbell(fg.queue("fifo", limit=100), tcp_flows=4, cbr="6Mbps")
    policed = dumbbell(fg.queue(kind), tcp_flows=4, cbr="6Mbps")
    cbr_fifo = greedy.flows.set_index("flow").loc["cbr", "goodput_bps"]
    flows = policed.flows.set_index("flow")
    assert cbr_fifo > 5.5e6
    assert flows.loc["cbr", "goodput_bps"] < 3.5e6
    tcp = [flows.loc[f"tcp{i}", "goodput_bps"] for i in range(4)]
    assert min(tcp) > 1.2e6, tcp

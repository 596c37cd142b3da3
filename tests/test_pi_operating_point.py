"""PI's operating point in the SFG-PI paper's setting [Chung06, §4]: with the printed gains and
the reference read as the reported 100 KB operating queue, PI holds the mean queue near 100 KB
with the link busy; the literal reference of 0 lets the integral part only grow the notification
probability, which drains the queue and idles the link (docs/models/pi.md)."""

from __future__ import annotations

import pytest

import fairgate as fg
from conftest import assert_conserved
from fairgate.repro.sfg_setup import TCP

BOTTLENECK = "left->right"
DURATION = 200.0


def tcp_mix_without_web(queue: dict, ftp_flows: int = 50, reverse_flows: int = 50) -> fg.Results:
    """The paper's dumbbell: 10 Mb/s, RTTs uniform in [60, 1000] ms, ECN NewReno FTP flows of
    1000-byte packets forward and reverse, with the SFG reproduction's ns-2 TCP (no timestamps,
    no delayed ACKs, 10 ms ticks)."""
    sc = fg.Scenario("pi-operating-point", duration=DURATION, sample_interval=0.5, seed=1)
    sc.dumbbell(
        senders=max(ftp_flows, reverse_flows),
        bottleneck=fg.link_params("10Mbps", "10ms", queue),
        access=fg.link_params("100Mbps", "1ms"),
        rtt={"dist": "uniform", "min": "60ms", "max": "1000ms"},
    )
    tcp = fg.source("tcp", **TCP)
    start = {"dist": "uniform", "min": 0, "max": 10}
    sc.flow("s{i}", "d{i}", tcp, name="ftp{i}", count=ftp_flows, start=start)
    sc.flow("d{i}", "s{i}", tcp, name="rev{i}", count=reverse_flows, start=start)
    res = sc.run()
    assert_conserved(res)
    return res


def second_half_queue_kb(res: fg.Results) -> float:
    qs = res.queue_series
    rows = qs[(qs["port"] == BOTTLENECK) & (qs["time_s"] > DURATION / 2)]
    return float(rows["bytes"].mean()) / 1e3


def utilisation(res: fg.Results) -> float:
    """The bottleneck's output rate over the second half (the operating point, as the queue),
    over its 10 Mb/s."""
    qs = res.queue_series
    rows = qs[(qs["port"] == BOTTLENECK) & (qs["time_s"] > DURATION / 2)]
    return float(rows["departure_bps"].mean()) / 10e6


@pytest.mark.parametrize("ftp_flows", [50, 200])
def test_the_papers_pi_holds_about_100_kb_with_the_link_busy(ftp_flows):
    res = tcp_mix_without_web(fg.queue("pi", limit_bytes=500_000), ftp_flows=ftp_flows)
    assert 70 < second_half_queue_kb(res) < 130
    assert utilisation(res) > 0.93


def test_a_reference_of_zero_drains_the_queue_and_idles_the_link():
    res = tcp_mix_without_web(fg.queue("pi", limit_bytes=500_000, q_ref=0))
    assert second_half_queue_kb(res) < 20
    assert utilisation(res) < 0.8
    state = res.qdisc_state
    p = state[(state["port"] == BOTTLENECK) & (state["var"] == "p")]["value"]
    # The probability stays high over an empty queue: nothing in the update brings it down.
    assert p[state["time_s"] > DURATION / 2].min() > 0.03

"""[Keshav91] scenario 4's firewall property with flow-controlled traffic: an FTP (Generic,
window 5) shares a 10 pkt/s FQ line with a source sending at line rate. Without charging
dropped packets to its finish number the ill-behaved source gets about its fair share (seed:
4.9-5.0 pkt/s); with charging its bids run ahead of the FTP's and it falls toward zero (the
thesis: "had we done so, malicious sources would have got almost zero throughput"). Measured:
1.0 pkt/s with charging, a fifth of its fair share: its finish number grows by one packet per
arrival at 10 pkt/s while the FTP's grows only with what the FTP sends, so its head-of-line
bid still falls below the FTP's about once a second."""

from __future__ import annotations

import pytest

import fairgate as fg
from conftest import assert_conserved

PACKET_RATE = 10.0  # 80 kb/s of 1000-byte packets


def scenario_4(queue: dict) -> fg.Results:
    sc = fg.Scenario("keshav-s4", duration=300, sample_interval=1.0)
    sc.router("switch").node("sink").node("ftp").node("ill")
    for host in ("ftp", "ill"):
        sc.link(host, "switch", 800_000, 0, fg.queue("fifo", limit=1000))
    sc.link("switch", "sink", 80_000, 0, queue)
    sc.flow("ftp", "sink", fg.source("generic", window=5), name="ftp")
    sc.flow("ill", "sink", fg.source("malicious", rate=80_000), name="ill")
    res = sc.run()
    assert_conserved(res)
    return res


def packets_per_second(res: fg.Results, flow: str) -> float:
    return res.flows.set_index("flow").loc[flow, "goodput_bps"] / 8000


@pytest.mark.parametrize("drop", ["longest_tail", "largest_bid"])
def test_without_charging_each_gets_its_fair_share(drop):
    fq = fg.queue("fq", classify="conversation", limit=20, drop=drop)
    res = scenario_4(fq)
    assert packets_per_second(res, "ftp") == pytest.approx(5.0, abs=0.1)
    assert packets_per_second(res, "ill") == pytest.approx(5.0, abs=0.1)


@pytest.mark.parametrize("drop", ["longest_tail", "largest_bid"])
def test_charging_drives_the_ill_behaved_source_toward_zero(drop):
    fq = fg.queue("fq", classify="conversation", limit=20, drop=drop, charge_dropped=True)
    res = scenario_4(fq)
    assert packets_per_second(res, "ill") < 0.25 * 5.0
    assert packets_per_second(res, "ftp") > 8.5


def test_fcfs_lets_the_ill_behaved_source_take_the_line():
    res = scenario_4(fg.queue("fifo", limit=20))
    assert packets_per_second(res, "ftp") < 0.5 * PACKET_RATE

"""The SFG-PI paper's two scenarios for its seven schemes [Chung06, §4], run short (phases of
20 s, a tenth of the flows): every scheme builds, runs and conserves packets; the forward FTP
groups follow the phase table; drop-tail leaves the CBR flows their 2 Mb/s while SFG-PI holds
them near the bin share C/N = 0.5 Mb/s; PI holds its queue near its 100 KB reference."""

from __future__ import annotations

import pytest

from conftest import assert_conserved
from fairgate.repro.sfg_setup import BOTTLENECK, PHASE_FLOWS, SCHEMES, phase_groups, scenario

PHASE = 20.0
SCALE = 0.1


def test_flow_groups_follow_the_phase_table():
    groups = phase_groups(1.0)
    for phase, count in enumerate(PHASE_FLOWS):
        active = sum(high - low for low, high, first, end in groups if first <= phase < end)
        assert active == count
    assert phase_groups(SCALE)[-1][1] == 40


def cbr_goodput_mbps(res) -> float:
    flows = res.flows[res.flows["flow"].astype(str).str.startswith("cbr")]
    assert len(flows) == 5
    return float(flows["goodput_bps"].mean()) / 1e6


@pytest.mark.parametrize("cbr", [False, True], ids=["tcp-mix", "cbr"])
@pytest.mark.parametrize("scheme", list(SCHEMES))
def test_every_scheme_runs_both_scenarios(scheme, cbr):
    res = scenario(scheme, cbr=cbr, phase=PHASE, scale=SCALE).run()
    assert_conserved(res)
    port = res.ports.set_index("port").loc[BOTTLENECK]
    assert port["utilisation"] > 0.5
    if cbr and scheme == "DT":
        assert cbr_goodput_mbps(res) > 1.8
    if cbr and scheme == "SFG-PI":
        assert cbr_goodput_mbps(res) < 0.8
    if not cbr and scheme == "PI":
        qs = res.queue_series
        queue = qs[(qs["port"] == BOTTLENECK) & (qs["time_s"] > PHASE)]["bytes"]
        assert 30e3 < queue.mean() < 150e3

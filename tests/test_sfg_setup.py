"""The SFG-PI paper's scenarios [Chung06, §4]: the forward FTP groups follow the phase table
(the runs themselves are checked by tests/test_sfg_repro.py)."""

from __future__ import annotations

from fairgate.repro import sfg_calibration as calibration
from fairgate.repro.sfg_setup import PHASE_FLOWS, phase_groups, scenario


def test_flow_groups_follow_the_phase_table():
    groups = phase_groups(1.0)
    for phase, count in enumerate(PHASE_FLOWS):
        active = sum(high - low for low, high, first, end in groups if first <= phase < end)
        assert active == count
    assert phase_groups(0.1)[-1][1] == 40


def test_web_sessions_on_their_own_hosts_started_over_30_s():
    doc = scenario("SFG-PI", cbr=True).to_dict()
    flows = doc["flows"]
    web = [f for f in flows if f["name"].startswith("web")]
    assert sum(f["source"]["sessions"] for f in web) == 300
    starts = sorted(
        f["start"] + f["source"]["start_window"] * j / f["source"]["sessions"]
        for f in web
        for j in range(f["source"]["sessions"])
    )
    assert starts[0] == 0 and starts[-1] < 30
    assert max(b - a for a, b in zip(starts, starts[1:], strict=False)) < 0.11
    assert {f["stop"] for f in web} == {1850.0}
    hosts = [f["src"] for f in flows if f["name"].startswith(("web", "cbr"))]
    assert len(set(hosts)) == len(hosts)
    assert doc["topology"]["senders"] == 400 + 30 + 5
    tcps = [f["source"] for f in flows if f["source"]["kind"] == "tcp"]
    tcps += [f["source"]["tcp"] for f in web]
    assert all(t["timestamps"] is False and t["delayed_ack"] is False for t in tcps)


def test_scenarios_validate():
    scenario("DT", phase=20.0, scale=0.1).validate()
    calibration.scenario(1200, 100.0, 0.1, 10.0).validate()

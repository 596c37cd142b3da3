"""The SFG-PI paper's scenarios [Chung06, §4]: the forward FTP groups follow the phase table
(the runs themselves are checked by tests/test_sfg_repro.py)."""

from __future__ import annotations

from fairgate.repro.sfg_setup import PHASE_FLOWS, phase_groups


def test_flow_groups_follow_the_phase_table():
    groups = phase_groups(1.0)
    for phase, count in enumerate(PHASE_FLOWS):
        active = sum(high - low for low, high, first, end in groups if first <= phase < end)
        assert active == count
    assert phase_groups(0.1)[-1][1] == 40

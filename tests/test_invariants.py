"""The invariants the fuzzers check (``invariants.violations``) hold on a shipped scenario and
name each row that breaks them, so that a fuzzer's pass is not the checker's blindness."""

from __future__ import annotations

import copy

import pytest

import fairgate as fg
from conftest import SCENARIOS
from invariants import violations


@pytest.fixture(scope="module")
def showcase() -> fg.Results:
    return fg.run_file(SCENARIOS / "showcase.toml", ['simulation.duration="12s"'])


def tampered(res: fg.Results, table: str, row: int, column: str, value: object) -> fg.Results:
    out = copy.deepcopy(res)
    frame = getattr(out, table)
    frame.loc[frame.index[row], column] = value
    return out


def test_a_shipped_scenario_keeps_every_invariant(showcase: fg.Results):
    assert violations(showcase) == []


@pytest.mark.parametrize(
    ("table", "column", "value", "said"),
    [
        ("ports", "utilisation", 1.5, "utilisation > 1"),
        ("ports", "departures_bytes", 10**15, "sent faster than its rate"),
        ("ports", "drops_overflow", 10**6, "drops != their causes"),
        ("ports", "mean_queue_pkts", 1e9, "mean queue above its maximum"),
        ("ports", "throughput_bps", 1.0, "throughput"),
        ("flows", "goodput_bytes", 10**12, "goodput > delivered"),
        ("flows", "loss_rate", 1.5, "loss rate outside [0, 1]"),
        ("flows", "min_delay_s", 100.0, "delays not min <= mean <= max"),
        ("flows", "goodput_bps", 1.0, "goodput_bps is not goodput_bytes over its span"),
        ("flows", "delivered_pkts", 10**9, "totals: delivered_pkts"),
    ],
)
def test_a_broken_invariant_is_named(
    showcase: fg.Results, table: str, column: str, value: object, said: str
):
    found = violations(tampered(showcase, table, 0, column, value))
    assert any(said in v for v in found), found

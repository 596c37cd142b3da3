"""CBR utilisation and drop rate, exact delays, and conservation on every shipped scenario."""

from __future__ import annotations

import tomllib

import pytest

import fairgate as fg
from conftest import SCENARIOS, assert_conserved
from fairgate.atm import run_atm


def test_cbr_below_capacity(two_hosts: fg.Scenario):
    two_hosts.flow("a", "b", fg.source("cbr", rate="7Mbps"))
    res = two_hosts.run()
    assert_conserved(res)
    link = res.ports.set_index("port").loc["a->b"]
    assert link["utilisation"] == pytest.approx(0.7, rel=0.001)
    assert res.flows.iloc[0]["dropped_pkts"] == 0


@pytest.mark.parametrize("rate_mbps", [12.5, 20, 40])
def test_cbr_above_capacity_drops_one_minus_c_over_r(rate_mbps: float):
    sc = fg.Scenario("overload", duration=30)
    sc.node("a").node("b")
    sc.link("a", "b", "10Mbps", "10ms", fg.queue("fifo", limit=5))
    sc.flow("a", "b", fg.source("cbr", rate=rate_mbps * 1e6))
    res = sc.run()
    assert_conserved(res)
    flow = res.flows.iloc[0]
    measured = flow["dropped_pkts"] / flow["offered_pkts"]
    assert measured == pytest.approx(1 - 10 / rate_mbps, rel=0.01)


def test_one_packet_delay_is_serialisation_plus_propagation(two_hosts: fg.Scenario):
    two_hosts.flow("a", "b", fg.source("cbr", rate="1Mbps", size=1500, packets=1))
    res = two_hosts.run()
    delay_ps = round(res.flows.iloc[0]["max_delay_s"] * 1e12)
    assert delay_ps == 1500 * 8 * 100_000 + 10_000_000_000


UNITS = {"ms": 1e-3, "s": 1.0, "min": 60.0}


def _seconds(value) -> float:
    if isinstance(value, int | float):
        return float(value)
    if isinstance(value, str):
        for unit in ("ms", "min", "s"):
            if value.endswith(unit):
                return float(value[: -len(unit)]) * UNITS[unit]
    if isinstance(value, dict):  # a start distribution: its largest value, when it has one
        return max((_seconds(value[k]) for k in ("max", "mean") if k in value), default=0.0)
    return 0.0


def _short_duration(path) -> float:
    """A few seconds past the last flow start, so every flow runs."""
    doc = tomllib.loads(path.read_text())
    starts = [_seconds(f.get("start", 0)) for f in doc.get("flows", [])]
    return max([3.0, *(s + 2.0 for s in starts)])


SCENARIO_FILES = [
    p
    for p in sorted({*SCENARIOS.rglob("*.toml"), *SCENARIOS.glob("*/*.toml")})
    if "simulation" in tomllib.loads(p.read_text())
]
"""Every shipped scenario (``glob`` also enters ``scenarios/keshav``, a link to the package's
data, which ``rglob`` does not follow); data files beside them (``pairs.toml``) have no
[simulation] table."""


@pytest.mark.parametrize("path", SCENARIO_FILES, ids=lambda p: p.stem)
def test_every_shipped_scenario_conserves_packets(path):
    if "atm" in tomllib.loads(path.read_text()):  # a cell network: the run checks conservation
        short = ["simulation.duration=0.6", "simulation.warmup=0.2"]
        assert run_atm(path.read_text(), short).backbone_cells > 0
        return
    res = fg.run_file(path, overrides=[f"simulation.duration={_short_duration(path)}"])
    assert_conserved(res)
    assert res.flows["offered_pkts"].sum() > 0

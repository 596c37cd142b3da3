"""Every discipline with more than one way to drop names the causes of its own decisions: at an
overloaded port, the named causes plus the plain buffer-full overflows add up to the port's
drops, and the causes are the ones its docs page lists (one test per family)."""

from __future__ import annotations

from typing import Any

import pytest

import fairgate as fg

RATES = ["4Mbps", "2Mbps", "1.5Mbps", "1.5Mbps", "1Mbps", "1Mbps", "1Mbps", "1Mbps"]
"""Eight CBR flows of 13 Mb/s in all into 10 Mb/s, one of them heavy (for per-flow rules)."""


def overload(queue: dict[str, Any]) -> fg.Results:
    """The eight flows into one 10 Mb/s port with `queue`, for 3 s."""
    sc = fg.Scenario("causes", duration=3, seed=5)
    sc.node("a").node("b").link("a", "b", "10Mbps", "5ms", queue)
    for i, rate in enumerate(RATES):
        sc.flow("a", "b", fg.source("cbr", rate=rate, size=1000), name=f"f{i}")
    return sc.run()


def check_causes(results: fg.Results, allowed: set[str]) -> set[str]:
    """Asserts that every drop of the port but the plain overflows has a named cause, and that
    the causes are among `allowed`; returns the causes seen."""
    port = results.ports.set_index("port").loc["a->b"]
    causes = results.drop_causes()
    seen = set(causes["cause"])
    assert seen <= allowed, seen - allowed
    named = causes.groupby("reason")["drops"].sum().to_dict()
    for reason in ("front", "pushout", "early", "forced", "filter", "frame"):
        assert named.get(reason, 0) == port[f"drops_{reason}"], (reason, named, port)
    plain_overflow = port["drops_overflow"] - named.get("overflow", 0)
    assert causes["drops"].sum() + plain_overflow == port["drops_pkts"]
    assert port["drops_pkts"] > 0
    return seen


RED = {"min_th": 5.0, "max_th": 15.0, "max_p": 0.1, "limit": 60}
AVQ_TH = {"min_th": 5.0, "max_th": 15.0}

AQM = [
    # The modified variant holds its buffer in its RED (`limit` there was unread, now refused).
    (fg.queue("sred", variant="modified", red={"limit": 60}), {"sred_early", "sred_forced"}),
    (fg.queue("sred", variant="original", limit=60), {"sred_early"}),
    (
        fg.queue("fred", red=RED),
        {"fred_flow_limit", "fred_early", "fred_forced"},
    ),
    (fg.queue("avq", limit=60), {"avq_virtual"}),
    (fg.queue("avqred", limit=60, **AVQ_TH), {"avqred_early", "avqred_forced"}),
    (fg.queue("pfavqred", avqred={"limit": 60, **AVQ_TH}), {"pfavqred_early", "pfavqred_forced"}),
    (fg.queue("blue", limit=60), {"blue_early"}),
    (fg.queue("pi", q_ref=20, limit=60), {"pi_early"}),
    (fg.queue("yellow", limit=60), {"yellow_early"}),
    (fg.queue("vrc", limit=60), {"vrc_early"}),
    (fg.queue("sfb", limit=60), {"sfb_early", "sfb_penalty"}),
    (fg.queue("step_mark", k=20, limit=60), {"step_mark"}),
    (
        fg.queue("early_random_drop", threshold=20, drop_probability=0.05, limit=60),
        {"early_random_arrival"},
    ),
    (
        fg.queue(
            "early_random_drop", threshold=20, drop_probability=0.05, victim="queued", limit=60
        ),
        {"early_random_queued"},
    ),
    (fg.queue("random_drop", limit=60), {"random_drop_queued", "random_drop_arrival"}),
    (fg.queue("vq_red", limit=60), {"vq_red_early", "vq_red_forced"}),
    (fg.queue("redfc", red=RED, hold_limit=20), {"redfc_hold_full"}),
]


@pytest.mark.parametrize(("queue", "allowed"), AQM, ids=[q["kind"] for q, _ in AQM])
def test_aqm_causes_add_up_to_the_port_drops(queue: dict[str, Any], allowed: set[str]) -> None:
    assert check_causes(overload(queue), allowed)


MANAGERS = [
    ({"kind": "lqd", "limit": 40}, {"lqd_longest"}),
    ({"kind": "rnd", "limit": 40}, {"rnd_nonconformant", "rnd_longest"}),
    ({"kind": "drop_from_front", "limit": 40}, {"drop_front"}),
    ({"kind": "red", "limit": 40}, {"fq_red_early", "fq_red_forced"}),
    ({"kind": "pfd", "limit": 40}, {"pfd_pushout", "pfd_early"}),
]


@pytest.mark.parametrize(("buffer", "allowed"), MANAGERS, ids=[b["kind"] for b, _ in MANAGERS])
def test_buffer_manager_causes_add_up_to_the_port_drops(
    buffer: dict[str, Any], allowed: set[str]
) -> None:
    assert check_causes(overload(fg.queue("stfq", buffer=buffer)), allowed)


SCHEDULERS = [
    (fg.queue("fq", limit=40, drop="longest_tail", classify="flow"), {"fq_steal"}),
    (
        fg.queue("fq", limit=40, drop="largest_bid", victim="before_admission", classify="flow"),
        {"fq_steal"},
    ),
    (fg.queue("nagle", limit=40, classify="flow"), {"nagle_longest"}),
    (fg.queue("stochastic_fq", limit=40), {"sfq_steal"}),
]


@pytest.mark.parametrize(
    ("queue", "allowed"), SCHEDULERS, ids=["fq", "fq_bid", "nagle", "stochastic_fq"]
)
def test_buffer_stealing_is_named(queue: dict[str, Any], allowed: set[str]) -> None:
    assert check_causes(overload(queue), allowed) == allowed


FRAMES = [
    (fg.queue("epd", limit=40), {"epd"}),
    (fg.queue("selective_drop", limit=40), {"selective_drop"}),
    (fg.queue("fba", limit=40), {"fba"}),
    (fg.queue("dfba", limit=40), {"dfba_severe", "dfba_clp", "dfba_random"}),
]


@pytest.mark.parametrize(("queue", "allowed"), FRAMES, ids=[q["kind"] for q, _ in FRAMES])
def test_frame_refusals_are_named(queue: dict[str, Any], allowed: set[str]) -> None:
    assert check_causes(overload(queue), allowed)

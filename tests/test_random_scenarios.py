"""Property-based scenarios from the Python builders (hypothesis): random topologies, rates,
sizes, disciplines with random parameters, sources and start/stop times, valid and invalid,
which must either be refused with ScenarioError or run, conserve every packet and keep the
invariants of ``invariants.violations``. The
``@example`` lines are the corpus of failures found so far."""

from __future__ import annotations

import math
from itertools import pairwise

import pytest
from hypothesis import HealthCheck, event, example, given, settings
from hypothesis import strategies as st

import fairgate as fg
from invariants import violations


# Property-based scenarios from the builders: mostly good values, one draw in eight a bad one.
def mostly(good: st.SearchStrategy, bad: st.SearchStrategy) -> st.SearchStrategy:
    return st.integers(min_value=0, max_value=7).flatmap(lambda k: bad if k == 0 else good)


# Good rates stay at or below 1 Gb/s and good sizes at or above 40 bytes, so that no valid
# case is a legitimately huge run (a 1 Tb/s source of 1-byte packets is valid but slow).
RATES = mostly(
    st.sampled_from(["10Mbps", "1Gbps", "64kbit/s", "2MB/s", "100Mbps", 5e6]),
    st.one_of(
        st.sampled_from(["10mbps", "0bps", "2Tbps", "fast"]),
        st.floats(allow_nan=True, allow_infinity=True),
        st.integers(min_value=-10, max_value=10**15),
    ),
)
DURATIONS = mostly(
    st.one_of(st.sampled_from(["10ms", "0s", "1ps", "2 ms"]), st.floats(0, 0.05)),
    st.one_of(st.sampled_from(["-1s", "10 parsecs", "5 min"]), st.just(math.nan)),
)
# Good gaps and on periods stay at or above 1 ms for the same reason.
GAPS = mostly(
    st.one_of(st.sampled_from(["10ms", "2 ms"]), st.floats(0.001, 0.05)),
    st.sampled_from([0, "1ps", "-1s", math.nan]),
)
SIZES = mostly(st.integers(min_value=40, max_value=9000), st.sampled_from([0, -5, 2e6, math.nan]))
QUEUES = st.builds(
    lambda kind, limit: fg.queue(kind, limit=limit) if kind == "fifo" else fg.queue(kind),
    st.sampled_from(sorted(set(fg.registry()["qdisc"]) - {"test_leak", "test_corrupt"})),
    st.integers(min_value=-1, max_value=500),
)


# RED with random thresholds and drop probability (bad: inverted thresholds, p outside [0, 1]).
RED_QUEUES = st.builds(
    lambda low, span, p: fg.queue("red", min_th=low, max_th=low + span, max_p=p),
    st.integers(min_value=-2, max_value=60),
    st.integers(min_value=-5, max_value=200),
    mostly(st.floats(0.001, 1.0), st.sampled_from([0, -0.5, 2.0, math.nan])),
)
STOPS = mostly(st.sampled_from([None, 0.15, "250ms"]), st.sampled_from([0, -1, math.nan]))


def add_topology(draw: st.DrawFn, sc: fg.Scenario) -> list[tuple[str, str]]:
    """A dumbbell, a chain (parking lot) or a small explicit graph; the host pairs flows use."""
    queue = draw(st.one_of(QUEUES, RED_QUEUES))
    bottleneck = fg.link_params(draw(RATES), draw(DURATIONS), queue)
    access = fg.link_params(draw(RATES), draw(DURATIONS))
    kind = draw(st.sampled_from(["dumbbell", "chain", "graph"]))
    if kind == "dumbbell":
        senders = draw(mostly(st.integers(min_value=1, max_value=4), st.just(0)))
        sc.dumbbell(senders, bottleneck, access)
        return [(f"s{i}", f"d{i}") for i in range(max(senders, 1))]
    if kind == "chain":
        hops = draw(mostly(st.integers(min_value=1, max_value=3), st.just(0)))
        sc.chain(hops, bottleneck, access)
        return [("src", "dst")] + [(f"x{i}s", f"x{i}d") for i in range(max(hops, 1))]
    # A path a - r0 - ... - r{n-1} - b, sometimes with a detached host c (no route to it).
    routers = draw(st.integers(min_value=1, max_value=3))
    chain = ["a"] + [f"r{i}" for i in range(routers)] + ["b"]
    for name in chain:
        sc.node(name, "router" if name.startswith("r") else "host")
    for src, dst in pairwise(chain):
        sc.link(src, dst, draw(RATES), draw(DURATIONS), queue=draw(QUEUES))
    pairs = [("a", "b"), ("b", "a")]
    if draw(st.integers(min_value=0, max_value=7)) == 0:
        sc.node("c")
        pairs.append(("a", "c"))
    return pairs


@st.composite
def scenarios(draw: st.DrawFn) -> fg.Scenario:
    """Random topologies, rates, delays, queues, sources, starts and stops, valid or not."""
    duration = draw(mostly(st.sampled_from([0.2, 0.5, "300ms"]), st.sampled_from([0, "1e9s"])))
    sc = fg.Scenario("prop", duration=duration, seed=draw(st.integers(0, 2**32)))
    pairs = add_topology(draw, sc)
    for i in range(draw(st.integers(min_value=0, max_value=len(pairs)))):
        kind = draw(st.sampled_from(["cbr", "poisson", "telnet", "tcp", "onoff", "http", "web"]))
        population = draw(mostly(st.integers(min_value=1, max_value=5), st.just(10**9)))
        params = {
            "cbr": {"rate": draw(RATES), "size": draw(SIZES)},
            "poisson": {"rate": draw(RATES)},
            "telnet": {"gap": draw(GAPS)},
            "tcp": {"cc": draw(st.sampled_from(["newreno", "reno", "tahoe", "cubic"]))},
            "onoff": {"rate": draw(RATES), "on": draw(GAPS), "off": draw(GAPS)},
            "http": {"connections": population, "think": draw(GAPS)},
            "web": {"sessions": population, "start_window": draw(GAPS)},
        }[kind]
        start = draw(mostly(st.sampled_from([0, "10ms", 0.1]), st.just(5)))
        src, dst = pairs[i]
        sc.flow(src, dst, fg.source(kind, **params), start=start, stop=draw(STOPS))
    return sc


def check_one(sc: fg.Scenario) -> None:
    """Refused with ScenarioError, or run with every packet accounted for."""
    try:
        sc.validate()
    except fg.ScenarioError as err:
        assert err.args[0], "an error names what is wrong"
        event("refused: " + str(err.args[0]).split(":")[0])
        return
    event("ran")
    res = sc.run()
    assert res.summary["valid"], res.summary["conservation"]
    assert not violations(res), violations(res)


PROPERTY = settings(deadline=None, suppress_health_check=[HealthCheck.too_slow])


@settings(PROPERTY, max_examples=300, derandomize=True)
@given(scenarios())
# The regression corpus: each case once broke a promise (noted beside it).
@example(  # 1e17 b/s CBR: the gap rounded to 0 ps and the run never advanced.
    fg.Scenario("loop", duration=0.2)
    .dumbbell(1, fg.link_params("10Mbps"), fg.link_params("100Mbps"))
    .flow("s0", "d0", fg.source("cbr", rate=1e17))
)
@example(  # telnet with gap 0: a timer for the current instant, forever.
    fg.Scenario("loop", duration=0.2)
    .dumbbell(1, fg.link_params("10Mbps"), fg.link_params("100Mbps"))
    .flow("s0", "d0", fg.source("telnet", gap=0))
)
@example(  # telnet with a 1 ps gap: valid but 1e12 packets a second, the run never ended.
    fg.Scenario("flood", duration=0.2)
    .dumbbell(1, fg.link_params("10Mbps"), fg.link_params("100Mbps"))
    .flow("s0", "d0", fg.source("telnet", gap="1ps"))
)
@example(  # on/off periods of 1 ps: a stale send event left at each toggle, 24 GB and killed.
    fg.Scenario("toggle", duration=0.2)
    .dumbbell(1, fg.link_params("10Mbps"), fg.link_params("100Mbps"))
    .flow("s0", "d0", fg.source("onoff", rate="10Mbps", on="1ps", off="1ps"))
)
@example(  # no flows: the CLI's table printing crashed.
    fg.Scenario("empty", duration=0.2).dumbbell(
        1, fg.link_params("10Mbps"), fg.link_params("100Mbps")
    )
)
def test_random_scenarios_are_refused_or_conserve(sc: fg.Scenario):
    check_one(sc)


@pytest.mark.slow
@settings(PROPERTY, max_examples=10_000)
@given(scenarios())
def test_random_scenarios_are_refused_or_conserve_at_length(sc: fg.Scenario):
    check_one(sc)

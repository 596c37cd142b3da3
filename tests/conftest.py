"""Shared helpers for the Python test suite."""

from __future__ import annotations

import signal
from pathlib import Path

import pytest

import fairgate as fg

ROOT = Path(__file__).resolve().parent.parent
SCENARIOS = ROOT / "scenarios"

# A shell without job control starts a background job with Ctrl-C ignored, and an ignored
# signal stays ignored in every child: the tests that send SIGINT to a fairgate process
# would see it ignored. Handling it here gives the children the default disposition again.
signal.signal(signal.SIGINT, signal.default_int_handler)


def assert_conserved(res: fg.Results) -> None:
    """offered = delivered + dropped + still in the network, per flow and per port."""
    f = res.flows
    lhs = f["offered_pkts"]
    rhs = f["delivered_pkts"] + f["dropped_pkts"] + f["in_network_pkts"]
    assert (lhs == rhs).all(), f[["flow", "offered_pkts", "delivered_pkts", "dropped_pkts"]]
    p = res.ports
    queue_drops = p["drops_pkts"] - p["drops_link_loss"]
    held = p["arrivals_pkts"] - p["departures_pkts"] - queue_drops
    assert (held == p["queued_pkts"]).all(), p[["port", "arrivals_pkts", "departures_pkts"]]
    assert (p["utilisation"] <= 1 + 1e-12).all(), p[["port", "utilisation"]]
    assert res.conserved, res.summary["conservation"]


@pytest.fixture
def two_hosts() -> fg.Scenario:
    """a -> b over one 10 Mb/s link with a 10 ms delay and a 100-packet FIFO."""
    sc = fg.Scenario("two-hosts", duration=10)
    sc.node("a").node("b")
    sc.link("a", "b", "10Mbps", "10ms", fg.queue("fifo", limit=100))
    return sc


@pytest.fixture
def fresh_cluster():
    """A local cluster of two workers of its own, for a test that kills workers: Dask's
    nannies do not always start a worker again after several deaths, so no other test
    shares it."""
    from fairgate.sweeps.execute import close_local, local_client

    close_local()
    client = local_client(2)
    yield client
    close_local()

"""The soak scenario run in chunks: resident memory stays flat and conservation holds at
every chunk. The default suite runs a short piece; the ``slow`` run goes to 10^8 events, and
``make soak`` to 10^9 outside pytest."""

from __future__ import annotations

import pytest

from conftest import SCENARIOS
from fairgate import _core

GROWTH_MIB = 8.0
"""Allowed growth of the resident set after the first chunk (Python's own allocations)."""


def rss_mib() -> float:
    """The resident set of this process, in MiB (Linux)."""
    with open("/proc/self/status", encoding="ascii") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    raise AssertionError("no VmRSS line in /proc/self/status")


def soak(events: int, chunk_s: float) -> list[tuple[int, float]]:
    """Runs the soak scenario in chunks until ``events``; (events, RSS MiB) per chunk."""
    sim = _core.load((SCENARIOS / "soak.toml").read_text(encoding="utf-8"))
    t, rows = 0.0, []
    while sim.events < events:
        t += chunk_s
        sim.run_until(t)
        assert sim.conservation_violations() == [], t
        rows.append((sim.events, rss_mib()))
    return rows


def assert_flat(rows: list[tuple[int, float]]) -> None:
    first = rows[0][1]
    peak = max(rss for _, rss in rows)
    assert peak - first <= GROWTH_MIB, rows


def test_a_short_soak_keeps_memory_flat_and_conserves():
    rows = soak(events=2_000_000, chunk_s=2.0)
    assert len(rows) >= 10
    assert_flat(rows)


@pytest.mark.slow
def test_a_long_soak_keeps_memory_flat_and_conserves():
    rows = soak(events=100_000_000, chunk_s=100.0)
    assert_flat(rows)

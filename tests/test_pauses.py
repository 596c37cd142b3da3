"""Where a run pauses never changes its results. A run advances in chunks sized by wall time
(so Ctrl-C is seen within a fraction of a second), so its pauses differ from one run to the
next; every shipped scenario must give the same tables with pauses anywhere."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest

from fairgate import _core
from fairgate.runner import toml_document

SCENARIOS = Path(__file__).parent.parent / "scenarios"
PACKET_SCENARIOS = sorted(
    path
    for path in [*SCENARIOS.glob("*.toml"), *SCENARIOS.glob("*/*.toml")]
    if {"atm", "pairs"}.isdisjoint(toml_document(path.read_text()))
)

SHORTER = {"soak.toml": ["simulation.duration=100s"]}
"""Scenarios run shorter than written (the soak is written for 10^9 events)."""


def tables(path: Path, pauses: list[float]) -> dict[str, Any]:
    """Every table of a run paused at `pauses` (fractions of the run), as bytes."""
    sim = _core.load(path.read_text(), SHORTER.get(path.name, []))
    for fraction in pauses:
        sim.run_until(max(sim.now_s, fraction * sim.end_s))
    sim.run_until(sim.end_s)
    raw = sim.results()
    return {
        name: value if name == "summary" else [(column, _bytes(v)) for column, v in value]
        for name, value in raw.items()
    }


def _bytes(column: Any) -> bytes | str:
    return column.tobytes() if hasattr(column, "tobytes") else repr(column)


@pytest.mark.parametrize("path", PACKET_SCENARIOS, ids=lambda p: str(p.relative_to(SCENARIOS)))
def test_pauses_anywhere_leave_every_table_unchanged(path):
    uninterrupted = tables(path, [])
    rng = random.Random(path.name)
    pauses = sorted(rng.random() for _ in range(300))
    assert tables(path, pauses) == uninterrupted

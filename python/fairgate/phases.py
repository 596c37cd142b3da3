"""Traffic phases: a schedule of how many flows of a class are active in each phase, turned
into groups of flows with start and stop times (the core's ``[[flows]]`` with ``count``,
``start`` and ``stop``).

The SFG evaluation [Chung06, §4.1] steps its forward FTP flows through 10, 50, 100, 200, 400,
400, 200, 100, 50, 10 in 200 s phases::

    sc.phases("s{i}", "d{i}", fg.source("tcp", ecn=True), [10, 50, 100, 200, 400,
              400, 200, 100, 50, 10], phase=200, name="ftp")

The same schedule in TOML is one flow entry with ``phases = { counts = [...], length =
"200s" }``, which the core expands into these same groups, names and phase edges
(``crates/fairgate-core/src/scenario/phases.rs``); ``tests/test_phase_syntax.py`` checks that
the two forms give byte-identical results.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any


def phase_groups(counts: Sequence[int], phase: float) -> list[tuple[int, float, float | None]]:
    """Groups ``(count, start, stop)`` whose active total in phase ``j`` is ``counts[j]``.

    A rise opens a group of the difference; a fall stops the most recently started flows first
    (a group is split when only part of it stops). Groups still running at the end of the
    schedule have no stop.
    """
    if phase <= 0:
        raise ValueError(f"phase: got {phase}, expected a duration > 0 s")
    if any(c < 0 for c in counts):
        raise ValueError(f"counts: got {list(counts)}, expected counts >= 0")
    running: list[tuple[int, float]] = []
    done: list[tuple[int, float, float | None]] = []
    active = 0
    for j, target in enumerate(counts):
        now = j * phase
        if target > active:
            running.append((target - active, now))
        to_stop = active - target
        while to_stop > 0:
            count, start = running.pop()
            stopped = min(count, to_stop)
            done.append((stopped, start, now))
            if count > stopped:
                running.append((count - stopped, start))
            to_stop -= stopped
        active = target
    done.extend((count, start, None) for count, start in running)
    return sorted(done, key=lambda g: (g[1], -(g[2] if g[2] is not None else float("inf"))))


def add_phases(
    scenario: Any,
    src: str,
    dst: str,
    source: dict[str, Any],
    counts: Sequence[int],
    phase: float,
    name: str,
) -> Any:
    """Adds one ``count`` flow group per :func:`phase_groups` entry, named ``{name}{g}.{i}``."""
    for g, (count, start, stop) in enumerate(phase_groups(counts, phase)):
        scenario.flow(
            src, dst, source, name=f"{name}{g}.{{i}}", start=start, stop=stop, count=count
        )
    return scenario

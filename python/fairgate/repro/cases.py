"""Running a reproduction's cases on the sweep executor (in parallel locally, or on a cluster).

A case is one independent simulation with its measurement: ``Case(key, function, args)``, where
``function(*args)`` is a module-level function (workers import it from the installed
``fairgate``) that returns something small and picklable (a table of statistics, not the full
results). :func:`run_cases` returns the values and the errors by key, in the order of the cases,
so a report built from them does not depend on which worker finished first.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from fairgate.sweeps.execute import Task, done_with, execute, resolve

Case = Task
"""``Case(key, function, args)``: the executor's task."""


def run_cases(
    cases: Sequence[Case], client: Any = None, progress: bool = False, desc: str = "cases"
) -> tuple[dict[str, Any], dict[str, str]]:
    """Runs every case on ``client`` (default: ``$FAIRGATE_SCHEDULER`` or the local cluster);
    returns ({key: value} of the cases that ran, {key: error} of those that failed)."""
    client = resolve(client)
    try:
        outcomes = {o.key: o for o in execute(cases, client, progress, desc)}
    finally:
        done_with(client)
    ordered = [outcomes[c.key] for c in cases]
    values = {o.key: o.value for o in ordered if o.ok}
    errors = {o.key: str(o.error) for o in ordered if not o.ok}
    return values, errors

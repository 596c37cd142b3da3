"""Every field of every discipline and source, one at a time, set to an extreme value.

The fields are discovered from the scenario schema itself (the error for an unknown field lists
the accepted ones), so a new discipline or parameter is covered without editing this file. Each
case runs in a forked child with a memory cap and an alarm: it must be refused with
``ScenarioError`` or run to its end with every packet accounted for; a panic, an allocation
abort, a hang past the alarm or any other exception fails the case. The default suite draws
400 single-field cases and 150 of two to four fields set at once (``FAIRGATE_COMBINATIONS=N``
for more); ``-m slow`` runs every single-field case.
"""

from __future__ import annotations

import os
import re
import resource
import signal
import sys
from collections.abc import Callable
from functools import cache

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import fairgate as fg

DUMBBELL = """name = "extreme"
[simulation]
duration = "0.5s"
seed = 1
[topology]
kind = "dumbbell"
senders = 2
bottleneck = {{ rate = "10Mbps", delay = "10ms", queue = {queue} }}
access = {{ rate = "100Mbps", delay = "1ms" }}
[[flows]]
name = "f{{i}}"
count = 2
src = "s{{i}}"
dst = "d{{i}}"
source = {source}
"""

VALUES = [
    "0",
    "-1",
    "0.5",
    "1e9",
    "1000000000",
    "4294967295",
    "1e18",
    "1e300",
    '"1ps"',
    '"1e6s"',
    '"1e15bps"',
    "[1e300]",
    "[]",
]
MODERATE = ["1", "2", "5", "50", "0.1", "0.9", "true", "false", '"10ms"', '"1s"', '"1Mbps"']
ALARM_S = 150
MEMORY_CAP = 6 << 30


def discipline(kind: str) -> Callable[[str], str]:
    """The scenario with the bottleneck's discipline ``kind`` given ``entry``."""
    return lambda entry: DUMBBELL.format(
        queue=f'{{ kind = "{kind}", {entry} }}', source='{ kind = "tcp" }'
    )


def source(kind: str) -> Callable[[str], str]:
    """The scenario whose flows use source ``kind`` given ``entry``."""
    return lambda entry: DUMBBELL.format(
        queue='{ kind = "fifo", limit = 100 }', source=f'{{ kind = "{kind}", {entry} }}'
    )


def fields_of(make: Callable[[str], str]) -> list[str]:
    """The fields the schema accepts where ``make`` puts its entry."""
    try:
        fg.validate_text(make("unknown_field_probe = 1"))
    except fg.ScenarioError as e:
        return re.findall(r"`(\w+)`", str(e).split("expected", 1)[-1])
    return []


@cache
def sites() -> dict[str, list[str]]:
    """The fields of every registered discipline (``queue.KIND``) and source (``source.KIND``)."""
    makers = {f"queue.{k}": discipline(k) for k in fg.registry()["qdisc"]}
    makers |= {f"source.{k}": source(k) for k in fg.registry()["source"]}
    return {site: fields_of(make) for site, make in makers.items()}


@cache
def cases() -> list[tuple[str, str, str]]:
    """(site, field, value) for every field of every registered discipline and source."""
    out = []
    for site, fields in sites().items():
        assert fields, f"{site}: no fields discovered"
        out += [(site, field, value) for field in fields for value in VALUES]
    return out


def scenario(site: str, field: str, value: str) -> str:
    return with_entries(site, [(field, value)])


def with_entries(site: str, entries: list[tuple[str, str]]) -> str:
    """The scenario with ``site``'s discipline or source given ``entries``."""
    place, kind = site.split(".", 1)
    make = discipline(kind) if place == "queue" else source(kind)
    return make(", ".join(f"{field} = {value}" for field, value in entries))


@st.composite
def combinations(draw: st.DrawFn) -> tuple[str, list[tuple[str, str]]]:
    """A discipline or source with two to four of its fields set, moderate or extreme."""
    site = draw(st.sampled_from(sorted(s for s, fields in sites().items() if len(fields) > 1)))
    fields = draw(st.lists(st.sampled_from(sites()[site]), min_size=2, max_size=4, unique=True))
    values = st.sampled_from(MODERATE + VALUES)
    return site, [(field, draw(values)) for field in fields]


def run_forked(text: str) -> str:
    """'ok', 'refused' or what went wrong, from a child with a memory cap and an alarm."""
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(read_end)
        outcome = child(text)
        os.write(write_end, outcome.encode()[:2000])
        os._exit(0)
    os.close(write_end)
    with os.fdopen(read_end) as pipe:
        outcome = pipe.read()
    _, status = os.waitpid(pid, 0)
    if os.WIFSIGNALED(status):
        return f"killed by signal {os.WTERMSIG(status)}"
    return outcome


def child(text: str) -> str:
    """Runs ``text`` in the forked child and names the outcome."""
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_CAP, MEMORY_CAP))
    signal.alarm(ALARM_S)
    sys.stderr = open(os.devnull, "w")  # noqa: SIM115 - the child exits right after
    try:
        fg.run_text(text)
    except fg.ScenarioError:
        return "refused"
    except BaseException as e:  # noqa: BLE001 - every other outcome is the finding
        return f"{type(e).__name__}: {e}"
    return "ok"


def check(site: str, field: str, value: str) -> None:
    outcome = run_forked(scenario(site, field, value))
    assert outcome in ("ok", "refused"), f"{site}.{field} = {value}: {outcome}"


@settings(
    max_examples=400,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(st.data())
def test_an_extreme_field_is_refused_or_runs_and_conserves(data: st.DataObject):
    check(*data.draw(st.sampled_from(cases())))


@settings(
    max_examples=int(os.environ.get("FAIRGATE_COMBINATIONS", "150")),
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(combinations())
def test_combined_fields_are_refused_or_run_and_conserve(case: tuple[str, list[tuple[str, str]]]):
    site, entries = case
    outcome = run_forked(with_entries(site, entries))
    assert outcome in ("ok", "refused"), f"{site} {entries}: {outcome}"


@pytest.mark.slow
def test_every_field_of_every_discipline_and_source_takes_every_extreme_value():
    failures = []
    for case in cases():
        outcome = run_forked(scenario(*case))
        if outcome not in ("ok", "refused"):
            failures.append(f"{'.'.join(case[:2])} = {case[2]}: {outcome}")
    assert not failures, "\n".join(failures)

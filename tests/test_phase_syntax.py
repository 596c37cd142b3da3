"""The compact schedule ``phases = { counts, length }`` (which Python's ``Scenario.phases()``
writes) runs byte for byte as its groups written out by hand with ``count``, ``start``,
``stop`` and ``phase_edges``."""

from __future__ import annotations

import pandas as pd
import pytest

import fairgate as fg
from fairgate.results import TABLES

COUNTS = [1, 3, 4, 2, 0]
TCP = fg.source("tcp", cc="reno", timestamps=False, delayed_ack=False)


def base() -> fg.Scenario:
    sc = fg.Scenario("phases", duration=10, seed=5)
    sc.dumbbell(
        senders=4,
        bottleneck=fg.link_params("10Mbps", "5ms", fg.queue("red", limit=60)),
        access=fg.link_params("100Mbps", "1ms"),
    )
    sc.flow("s0", "d0", fg.source("cbr", rate="1Mbps"), name="cbr")
    return sc


def python_form() -> fg.Scenario:
    return base().phases("s{i}", "d{i}", TCP, COUNTS, phase=2, name="ftp")


TOML_FORM = """
name = "phases"
[simulation]
duration = 10
seed = 5
[topology]
kind = "dumbbell"
senders = 4
bottleneck = { rate = "10Mbps", delay = "5ms", queue = { kind = "red", limit = 60 } }
access = { rate = "100Mbps", delay = "1ms" }
[[flows]]
name = "cbr"
src = "s0"
dst = "d0"
source = { kind = "cbr", rate = "1Mbps" }
[[flows]]
name = "ftp"
src = "s{i}"
dst = "d{i}"
source = { kind = "tcp", cc = "reno", timestamps = false, delayed_ack = false }
phases = { counts = [1, 3, 4, 2, 0], length = "2s" }
"""


def toml_form() -> str:
    return TOML_FORM


def by_hand() -> fg.Scenario:
    """The groups of ``COUNTS`` at 2 s a phase: a rise opens a group of the difference, a fall
    stops the most recently started flows first (splitting the group of two at 6 s)."""
    sc = base().phase_edges([2, 4, 6, 8])
    for g, (start, stop) in enumerate([(0, 8), (2, 8), (2, 6), (4, 6)]):
        sc.flow("s{i}", "d{i}", TCP, name=f"ftp{g}.{{i}}", start=start, stop=stop, count=1)
    return sc


def test_the_schedule_runs_as_its_groups_written_out():
    scheduled = python_form().run()
    written = by_hand().run()
    assert scheduled.summary == written.summary
    for name in TABLES:
        pd.testing.assert_frame_equal(getattr(scheduled, name), getattr(written, name))
    assert len(scheduled.phase_classes) > 0
    assert scheduled.conserved


def test_python_writes_the_toml_entry_and_the_core_expands_it():
    entry = python_form().to_dict()["flows"][1]
    assert entry["phases"] == {"counts": COUNTS, "length": 2} and "count" not in entry
    expanded = fg.validate_text(toml_form())
    assert python_form().validate() == expanded
    assert expanded["simulation"]["phase_edges"] == [2, 4, 6, 8]
    names = [f["name"] for f in expanded["flows"][1:]]
    assert names == ["ftp0.{i}", "ftp1.{i}", "ftp2.{i}", "ftp3.{i}"]


def test_a_bad_schedule_is_a_scenario_error_naming_the_field():
    text = toml_form().replace('length = "2s"', "length = 0")
    with pytest.raises(fg.ScenarioError, match=r"flows\[1\]\.phases\.length"):
        fg.run_text(text)


@pytest.mark.parametrize(
    ("edges", "message"),
    [
        ([12], r"`simulation.phase_edges\[0\]`: got 12 s, expected a time after 0 s and before"),
        ([float("nan")], r"`simulation.phase_edges\[0\]`: got NaN, expected a finite number"),
        ("2,4", r"`simulation.phase_edges`: got '2,4', expected a list of times"),
        (None, r"`simulation.phase_edges`: got None, expected a list of times"),
    ],
)
def test_phase_edges_from_python_are_checked_never_dropped(edges: object, message: str):
    """An edge past a numeric duration, and NaN, were dropped without a word; a string ended
    in a TypeError traceback."""
    with pytest.raises(fg.ScenarioError, match=message):
        base().phase_edges(edges).validate()  # type: ignore[arg-type]


def test_phase_edges_merge_over_calls_and_take_strings():
    sc = base().phase_edges([6, 2]).phase_edges((4, 2))
    assert sc.validate()["simulation"]["phase_edges"] == [2.0, 4.0, 6.0]
    timed = base().phase_edges(["2s", "4s"])
    assert timed.validate()["simulation"]["phase_edges"] == [2.0, 4.0]

"""The compact TOML schedule ``phases = { counts, length }`` and Python's ``Scenario.phases()``
build the same flow groups and phase edges, so the two forms give byte-identical results."""

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


def test_the_toml_and_the_python_form_give_identical_results():
    from_python = python_form().run()
    from_toml = fg.run_text(toml_form())
    assert from_python.summary == from_toml.summary
    for name in TABLES:
        pd.testing.assert_frame_equal(getattr(from_python, name), getattr(from_toml, name))
    assert len(from_toml.phase_classes) > 0
    assert from_toml.conserved


def test_the_toml_form_expands_to_the_python_groups_and_edges():
    expanded = fg.validate_text(toml_form())
    written = python_form().to_dict()
    assert expanded["simulation"]["phase_edges"] == written["simulation"]["phase_edges"]
    assert written["simulation"]["phase_edges"] == [2, 4, 6, 8]

    def start_s(start: float | dict) -> float:
        return start["value"] if isinstance(start, dict) else start

    def groups(doc: dict) -> list[tuple]:
        return [
            (f["name"], f.get("count"), start_s(f.get("start", 0)), f.get("stop"))
            for f in doc["flows"][1:]
        ]

    assert groups(expanded) == groups(written)
    assert [g[0] for g in groups(written)] == ["ftp0.{i}", "ftp1.{i}", "ftp2.{i}", "ftp3.{i}"]


def test_a_bad_schedule_is_a_scenario_error_naming_the_field():
    text = toml_form().replace('length = "2s"', "length = 0")
    with pytest.raises(fg.ScenarioError, match=r"flows\[1\]\.phases\.length"):
        fg.run_text(text)

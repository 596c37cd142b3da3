"""[Byun07] reproduction: repetitions over seeds (the tables' means and intervals) and the
spectrum measure of the controlled PEP-loop runs, on known inputs."""

from __future__ import annotations

import math

import numpy as np
import pytest

from fairgate.repro import satellite
from fairgate.repro.satellite_loop import spectrum_line
from fairgate.repro.satellite_seeds import interval_note, split_key


def _run(q_mean: float, drops: int, mean_run: float) -> dict:
    scalars = {name: 0.0 for name in satellite.SCALARS}
    scalars.update(q_mean=q_mean, drops=drops)
    clustering = {"mean_run": mean_run, "longest_run": 2, "gap_cv": 1.0, "raster": [1, 5]}
    return {**scalars, "clustering": clustering, "series": {"queue": [q_mean]}}


def test_seed_keys_round_trip() -> None:
    assert satellite.seed_key("ch4:RED 4", 1) == "ch4:RED 4"
    key = satellite.seed_key("ch4:RED 4", 3)
    assert key == "ch4:RED 4 seed 3"
    assert split_key(key, satellite.SEED_SUFFIX) == ("ch4:RED 4", 3)
    assert split_key("ch4:RED 4", satellite.SEED_SUFFIX) == ("ch4:RED 4", 1)


def test_tables_use_the_mean_over_seeds_with_a_student_t_interval() -> None:
    values = {
        "ch4:inputs": {},
        "ch4:RED 4": _run(60.0, 100, 1.0),
        "ch4:RED 4 seed 2": _run(70.0, 110, 1.2),
        "ch4:RED 4 seed 3": _run(80.0, 120, 1.4),
        "ch4:AVQ": _run(20.0, 90, 1.5),
    }
    table = satellite.runs_table(values)
    assert sorted(table["seed"]) == [1, 1, 2, 3]
    stats = satellite.summary(table)
    runs = satellite.chapter_runs(values, 4, stats)
    assert set(runs) == {"inputs", "RED 4", "AVQ"}
    red = runs["RED 4"]
    assert red["q_mean"] == pytest.approx(70.0) and red["drops"] == pytest.approx(110.0)
    assert red["clustering"]["mean_run"] == pytest.approx(1.2)
    assert red["clustering"]["raster"] == [1, 5] and red["series"]["queue"] == [60.0]
    half = 4.302653 * 10.0 / math.sqrt(3)  # t(0.975, 2) * std / sqrt(n)
    low, high = red["ci"]["q_mean"]
    assert low == pytest.approx(70.0 - half, rel=1e-5) and high == pytest.approx(70.0 + half)
    assert interval_note(runs, "RED 4", "q_mean").startswith("95% CI [")
    assert runs["AVQ"]["q_mean"] == 20.0 and "ci" not in runs["AVQ"]
    assert interval_note(runs, "AVQ", "q_mean") == ""
    assert values["ch4:RED 4"]["q_mean"] == 60.0


def test_chapters_with_and_without_per_flow_scalars_average_together() -> None:
    def ch5(std: float) -> dict:
        udp = {"udp80": std / 100, "udp160": 2.0, "udp320": 3.0}
        return {**_run(50.0, 10, 1.0), "per_flow": {"std_bps": std, "udp": udp}}

    values = {f"ch4:RED 4{satellite.SEED_SUFFIX}{k}": _run(60.0, 100, 1.0) for k in (2, 3)}
    values["ch4:RED 4"] = _run(60.0, 100, 1.0)
    values.update({"ch5:AVQ": ch5(1000.0), "ch5:AVQ seed 2": ch5(2000.0)})
    values["ch5:AVQ seed 3"] = ch5(3000.0)
    stats = satellite.summary(satellite.runs_table(values))
    red = satellite.chapter_runs(values, 4, stats)["RED 4"]
    assert "per_flow" not in red and "udp80" not in red and red["q_mean"] == 60.0
    avq = satellite.chapter_runs(values, 5, stats)["AVQ"]
    assert avq["per_flow"]["std_bps"] == pytest.approx(2000.0)
    assert avq["per_flow"]["udp"]["udp80"] == pytest.approx(20.0)


def test_spectrum_line_finds_the_period_of_an_oscillation() -> None:
    t = np.arange(2400) * 0.1
    rng = np.random.default_rng(1)
    queue = 60 + 30 * np.sin(2 * np.pi * t / 1.6) + rng.normal(0, 5, len(t))
    period, share = spectrum_line(queue)
    assert period == pytest.approx(1.6, rel=0.02) and share > 10
    _, flat = spectrum_line(60 + rng.normal(0, 5, len(t)))
    assert flat < 3

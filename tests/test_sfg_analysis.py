"""Checks of the SFG analytic helpers against the numbers of [Chung06, §3]."""

import math
import re

import numpy as np
import pytest

import fairgate as fg
from fairgate.analysis import sfg


@pytest.mark.parametrize("flows,expected", [(5, 0.0116), (10, 0.0646), (15, 0.1546)])
def test_false_positive_probability_matches_the_seed(flows, expected):
    assert round(sfg.false_positive_probability(3, 20, flows), 4) == expected
    assert round(sfg.false_positive_probability_closed(3, 20, flows), 4) == expected


@pytest.mark.parametrize("levels", range(1, 7))
@pytest.mark.parametrize("flows", [0, 1, 5, 10, 15, 17, 25])
def test_equation_2_equals_the_closed_form(levels, flows):
    assert sfg.false_positive_probability(levels, 20, flows) == pytest.approx(
        sfg.false_positive_probability_closed(levels, 20, flows), rel=1e-12, abs=1e-15
    )


def test_onto_maps_and_polluted_bins_by_hand():
    # 3 flows onto exactly 2 bins: 2^3 - 2 = 6; onto 3 bins: 3! = 6.
    assert sfg.onto_maps(3, 2) == 6
    assert sfg.onto_maps(3, 3) == 6
    # N = 2, B = 2: both flows in one bin with probability 1/2, both bins with 1/2.
    assert sfg.polluted_bins_probability(2, 2, 1) == 0.5
    assert sfg.polluted_bins_probability(2, 2, 2) == 0.5
    assert sfg.expected_polluted_bins(20, 5) == pytest.approx(4.524, abs=5e-4)


def test_tcp_friendly_rate_and_bin_count():
    # 1.2247 * 1500 * 8 / (0.3 * 0.1) = 489,898 b/s -> N = 10 Mb/s / 0.49 Mb/s = 20.
    rate = sfg.tcp_friendly_rate(1500, 0.3, 0.01)
    assert rate == pytest.approx(1.5 * math.sqrt(2 / 3) * 12000 / 0.03)
    assert round(rate / 1e6, 2) == 0.49
    assert sfg.bins_for_capacity(10e6) == 20
    assert round(sfg.tcp_friendly_rate(1500, 0.3, 0.02) / 1e6, 2) == 0.35


def test_memory_estimate():
    assert sfg.memory_bytes(3, 20) == 720
    assert sfg.memory_bytes(3, 20_000) == 720_000


@pytest.mark.parametrize(
    "call",
    [
        lambda: sfg.false_positive_probability(0, 20, 5),
        lambda: sfg.false_positive_probability_closed(3, 0, 5),
        lambda: sfg.tcp_friendly_rate(1500, 0.0, 0.01),
        lambda: sfg.tcp_friendly_rate(1500, 0.3, -1.0),
        lambda: sfg.memory_bytes(3, -1),
    ],
)
def test_bad_arguments_raise_value_error(call):
    with pytest.raises(ValueError):
        call()


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: sfg.expected_polluted_bins(10**4, 10**6), "bins^2 x flows = 1e"),
        (lambda: sfg.onto_maps(10**9, 10**6), "bins x flows = 1e"),
        (lambda: sfg.polluted_bins_probability(20, 5, -1), "`polluted`: got -1"),
        (lambda: sfg.false_positive_probability(True, 20, 5), "`levels`: got True"),
        (lambda: sfg.tcp_friendly_rate(1500, math.nan, 0.01), "`rtt_s`: got nan"),
        (lambda: sfg.tcp_friendly_rate(1500, 0.1, 2), "`loss_rate`: got 2, expected a finite"),
    ],
)
def test_what_would_hang_or_mean_nothing_is_a_scenario_error(call, message):
    """The exact forms once ran for hours at 10^4 bins (bignum powers); NaN passed the checks."""
    with pytest.raises(fg.ScenarioError, match=re.escape(message)):
        call()


def test_numpy_integers_are_taken_as_python_integers():
    """An int64 bins**flows overflowed to a probability of infinity."""
    exact = sfg.false_positive_probability(3, 20, 50)
    assert sfg.false_positive_probability(np.int64(3), np.int64(20), np.int64(50)) == exact

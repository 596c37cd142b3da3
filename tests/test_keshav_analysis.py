"""Keshav analytics against numbers computed by hand ([Keshav91, ch. 2, ch. 5])."""

from __future__ import annotations

import math
import warnings

import pytest

import fairgate as fg
from fairgate.analysis.keshav import (
    KalmanEstimator,
    closed_loop_poles,
    epoch_rate,
    epoch_recurrence,
    is_asymptotically_stable,
    telnet_delay_bounds,
)


def test_telnet_delay_above_the_ftp_size_is_exact():
    # N = 4, P_F = 1000, P = 1500: A = 4 (1500 - 500) = 4000.
    for preemptive in (True, False):
        assert telnet_delay_bounds(1500, 1000, 4, preemptive) == (4000, 4000)


def test_telnet_delay_preemptive_regions():
    # N = 4, P_F = 1000: region edges 625 and 375.
    assert telnet_delay_bounds(800, 1000, 4) == pytest.approx((4 * 300, 4 * 800**2 / 2000))
    # 500: lower (500 + 4 x 0)^2 / 2000 = 125, upper 4 x 500^2 / 2000 = 500.
    assert telnet_delay_bounds(500, 1000, 4) == pytest.approx((125, 500))
    assert telnet_delay_bounds(100, 1000, 4) == pytest.approx((0, 20))


def test_telnet_delay_non_preemptive_regions():
    # P = 800, N = 4: k + eps = 3.2 -> upper 500 (1 + (9 + 3 x (-0.6)) / 4) = 1400.
    assert telnet_delay_bounds(800, 1000, 4, False) == pytest.approx((1200, 1400))
    # P = 40 (a Telnet packet), N = 4: k = 0 -> upper = P_F / 2 = lower.
    assert telnet_delay_bounds(40, 1000, 4, False) == pytest.approx((500, 500))


def test_bad_arguments_raise():
    with pytest.raises(fg.ScenarioError, match="`n`: got 0"):
        telnet_delay_bounds(10, 1000, 0)
    with pytest.raises(fg.ScenarioError, match="`p`: got nan"):
        telnet_delay_bounds(math.nan, 1000, 4)
    with pytest.raises(fg.ScenarioError, match="`alpha`: got 0"):
        closed_loop_poles(0)
    with pytest.raises(fg.ScenarioError, match="`rtt`: got 0.0"):
        epoch_recurrence(mu=1.0, rtt=0.0, buffer=10.0, epochs=5)
    with pytest.raises(fg.ScenarioError, match="`epochs`: got 1000000000000"):
        epoch_recurrence(mu=1.0, rtt=1.0, buffer=10.0, epochs=10**12)


@pytest.mark.parametrize("alpha", [0.3, 0.5, 0.9, 1.0, 1.2])
def test_poles_have_modulus_sqrt_alpha(alpha):
    for z in closed_loop_poles(alpha):
        assert abs(z) == pytest.approx(math.sqrt(alpha))
        assert alpha / z**2 - 1 / z + 1 == pytest.approx(0)


def test_alpha_one_is_marginal_and_below_one_is_stable():
    z1, z2 = closed_loop_poles(1.0)
    # z^-1 = (1 +- i sqrt 3) / 2 -> z = (1 -+ i sqrt 3) / 2, on the unit circle.
    assert {complex(round(z.real, 12), round(z.imag, 12)) for z in (z1, z2)} == {
        complex(0.5, round(math.sqrt(3) / 2, 12)),
        complex(0.5, -round(math.sqrt(3) / 2, 12)),
    }
    assert not is_asymptotically_stable(1.0)
    assert is_asymptotically_stable(0.9)


def test_appendix_5a_reaches_mu_and_half_buffer_by_epoch_3():
    mu, rtt, buffer = 10.0, 2.0, 10.0
    trace = epoch_recurrence(mu, rtt, buffer, epochs=6)
    # lambda(1) = mu + (B/2)/RTT = 12.5; lambda(2) = mu; n_b reaches B/2 once lambda(1) has run.
    assert trace[1][0] == pytest.approx(12.5)
    assert trace[2] == pytest.approx((10.0, 5.0))
    for rate, queue in trace[3:]:
        assert (rate, queue) == pytest.approx((mu, buffer / 2))


def test_epoch_law_with_alpha():
    # alpha 0.9, RTT 2, B/2 5, n_b 1, S 20, mu 10: 0.45 x (5 - 1 - 20 + 40) = 10.8.
    assert epoch_rate(0.9, 2.0, 5.0, 1.0, 20.0, 10.0) == pytest.approx(10.8)


def test_kalman_gain_by_hand_and_rate_tracking():
    # Sigma(0) = diag(0, s, s) with s = 1, r = 1, Rtt = 2, q = 0: K(0) = 0 (G's last column is 0);
    # Sigma(1) = G Sigma G^T gives G Sigma(1) C^T = [-2 Rtt s, s, s] over s + r -> [-2, 0.5, 0.5].
    kf = KalmanEstimator(
        rtt=2.0, omega_var=0.0, obs_var=1.0, sigma=[[0, 0, 0], [0, 1, 0], [0, 0, 1]]
    )
    kf.step(y=10.0, u=10.0)
    assert kf.gain == pytest.approx([0, 0, 0])
    kf.step(y=10.0, u=10.0)
    assert kf.gain == pytest.approx([-2.0, 0.5, 0.5])
    precise = KalmanEstimator(
        rtt=1.0, omega_var=1e-6, obs_var=1e-6, sigma=[[0, 0, 0], [0, 100, 0], [0, 0, 100]]
    )
    for _ in range(30):
        x = precise.step(y=10.0, u=10.0)
    assert x[1] == pytest.approx(10.0, abs=1e-3)
    assert x[2] == pytest.approx(10.0, abs=1e-3)


def test_numpy_integers_give_what_python_integers_give():
    """A numpy integer wraps in arithmetic: closed_loop_poles(np.uint64(2**63)) gave (1, 0)
    with a RuntimeWarning, as 4 * alpha wrapped to 0."""
    import numpy as np

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert closed_loop_poles(np.uint64(2**63)) == closed_loop_poles(2**63)
        wide = (np.int64(2**40), np.int64(2**41), np.int64(10))
        assert telnet_delay_bounds(*wide) == telnet_delay_bounds(2**40, 2**41, 10)
        assert epoch_rate(np.uint8(200), 1, np.uint8(200), 0, 0, np.uint8(200)) == epoch_rate(
            200, 1, 200, 0, 0, 200
        )

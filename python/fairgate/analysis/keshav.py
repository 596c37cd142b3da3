"""Analytics of Keshav's thesis [Keshav91]: Telnet delay bounds at an FQ switch (§2.2.3), the
closed-loop poles of the Packet-Pair control law (§5.4), the appendix 5.A recurrence, the
discrete epoch law with gain alpha, and the Kalman estimator of §5.5 (with a corrected G).
Pure Python; see ``docs/studies/keshav_analysis.md`` for the decisions.
"""

from __future__ import annotations

import cmath
import math
from dataclasses import dataclass, field

from fairgate import checks

MAX_EPOCHS = 10_000_000
"""The most epochs ``epoch_recurrence`` lists (about 1 GB of pairs)."""

Matrix = list[list[float]]


# --- Ch2 §2.2.3: average Telnet delay A(P) at one FQ switch ---------------------------------


def _k_eps(p: float, p_f: float, n: int) -> tuple[int, float]:
    """k and eps with P = P_F (k + eps) / N, 0 <= eps < 1."""
    x = p * n / p_f
    k = math.floor(x)
    return k, x - k


def telnet_delay_bounds(
    p: float, p_f: float, n: int, preemptive: bool = True
) -> tuple[float, float]:
    """(lower, upper) bounds on A(P), P = P_T - delta, for N backlogged FTPs of size P_F.

    Units are those of P and P_F (bits or bytes of service); divide by the line rate for time.
    """
    n = int(checks.number("n", n, 1, integer=True))  # Python numbers: a numpy integer wraps
    p_f = checks.number("p_f", p_f, 0, low_open=True)
    p = checks.number("p", p, 0)
    half = p_f / 2
    if p >= p_f:
        exact = n * (p - half)
        return exact, exact
    if preemptive:
        upper = n * p * p / (2 * p_f)
        if p >= half * (1 + 1 / n):
            return n * (p - half), upper
        if p >= half * (1 - 1 / n):
            return (half + n * (p - half)) ** 2 / (2 * p_f), upper
        return 0.0, upper
    k, eps = _k_eps(p, p_f, n)
    upper = half * (1 + (k * k + k * (2 * eps - 1)) / n)
    if p >= half * (1 + 1 / n):
        return n * (p - half), upper
    return half, upper


# --- Ch5 §5.4: closed-loop poles -------------------------------------------------------------


def closed_loop_poles(alpha: float) -> tuple[complex, complex]:
    """Roots z of alpha z^-2 - z^-1 + 1 = 0, i.e. z^2 - z + alpha = 0 (|z| = sqrt(alpha))."""
    alpha = checks.number("alpha", alpha, 0, low_open=True)  # np.uint64: 4 * alpha wrapped
    root = cmath.sqrt(1 - 4 * alpha)
    return (1 + root) / 2, (1 - root) / 2


def is_asymptotically_stable(alpha: float) -> bool:
    """True when both poles lie strictly inside the unit circle (alpha < 1)."""
    return all(abs(z) < 1 - 1e-12 for z in closed_loop_poles(alpha))


# --- Ch5 §5.4 and appendix 5.A: the discrete epoch law ---------------------------------------


def epoch_rate(
    alpha: float, rtt: float, setpoint: float, n_b: float, outstanding: float, mu: float
) -> float:
    """lambda(k+1) = (alpha / RTT) [B/2 - n_b(k) - S(k) + 2 mu RTT] (eq. 5.9 with alpha)."""
    rtt = checks.number("rtt", rtt, 0, low_open=True)
    alpha, setpoint, n_b, outstanding, mu = (
        checks.number(name, value)
        for name, value in (
            ("alpha", alpha),
            ("setpoint", setpoint),
            ("n_b", n_b),
            ("outstanding", outstanding),
            ("mu", mu),
        )
    )
    return _rate(alpha, rtt, setpoint, n_b, outstanding, mu)


def _rate(
    alpha: float, rtt: float, setpoint: float, n_b: float, outstanding: float, mu: float
) -> float:
    return alpha / rtt * (setpoint - n_b - outstanding + 2 * mu * rtt)


def epoch_recurrence(
    mu: float,
    rtt: float,
    buffer: float,
    epochs: int,
    alpha: float = 1.0,
    n_b0: float = 0.0,
    lambda0: float | None = None,
) -> list[tuple[float, float]]:
    """[(lambda(k), n_b(k))] for k = 0..epochs with mu and RTT constant and exact estimators.

    n_b(k) is the queue at the start of epoch k (eq. 5.2: n_b(k+1) = n_b(k) + (lambda(k) - mu)
    RTT), S(k) = lambda(k) RTT (eq. 5.1), and the first pair gives lambda(0) = mu. The queue is
    clipped to [0, B] as §5.4 requires.
    """
    epochs = int(checks.number("epochs", epochs, 0, MAX_EPOCHS, integer=True))
    rtt = checks.number("rtt", rtt, 0, low_open=True)
    mu, alpha, n_b0 = (
        checks.number(name, value) for name, value in (("mu", mu), ("alpha", alpha), ("n_b0", n_b0))
    )
    buffer = checks.number("buffer", buffer, 0)
    rate = mu if lambda0 is None else checks.number("lambda0", lambda0)
    n_b = n_b0
    out = [(rate, n_b)]
    for _ in range(epochs):  # the arguments are checked once, above, not every epoch
        next_rate = _rate(alpha, rtt, buffer / 2, n_b, rate * rtt, mu)
        n_b = min(max(n_b + (rate - mu) * rtt, 0.0), buffer)
        rate = next_rate
        out.append((rate, n_b))
    return out


# --- Ch5 §5.5: Kalman estimator --------------------------------------------------------------


def _mul(a: Matrix, b: Matrix) -> Matrix:
    return [
        [sum(a[i][k] * b[k][j] for k in range(len(b))) for j in range(len(b[0]))]
        for i in range(len(a))
    ]


def _t(a: Matrix) -> Matrix:
    return [list(row) for row in zip(*a, strict=True)]


def _add(a: Matrix, b: Matrix, sign: float = 1.0) -> Matrix:
    return [
        [x + sign * y for x, y in zip(ra, rb, strict=True)] for ra, rb in zip(a, b, strict=True)
    ]


@dataclass
class KalmanEstimator:
    """x = [n_b, mu, mu_-1]; x(k+1) = G x + H u + v1, y = C x + v2 (§5.5, G corrected).

    ``omega_var`` = E[omega^2] and ``obs_var`` = E[v2^2] must be supplied: the thesis shows they
    cannot be separated from observations.
    """

    rtt: float
    omega_var: float
    obs_var: float
    sigma: Matrix = field(default_factory=lambda: [[0.0] * 3 for _ in range(3)])
    x: list[float] = field(default_factory=lambda: [0.0, 0.0, 0.0])
    gain: list[float] = field(default_factory=lambda: [0.0, 0.0, 0.0])

    def g(self) -> Matrix:
        return [[1.0, -self.rtt, 0.0], [0.0, 1.0, 0.0], [0.0, 1.0, 0.0]]

    def step(self, y: float, u: float) -> list[float]:
        """One filter step with observation y(k) and input u(k) = lambda(k); returns x_hat(k+1)."""
        g = self.g()
        s = self.sigma
        s_ct = [[row[2]] for row in s]  # Sigma C^T with C = [0, 0, 1]
        innovation_var = s[2][2] + self.obs_var
        k = [row[0] / innovation_var for row in _mul(g, s_ct)]
        innovation = y - self.x[2]
        gx = [sum(g[i][j] * self.x[j] for j in range(3)) for i in range(3)]
        h_u = [self.rtt * u, 0.0, 0.0]
        self.x = [gx[i] + k[i] * innovation + h_u[i] for i in range(3)]
        q = [[0.0] * 3 for _ in range(3)]
        q[1][1] = self.omega_var
        kkt = [[k[i] * innovation_var * k[j] for j in range(3)] for i in range(3)]
        self.sigma = _add(_add(_mul(_mul(g, s), _t(g)), q), kkt, -1.0)
        self.gain = k
        return list(self.x)

"""Analytic helpers for the Stochastic Fairness Guardian [Chung06, §3].

* :func:`false_positive_probability` -- P_fp(L, N, B) by equation 2 (onto-map counting).
* :func:`false_positive_probability_closed` -- the same by ``(1 - (1 - 1/N)**B)**L``.
* :func:`tcp_friendly_rate` -- equation 4 (Floyd and Fall), in bits per second.
* :func:`bins_for_capacity` -- N = C / T_tcp, the configuration rule of section 3.
* :func:`memory_bytes` -- per-port state: L * N bins of (counter + probability).
"""

from __future__ import annotations

import decimal
import math

from fairgate import checks
from fairgate._core import ScenarioError

EXACT_WORK = 10**9
"""The largest bins^2 x flows the onto-map forms (equations 1 and 2) take: about 10 s of exact
integer arithmetic; past it the closed form, which equals them, is the way."""


def onto_maps(flows: int, bins: int) -> int:
    """T(B, i) of equation 1: the number of maps of B flows onto exactly i bins (all used)."""
    flows, bins = _whole(flows=flows, bins=bins, minimum=0)
    _exact(bins * flows, "bins x flows")
    return sum((-1) ** k * math.comb(bins, k) * (bins - k) ** flows for k in range(bins + 1))


def polluted_bins_probability(bins: int, flows: int, polluted: int) -> float:
    """P_w(N, B, i): probability that exactly ``polluted`` of N bins hold a misbehaving flow."""
    bins, flows, polluted = _whole(bins=bins, flows=flows, polluted=polluted)
    return math.comb(bins, polluted) * onto_maps(flows, polluted) / bins**flows


def expected_polluted_bins(bins: int, flows: int) -> float:
    """E_w(N, B): expected number of polluted bins in one level."""
    bins, flows = _whole(bins=bins, flows=flows)
    _exact(bins * bins * flows, "bins^2 x flows")
    total = sum(i * math.comb(bins, i) * onto_maps(flows, i) for i in range(min(flows, bins) + 1))
    return total / bins**flows


def false_positive_probability(levels: int, bins: int, flows: int) -> float:
    """P_fp(L, N, B) by equation 2: a well-behaved flow finds a polluted bin at every level."""
    levels, bins, flows = _whole(levels=levels, bins=bins, flows=flows)
    return (expected_polluted_bins(bins, flows) / bins) ** levels


def false_positive_probability_closed(levels: int, bins: int, flows: int) -> float:
    """P_fp(L, N, B) = (1 - (1 - 1/N)**B)**L, equal to equation 2."""
    levels, bins, flows = _whole(levels=levels, bins=bins, flows=flows)
    return (1.0 - (1.0 - 1.0 / bins) ** flows) ** levels


def tcp_friendly_rate(packet_bytes: float, rtt_s: float, loss_rate: float) -> float:
    """Equation 4: T_tcp = 1.5 * sqrt(2/3) * S / (tau * sqrt(p)), in bits per second."""
    for name, value in (("packet_bytes", packet_bytes), ("rtt_s", rtt_s)):
        checks.number(name, value, 0, low_open=True)
    checks.number("loss_rate", loss_rate, 0, 1, low_open=True)
    return 1.5 * math.sqrt(2.0 / 3.0) * packet_bytes * 8.0 / (rtt_s * math.sqrt(loss_rate))


def bins_for_capacity(
    capacity_bps: float, packet_bytes: float = 1500.0, rtt_s: float = 0.3, loss_rate: float = 0.01
) -> int:
    """N = C / T_tcp rounded to the nearest integer ([Chung06]: 10 Mb/s -> 20)."""
    checks.number("capacity_bps", capacity_bps, 0, low_open=True)
    return max(1, round(capacity_bps / tcp_friendly_rate(packet_bytes, rtt_s, loss_rate)))


def memory_bytes(levels: int, bins: int, counter_bytes: int = 4, probability_bytes: int = 8) -> int:
    """SFG state per output port: L * N bins of a byte counter and a drop probability."""
    levels, bins, counter_bytes, probability_bytes = _whole(
        levels=levels, bins=bins, counter_bytes=counter_bytes, probability_bytes=probability_bytes
    )
    return levels * bins * (counter_bytes + probability_bytes)


def _whole(minimum: int | None = None, **values: int) -> tuple[int, ...]:
    """The ``values`` as Python ints (a numpy integer would overflow in ``bins**flows``), each
    checked to be whole and at least ``minimum`` (by default 0 for flows and polluted bins, 1
    for the rest)."""
    out = []
    for name, value in values.items():
        low = minimum if minimum is not None else 0 if name in ("flows", "polluted") else 1
        checks.number(name, value, low, integer=True)
        out.append(int(value))
    return tuple(out)


def _approximate(count: int) -> str:
    """``count`` to three digits; an integer past a float's range through Decimal (formatting
    it as a float raised OverflowError inside the error message)."""
    return f"{count:.3g}" if count < 1e300 else f"{decimal.Decimal(count):.3g}"


def _exact(work: int, what: str) -> None:
    if work > EXACT_WORK:
        raise ScenarioError(
            f"got {what} = {_approximate(work)}, expected at most {EXACT_WORK:.0e} for "
            "the exact onto-map form (about 10 s); false_positive_probability_closed gives the "
            "same value at once"
        )

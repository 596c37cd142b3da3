"""Analytic helpers for the Stochastic Fairness Guardian [Chung06, §3].

* :func:`false_positive_probability` -- P_fp(L, N, B) by equation 2 (onto-map counting).
* :func:`false_positive_probability_closed` -- the same by ``(1 - (1 - 1/N)**B)**L``.
* :func:`tcp_friendly_rate` -- equation 4 (Floyd and Fall), in bits per second.
* :func:`bins_for_capacity` -- N = C / T_tcp, the configuration rule of section 3.
* :func:`memory_bytes` -- per-port state: L * N bins of (counter + probability).
"""

from __future__ import annotations

import math


def onto_maps(flows: int, bins: int) -> int:
    """T(B, i) of equation 1: the number of maps of B flows onto exactly i bins (all used)."""
    if flows < 0 or bins < 0:
        raise ValueError(f"flows and bins must be >= 0, got {flows} and {bins}")
    return sum((-1) ** k * math.comb(bins, k) * (bins - k) ** flows for k in range(bins + 1))


def polluted_bins_probability(bins: int, flows: int, polluted: int) -> float:
    """P_w(N, B, i): probability that exactly ``polluted`` of N bins hold a misbehaving flow."""
    _check(bins=bins, flows=flows)
    return math.comb(bins, polluted) * onto_maps(flows, polluted) / bins**flows


def expected_polluted_bins(bins: int, flows: int) -> float:
    """E_w(N, B): expected number of polluted bins in one level."""
    _check(bins=bins, flows=flows)
    total = sum(i * math.comb(bins, i) * onto_maps(flows, i) for i in range(min(flows, bins) + 1))
    return total / bins**flows


def false_positive_probability(levels: int, bins: int, flows: int) -> float:
    """P_fp(L, N, B) by equation 2: a well-behaved flow finds a polluted bin at every level."""
    _check(levels=levels, bins=bins, flows=flows)
    return (expected_polluted_bins(bins, flows) / bins) ** levels


def false_positive_probability_closed(levels: int, bins: int, flows: int) -> float:
    """P_fp(L, N, B) = (1 - (1 - 1/N)**B)**L, equal to equation 2."""
    _check(levels=levels, bins=bins, flows=flows)
    return (1.0 - (1.0 - 1.0 / bins) ** flows) ** levels


def tcp_friendly_rate(packet_bytes: float, rtt_s: float, loss_rate: float) -> float:
    """Equation 4: T_tcp = 1.5 * sqrt(2/3) * S / (tau * sqrt(p)), in bits per second."""
    for name, value in (("packet_bytes", packet_bytes), ("rtt_s", rtt_s), ("loss_rate", loss_rate)):
        if not (math.isfinite(value) and value > 0):
            raise ValueError(f"{name} must be a positive number, got {value}")
    return 1.5 * math.sqrt(2.0 / 3.0) * packet_bytes * 8.0 / (rtt_s * math.sqrt(loss_rate))


def bins_for_capacity(
    capacity_bps: float, packet_bytes: float = 1500.0, rtt_s: float = 0.3, loss_rate: float = 0.01
) -> int:
    """N = C / T_tcp rounded to the nearest integer ([Chung06]: 10 Mb/s -> 20)."""
    if not (math.isfinite(capacity_bps) and capacity_bps > 0):
        raise ValueError(f"capacity_bps must be a positive number, got {capacity_bps}")
    return max(1, round(capacity_bps / tcp_friendly_rate(packet_bytes, rtt_s, loss_rate)))


def memory_bytes(levels: int, bins: int, counter_bytes: int = 4, probability_bytes: int = 8) -> int:
    """SFG state per output port: L * N bins of a byte counter and a drop probability."""
    _check(levels=levels, bins=bins)
    return levels * bins * (counter_bytes + probability_bytes)


def _check(**values: int) -> None:
    for name, value in values.items():
        minimum = 0 if name == "flows" else 1
        if not isinstance(value, int) or value < minimum:
            raise ValueError(f"{name} must be an integer >= {minimum}, got {value!r}")

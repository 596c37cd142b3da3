"""Where the fluid models of [Byun07, §4.4, §6.4] start: the equilibrium of their equations with
the inputs held at their means (ω̄, d̄, ῡ), the state the emulation is in once its population is
reached, so the solution shows the response to the inputs' variation and not a start-up
transient (which, behind a PEP delay of seconds, lasts the whole horizon). The source states no
initial condition. Chapter 4: (4.1) stationary and the admitted rate (1 − p)ω̄λ = τμ give
p* from (1 − p)·ω̄·(m/R)·√(2(1 − p)/p) = τμ. Chapter 6: ω̄λ = τμ gives λ* = τμ/ω̄ and (6.2)
p* = A/(A + B) with A = (1 − ῡ)m/R², B = decrease·λ*²/((1 − ῡ)m); n* = ῡ·m·MaxRcvWin. The
queues q, v, w start at the middle of [min_th, max_th], where every branch of the marking law
but AVQ's (which has no interior rest point) is at rest. Decisions: docs/models/fluid.md.
"""

from __future__ import annotations

import math
from dataclasses import dataclass


@dataclass(frozen=True)
class FluidState:
    """One state of the models (and their history before t = 0)."""

    lam: float
    q: float
    v: float
    w: float
    p: float
    n: float = 0.0


def marking_ch4(m: float, rtt: float, target_rate: float) -> float:
    """p* of chapter 4: (1 − p)·(m/R)·√(2(1 − p)/p) = ``target_rate`` (τμ/ω̄), by bisection."""
    low, high = 0.0, 1.0
    for _ in range(200):
        p = (low + high) / 2.0
        admitted = (1.0 - p) * m / rtt * math.sqrt(2.0 * (1.0 - p) / p)
        low, high = (p, high) if admitted > target_rate else (low, p)
    return (low + high) / 2.0


def tcp_rate_ch4(p: float, m: float, rtt: float) -> float:
    """λ at which (4.1) is stationary for marking probability p: (m/R)·√(2(1 − p)/p)."""
    return m / rtt * math.sqrt(2.0 * (1.0 - p) / p)


def marking_ch6(m_old: float, rtt: float, rate: float, decrease: float) -> float:
    """p* of chapter 6 with ``m_old`` = (1 − ῡ)m old connections sending ``rate`` in total."""
    gain = m_old / rtt**2
    loss = decrease * rate * rate / m_old
    return gain / (gain + loss)


def equilibrium(
    *,
    chapter: int,
    m: float,
    rtt: float,
    target_rate: float,
    band: tuple[float, float],
    decrease: float,
    max_rcv_win: float,
    omega_mean: float,
    upsilon_mean: float,
) -> FluidState:
    """The rest point of chapter 4 or 6 with the inputs at their means (see the module text)."""
    middle = (band[0] + band[1]) / 2.0
    offered = target_rate / omega_mean
    if chapter == 4:
        p = marking_ch4(m, rtt, offered)
        return FluidState(lam=tcp_rate_ch4(p, m, rtt), q=middle, v=middle, w=middle, p=p)
    old = (1.0 - upsilon_mean) * m
    p = marking_ch6(old, rtt, offered, decrease)
    n = upsilon_mean * m * max_rcv_win
    return FluidState(lam=offered, q=middle, v=middle, w=middle, p=p, n=n)


__all__ = ["FluidState", "equilibrium", "marking_ch4", "marking_ch6", "tcp_rate_ch4"]

"""Measurements behind the SFG-PI reproduction's rows that the paper states in words
[Chung06, §4.1-4.2]: PI's "stable" queue, RED-PD's "TCP-friendly rate" and SFB's late
detection of the CBR flows. The rows themselves are added in :mod:`fairgate.repro.sfg`.

Decisions (docs/reproductions/sfg.md):

* **Queue stability**: per phase, the coefficient of variation (standard deviation over mean)
  of the bottleneck queue's 1-s samples, leaving out the first tenth of the phase (the step
  response to the new flow count). A sustained swing from empty to twice the mean has a
  coefficient of 0.58 (triangle) to 1 (square); a phase below 0.5 has none.
* **TCP-friendly rate**: equation 4 with the simulations' 1000-byte packets, RED-PD's target
  round-trip time of 100 ms (the paper: "used ... for the TCP-friendly rate") and the phase's
  RED notification rate at the bottleneck (RED's drops and marks over the packets that passed
  RED-PD's filter), against the CBR flows' mean goodput in the phases the CBR flows fill.
* **Detection**: a CBR flow is detected at its first drop by the per-flow filter (SFB's
  penalty box, cause ``sfb_penalty``); its delay is counted from the CBR flows' start.
"""

from __future__ import annotations

import math

import pandas as pd

from fairgate.analysis.sfg import tcp_friendly_rate
from fairgate.repro.sfg_runs import SfgRun
from fairgate.repro.sfg_setup import CBR_START_PHASES, CBR_STOP_PHASES

SETTLE_FRACTION = 0.1
PACKET_BYTES = 1000
RED_PD_TARGET_RTT_S = 0.1


def queue_variation(run: SfgRun, phase: float, count: int) -> pd.Series:
    """Per phase: the queue samples' standard deviation over their mean, after the first
    :data:`SETTLE_FRACTION` of the phase."""
    q = run.queue
    index = (q["time_s"] // phase).astype(int).clip(upper=count - 1)
    settled = q["time_s"] - index * phase >= SETTLE_FRACTION * phase
    by_phase = q.loc[settled, "bytes"].groupby(index[settled])
    return (by_phase.std() / by_phase.mean()).reindex(range(count))


def cbr_phases(count: int) -> list[int]:
    """The phases the CBR flows fill from start to end."""
    return list(range(math.ceil(CBR_START_PHASES), min(count, math.floor(CBR_STOP_PHASES))))


def cbr_goodput_by_phase(run: SfgRun, phase: float, count: int) -> pd.Series:
    """Mean goodput (Mb/s) of one CBR flow per phase."""
    tp = run.throughput
    columns = [c for c in tp.columns if c.startswith("cbr") and c != "cbr"]
    index = ((tp["time_s"] - 1e-9) // phase).astype(int).clip(upper=count - 1)
    return tp[columns].mean(axis=1).groupby(index).mean().reindex(range(count))


def red_notification_rate(run: SfgRun) -> pd.Series:
    """Per phase: RED's drops and marks over the packets that passed the filter in front."""
    ph = run.phases
    passed = ph["arrivals_pkts"] - ph["filter_drops"]
    return (ph["queue_drops"] + ph["marks"]) / passed


def tcp_friendly_mbps(run: SfgRun) -> pd.Series:
    """Per phase: equation 4 at RED-PD's target RTT and the phase's RED notification rate."""
    rates = red_notification_rate(run)
    return rates.map(
        lambda p: (
            tcp_friendly_rate(PACKET_BYTES, RED_PD_TARGET_RTT_S, p) / 1e6 if p > 0 else math.inf
        )
    )


def friendly_ratio_by_phase(run: SfgRun, phase: float) -> pd.Series:
    """Per CBR phase: a CBR flow's mean goodput over the TCP-friendly rate."""
    count = len(run.phases)
    phases = cbr_phases(count)
    goodput = cbr_goodput_by_phase(run, phase, count)[phases]
    return goodput / tcp_friendly_mbps(run)[phases]


def detection_delays(run: SfgRun, phase: float) -> dict[str, float]:
    """CBR flow -> seconds from the CBR start to its first filter drop (inf: never)."""
    start = CBR_START_PHASES * phase
    return {
        flow: (t - start if not math.isnan(t) else math.inf)
        for flow, t in run.first_filter_drop_s.items()
    }


def median_detection_delay(run: SfgRun, phase: float) -> float:
    """The median of :func:`detection_delays` over the CBR flows (inf when most are missed)."""
    delays = sorted(detection_delays(run, phase).values())
    return float(pd.Series(delays).median()) if delays else math.nan

"""[Byun07, §4.1] asynchronous queueing, checked in a small controlled run beside chapter 4.

The source's mechanism (Fig. 4.1): RED drops at the receive queue, before the PEP, because of
the transmit queue after it; the PEP keeps feeding the transmit queue from its buffers, so the
drops go on until those buffers are used up, the queue then empties, and RED stops until the
PEP has built its buffers again: the transmit queue oscillates. It needs a PEP that holds a
backlog between the two queues. The controlled run has one: the chapter-4 testbed and TCP
options with 40 long-lived connections instead of the HTTP population; each satellite leg is
limited by the clients' 64 KB window over the ~0.75 s satellite round trip (~0.7 Mb/s), so
40 legs offer 1.4 times the 20 Mb/s link and the PEP buffers what they cannot send yet (625 KB
per connection, the per-user PEP buffer of [Byun07, §6.1]). Two runs: RED 4 watching the
transmit queue across the PEP, and the same chain without AQM (FIFO), whose queue is set by
the legs' windows alone. Reported: the transmit queue's mean and std, the period of the
strongest line of its spectrum and how far the power within ±20% of it stands above a flat
spectrum's (about 1 for noise), and the PEP's unsent backlog. Decisions (40 connections,
300 s, measured from 60 s) are taken once here.
"""

from __future__ import annotations

import copy
import math
from typing import Any

import numpy as np

from fairgate.repro.report import Report, Row
from fairgate.repro.satellite_setup import (
    RECEIVE,
    TRANSMIT,
    scenario,
    scenario_text,
)
from fairgate.runner import run_text

CONNECTIONS = 40
DURATION_S = 300.0
START_S = 60.0
PEP_BUFFER = 625_000
SAMPLE_S = 0.1


def loop_scenario(scheme: str) -> dict[str, Any]:
    """The chapter-4 chain with ``CONNECTIONS`` long-lived connections and ``scheme`` (RED 4
    watching the transmit queue, or ``none``) at the receive queue."""
    doc = scenario(scheme, 400, DURATION_S)
    doc["simulation"]["duration"] = f"{DURATION_S:g}s"
    del doc["simulation"]["record_drops"]
    http = doc["flows"][0]
    tcp = copy.deepcopy(http["source"]["tcp"])
    doc["flows"] = [
        {
            "name": "bulk{i}",
            "count": CONNECTIONS,
            "src": http["src"],
            "dst": http["dst"],
            "start": {"dist": "uniform", "min": "0s", "max": "5s"},
            "source": {"kind": "tcp", **tcp},
        }
    ]
    doc["nodes"][2]["gateway"]["send_buffer"] = PEP_BUFFER
    if scheme == "none":
        doc["links"][1].pop("monitor", None)
    return doc


def spectrum_line(queue: np.ndarray) -> tuple[float, float]:
    """(period in s of the strongest non-zero frequency of ``queue`` with its linear trend
    removed, the power within ±20% of
    that frequency over what a flat spectrum would put there: about 1 for noise, large for a
    periodic oscillation)."""
    x = np.arange(len(queue), dtype=float)
    centred = queue - np.polyval(np.polyfit(x, queue, 1), x) if len(queue) > 1 else queue * 0.0
    power = np.abs(np.fft.rfft(centred)) ** 2
    freq = np.fft.rfftfreq(len(centred), SAMPLE_S)
    if len(power) < 3 or power[1:].sum() == 0:
        return float("nan"), 0.0
    k = int(np.argmax(power[1:])) + 1
    near = (freq > 0.8 * freq[k]) & (freq < 1.2 * freq[k])
    flat = near.sum() / (len(power) - 1)
    return float(1.0 / freq[k]), float(power[near].sum() / power[1:].sum() / flat)


def run_loop(scheme: str) -> dict[str, Any]:
    """One controlled run; its transmit-queue statistics and the PEP's backlog."""
    res = run_text(scenario_text(loop_scenario(scheme)))
    qs = res.queue_series
    keep = (qs["port"].astype(str) == TRANSMIT) & (qs["time_s"] > START_S)
    queue = qs.loc[keep, "packets"].to_numpy(dtype=float)
    traces = res.traces
    unsent = traces[(traces["var"].astype(str) == "pep.send_buffer") & (traces["time_s"] > START_S)]
    backlog = unsent.groupby("time_s")["value"].sum().mean() / 1400
    rx = qs[(qs["port"].astype(str) == RECEIVE) & (qs["time_s"] > START_S)]
    period, ratio = spectrum_line(queue)
    return {
        "q_mean": float(queue.mean()),
        "q_std": float(queue.std()),
        "period_s": period,
        "line_ratio": ratio,
        "backlog_pkts": float(backlog),
        "out_mean_bps": float(qs.loc[keep, "departure_bps"].mean()),
        "in_mean_bps": float(rx["arrival_bps"].mean()),
    }


LOOP_KEYS = {"RED 4": "loop RED 4", "none": "loop none"}
"""Case names of the two controlled runs inside chapter 4's values."""


def add_rows(report: Report, runs: dict[str, Any]) -> None:
    """The controlled runs beside the source's RED 4 queue std and the chapter-4 HTTP run's
    spectrum (comparison rows: the source ran no such case)."""
    exp = "ch4 mechanism"
    for scheme, key in LOOP_KEYS.items():
        if key not in runs:
            continue
        r = runs[key]
        name = f"{exp} 40 long-lived, {'RED 4' if scheme != 'none' else 'no AQM'}"
        paper_std = 30.34 if scheme != "none" else math.nan
        report.add(Row(name, "transmit queue mean packets", math.nan, r["q_mean"]))
        report.add(Row(name, "transmit queue std packets", paper_std, r["q_std"]))
        report.add(Row(name, "queue spectrum: strongest period s", math.nan, r["period_s"]))
        report.add(
            Row(name, "queue spectrum: that line's power over flat", math.nan, r["line_ratio"])
        )
        report.add(Row(name, "PEP unsent backlog packets", math.nan, r["backlog_pkts"]))
        report.add(Row(name, "output Mb/s", math.nan, r["out_mean_bps"] / 1e6))
    if "RED 4" in runs:
        period, ratio = spectrum_line(np.asarray(runs["RED 4"]["series"]["queue"], dtype=float))
        name = f"{exp} HTTP population (first 150 s), RED 4"
        report.add(Row(name, "queue spectrum: strongest period s", math.nan, period))
        report.add(Row(name, "queue spectrum: that line's power over flat", math.nan, ratio))

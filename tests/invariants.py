"""What every run's tables must satisfy beyond conservation (which the core checks itself):
no port sends faster than its rate, a port's drops are the sum of their causes, the summary's
totals are the flows' sums, rates are bytes over the documented interval, delays and loss rates
are ordered and in range. The random-scenario, mutant and extreme-field fuzzers check every run
they make with ``violations``; an empty list is a pass."""

from __future__ import annotations

import numpy as np
import pandas as pd

import fairgate as fg

RELATIVE = 1e-9
"""Tolerance of a rate recomputed from its bytes (both are float64 of the same integers)."""
LARGEST_PACKET_BYTES = 1 << 20
"""Slack of a port's bytes against its rate: the one packet whose transmission may straddle
the end of the run (packet sizes are refused above 1,048,560 bytes)."""


def violations(res: fg.Results) -> list[str]:
    """Every broken invariant of ``res``, as a sentence naming the row."""
    return [*_port_violations(res), *_flow_violations(res), *_total_violations(res)]


def _rows(frame: pd.DataFrame, broken: pd.Series, key: str, what: str) -> list[str]:
    return [f"{key} {name}: {what}" for name in frame.loc[broken.to_numpy(), key]]


def _port_violations(res: fg.Results) -> list[str]:
    ports = res.ports
    duration = res.summary["duration_s"]
    rated = ports["rate_bps"] > 0
    carried_bits = ports["departures_bytes"].astype(float) * 8
    capacity_bits = ports["rate_bps"].astype(float) * duration + LARGEST_PACKET_BYTES * 8
    causes = [c for c in ports.columns if c.startswith("drops_") and c[6:] not in ("pkts", "bytes")]
    window = _window_s(res)
    out = _rows(ports, rated & (carried_bits > capacity_bits), "port", "sent faster than its rate")
    out += _rows(ports, rated & (ports["utilisation"] > 1 + RELATIVE), "port", "utilisation > 1")
    out += _rows(
        ports, ports[causes].sum(axis=1) != ports["drops_pkts"], "port", "drops != their causes"
    )
    out += _rows(
        ports, ports["departures_pkts"] > ports["arrivals_pkts"], "port", "departures > arrivals"
    )
    out += _rows(
        ports,
        ports["mean_queue_pkts"] > ports["max_queue_pkts"] * (1 + RELATIVE),
        "port",
        "mean queue above its maximum",
    )
    if window > 0:
        expected = ports["departures_bytes"].astype(float) * 8 / window
        out += _rows(ports, _differs(ports["throughput_bps"], expected), "port", "throughput")
    return out


def _flow_violations(res: fg.Results) -> list[str]:
    flows = res.flows
    out = _rows(
        flows, flows["goodput_bytes"] > flows["delivered_bytes"], "flow", "goodput > delivered"
    )
    loss = flows["loss_rate"]
    out += _rows(
        flows, loss.notna() & ((loss < 0) | (loss > 1)), "flow", "loss rate outside [0, 1]"
    )
    delivered = flows["delivered_pkts"] > 0
    low, mean, high = (flows[f"{k}_delay_s"] for k in ("min", "mean", "max"))
    slack = high.abs() * RELATIVE + 1e-15
    unordered = delivered & ((low < 0) | (low > mean + slack) | (mean > high + slack))
    out += _rows(flows, unordered, "flow", "delays not min <= mean <= max")
    span = _active_span_s(res)
    spanned = span > 0
    for bytes_column, rate_column in (
        ("delivered_bytes", "throughput_bps"),
        ("goodput_bytes", "goodput_bps"),
    ):
        expected = flows[bytes_column].astype(float) * 8 / span.where(spanned)
        broken = spanned & _differs(flows[rate_column], expected)
        out += _rows(flows, broken, "flow", f"{rate_column} is not {bytes_column} over its span")
    return out


def _total_violations(res: fg.Results) -> list[str]:
    totals, flows = res.summary["totals"], res.flows
    out = [
        f"totals: {name} {value} != the flows' sum {int(flows[name].sum())}"
        for name, value in totals.items()
        if name in flows and int(flows[name].sum()) != value
    ]
    jain = res.summary["fairness"].get("jain_goodput_data_flows")
    if jain is not None and not np.isnan(jain) and not 0 < jain <= 1 + RELATIVE:
        out.append(f"fairness: Jain index {jain} outside (0, 1]")
    return out


def _window_s(res: fg.Results) -> float:
    window = res.summary["window"]
    return window["end_s"] - window["start_s"]


def _active_span_s(res: fg.Results) -> pd.Series:
    """Each flow's [start, min(stop, end)] within the window (``docs/results.md``)."""
    window, flows = res.summary["window"], res.flows
    end = flows["stop_s"].fillna(window["end_s"]).clip(upper=window["end_s"])
    return end - flows["start_s"].clip(lower=window["start_s"])


def _differs(actual: pd.Series, expected: pd.Series) -> pd.Series:
    return (actual - expected).abs() > RELATIVE * expected.abs().clip(lower=1)

"""The SFG-PI reproduction's runs as cases on the sweep executor [Chung06, §4].

A case runs one scenario and keeps what the report, the tables and Figures 3-8 need (the
bottleneck's counters, its queue over time, per-class throughput over time, per-phase drop
rates and web object service times, SFG's on/off times), not the full results.

Per phase, the bottleneck's own counters (the core's per-phase summary, cut at the phase
edges): packets and bytes arrived at and dropped by its discipline, so the packet drop rate and
the byte loss rate, and its ECN marks; the drops split, from the drop and mark events table,
into the per-flow filter's in front of the queue (``filter``: SFG's, RED-PD's monitored flows',
SFB's penalty box) and the queue's own (overflow, early, forced, CHOKe's matches).
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from fairgate.repro.sfg_setup import BOTTLENECK
from fairgate.repro.sfg_setup import scenario as build_scenario
from fairgate.results import Results

FORWARD_PREFIXES = ("ftp", "cbr", "web")
PORT_COLUMNS = [
    "arrivals_pkts",
    "drops_pkts",
    "drop_rate",
    "arrivals_bytes",
    "drops_bytes",
    "byte_loss_rate",
    "marks",
]
CLASSES = ("ftp", "web", "cbr")


@dataclass(frozen=True)
class SfgRun:
    """What one run of a scenario keeps (small, picklable)."""

    scenario: str
    scheme: str
    port: dict
    queue: pd.DataFrame
    """time_s, bytes of the bottleneck queue."""
    throughput: pd.DataFrame
    """time_s, then Mb/s per class (ftp, web, cbr) and per CBR flow, per sample interval."""
    phases: pd.DataFrame
    """phase, the bottleneck's PORT_COLUMNS, filter_drops, queue_drops, web_objects,
    web_service_s."""
    sfg_on_s: float
    sfg_off_s: float
    first_filter_drop_s: dict[str, float]
    """CBR flow -> time of its first drop by the per-flow filter (SFG's filter, SFB's penalty
    box, RED-PD's monitoring); NaN when the filter never dropped it."""


def _interval_diffs(res: Results, columns: list[str]) -> pd.DataFrame:
    fs = res.flow_series.sort_values(["flow", "time_s"], kind="stable")
    diffs = fs.groupby("flow", observed=True)[columns].diff().fillna(fs[columns])
    return pd.concat([fs[["time_s", "flow"]], diffs], axis=1)


def throughput_series(res: Results) -> pd.DataFrame:
    """Delivered Mb/s per sample interval of each class and of each CBR flow."""
    steps = _interval_diffs(res, ["delivered_bytes"])
    names = steps["flow"].astype(str)
    steps = steps[names.str.startswith(FORWARD_PREFIXES) & ~names.str.endswith(".ack")]
    times = res.flow_series["time_s"].drop_duplicates().nsmallest(2)
    interval = float(times.iloc[1] - times.iloc[0])
    name = steps["flow"].astype(str)
    steps = steps.assign(cls=name.str[:3], flow=name)
    mbps = 8 / interval / 1e6
    by_class = steps.pivot_table("delivered_bytes", "time_s", "cls", aggfunc="sum") * mbps
    cbr = steps[steps["cls"] == "cbr"]
    per_cbr = cbr.pivot_table("delivered_bytes", "time_s", "flow", aggfunc="sum") * mbps
    table = by_class.reindex(columns=list(CLASSES), fill_value=0.0).join(per_cbr)
    return table.fillna(0.0).reset_index()


def _phase_index(times: pd.Series, phase: float, count: int) -> pd.Series:
    return (times // phase).astype(int).clip(upper=count - 1)


def _drop_split(res: Results, phase: float, count: int) -> pd.DataFrame:
    """The bottleneck's drops per phase: the filter's and the queue's (the rest)."""
    ev = res.drops
    ev = ev[(ev["port"] == BOTTLENECK) & (ev["action"] == "drop")]
    by_filter = ev["reason"] == "filter"
    split = pd.DataFrame({"filter_drops": by_filter, "queue_drops": ~by_filter}).astype(int)
    sums = split.groupby(_phase_index(ev["time_s"], phase, count)).sum()
    return sums.reindex(range(count), fill_value=0).reset_index(drop=True)


def phase_table(res: Results, phase: float, count: int) -> pd.DataFrame:
    """Per phase: the bottleneck's counters, its drops by cause, the web objects requested in
    the phase and their mean service time."""
    if res.summary["drop_events"]["not_recorded"]:
        raise RuntimeError("sfg: the drop events table is incomplete (record_drops)")
    pp = res.phase_ports
    out = pp[pp["port"] == BOTTLENECK][["phase", *PORT_COLUMNS]].reset_index(drop=True)
    out = pd.concat([out, _drop_split(res, phase, count)], axis=1)
    if not (out["filter_drops"] + out["queue_drops"]).equals(out["drops_pkts"].astype(int)):
        raise RuntimeError("sfg: drop events do not add up to the bottleneck's drops")
    tr = res.transfers
    done = tr[tr["aborted"] == 0]
    by_phase = done.groupby(_phase_index(done["request_s"], phase, count))
    service = by_phase["transfer_time_s"].agg(["count", "mean"]).reindex(range(count))
    out["web_objects"] = service["count"].fillna(0).astype(int).to_numpy()
    out["web_service_s"] = service["mean"].to_numpy()
    return out


def switch_times(res: Results) -> tuple[float, float]:
    """First switch-on and last switch-off of SFG at the bottleneck (NaN when absent)."""
    st = res.qdisc_state
    on = st[(st["port"] == BOTTLENECK) & (st["var"] == "sfg_on")].sort_values("time_s")
    changes = on[on["value"].diff().fillna(on["value"]) != 0]
    ups = changes[changes["value"] == 1]["time_s"]
    downs = changes[changes["value"] == 0]["time_s"]
    first_on = float(ups.iloc[0]) if len(ups) else float("nan")
    last_off = float(downs.iloc[-1]) if len(downs) else float("nan")
    return first_on, last_off


def first_filter_drops(res: Results) -> dict[str, float]:
    """Time of each CBR flow's first ``filter`` drop at the bottleneck (NaN if none)."""
    ev = res.drops
    ev = ev[(ev["port"] == BOTTLENECK) & (ev["reason"] == "filter")]
    first = ev.groupby(ev["flow"].astype(str))["time_s"].min()
    names = sorted(n for n in res.flows["flow"].astype(str) if n.startswith("cbr") and "." not in n)
    return {name: float(first.get(name, float("nan"))) for name in names}


def run_case(scheme: str, cbr: bool, phase: float, scale: float, phases: int) -> SfgRun:
    """Runs one scenario (module-level: the executor's workers import it)."""
    res = build_scenario(scheme, cbr=cbr, phase=phase, scale=scale).run()
    if not res.conserved:
        raise RuntimeError(f"sfg {scheme}: packet conservation violated")
    qs = res.queue_series
    queue = qs[qs["port"] == BOTTLENECK][["time_s", "bytes"]].reset_index(drop=True)
    port = res.ports.set_index("port").loc[BOTTLENECK].to_dict()
    on, off = switch_times(res)
    return SfgRun(
        scenario="cbr" if cbr else "tcp-mix",
        scheme=scheme,
        port=port,
        queue=queue,
        throughput=throughput_series(res),
        phases=phase_table(res, phase, phases),
        sfg_on_s=on,
        sfg_off_s=off,
        first_filter_drop_s=first_filter_drops(res),
    )

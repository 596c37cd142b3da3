"""The SFG-PI reproduction's runs as cases on the sweep executor [Chung06, §4].

A case runs one scenario and keeps what the report, the tables and Figures 3-8 need (the
bottleneck's counters, its queue over time, per-class throughput over time, per-phase drop
rates and web object service times, SFG's on/off times), not the full results.

Per-phase drop rates come from the flows' cumulative counters: the packets dropped in a phase
over the packets that reached their destination or were dropped in it, over the flows whose
packets cross the forward bottleneck (forward data, web, CBR, and the reverse flows' ACKs).
The split into SFG drops, queue drops and ECN marks is the bottleneck's, over the whole run.
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from fairgate.repro.sfg_setup import BOTTLENECK
from fairgate.repro.sfg_setup import scenario as build_scenario
from fairgate.results import Results

FORWARD_PREFIXES = ("ftp", "cbr", "web")
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
    """phase, arrivals_pkts, drops_pkts, drop_rate, web_objects, web_service_s."""
    sfg_on_s: float
    sfg_off_s: float


def _crosses_bottleneck(name: str) -> bool:
    if name.endswith(".ack"):
        return name.startswith("rev")
    return name.startswith(FORWARD_PREFIXES)


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


def phase_table(res: Results, phase: float, count: int) -> pd.DataFrame:
    """Drop rate and mean web object service time of each phase."""
    steps = _interval_diffs(res, ["delivered_pkts", "dropped_pkts"])
    steps = steps[steps["flow"].astype(str).map(_crosses_bottleneck)]
    index = ((steps["time_s"] - 1e-9) // phase).astype(int).clip(upper=count - 1)
    sums = steps.groupby(index)[["delivered_pkts", "dropped_pkts"]].sum()
    sums = sums.reindex(range(count), fill_value=0)
    out = pd.DataFrame({"phase": range(count)})
    out["arrivals_pkts"] = (sums["delivered_pkts"] + sums["dropped_pkts"]).to_numpy()
    out["drops_pkts"] = sums["dropped_pkts"].to_numpy()
    out["drop_rate"] = out["drops_pkts"] / out["arrivals_pkts"].where(out["arrivals_pkts"] > 0)
    tr = res.transfers
    done = tr[tr["aborted"] == 0]
    by_phase = done.groupby((done["request_s"] // phase).astype(int).clip(upper=count - 1))
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
    )

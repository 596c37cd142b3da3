"""The SFG-PI paper's offered-load calibration (Figure 3) [Chung06, §4.1].

Drop-tail (500 KB) with web sessions only: at 10 Mb/s the drop rate, at 100 Mb/s (no
congestion) the offered rate, per number of sessions; a least-squares line of drop rate against
offered load (offered rate / 10 Mb/s); each FTP phase of the TCP mix then maps its drop-tail
drop rate through the line to an equivalent offered load.

Decisions (docs/reproductions/sfg.md): the sessions are measured after their 30-s start window
for 300 s; the drop rate is counted as in the TCP mix (the bottleneck's drops over its
arrivals); quick mode shrinks sessions, link rates and queue by ten and measures
100 s.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from fairgate.repro.sfg_setup import BOTTLENECK, DROP_TAIL, QUEUE_BYTES, SESSIONS_PER_WEB_HOST, TCP
from fairgate.repro.sfg_setup import WEB_START_WINDOW_S as WINDOW_S
from fairgate.scenario import Scenario, link_params, queue, source

SESSIONS = (1200, 1300, 1400, 1500, 1600, 1700, 1800)
QUICK_SESSIONS = (1200, 1400, 1600, 1800)
LINK_MBPS = 10.0
UNCONGESTED_MBPS = 100.0
MEASURE_S, QUICK_MEASURE_S = 300.0, 100.0


def scenario(sessions: int, link_mbps: float, scale: float, measure_s: float) -> Scenario:
    """Web sessions alone (``sessions * scale`` of them) on a drop-tail dumbbell."""
    hosts = max(1, round(sessions * scale / SESSIONS_PER_WEB_HOST))
    limit = round(QUEUE_BYTES * scale)
    bottleneck_queue = DROP_TAIL if scale == 1 else queue("fifo", limit=limit, limit_bytes=limit)
    sc = Scenario(
        f"sfg-calibration-{sessions}-{link_mbps:g}",
        duration=WINDOW_S + measure_s,
        sample_interval=1.0,
        seed=1,
        warmup=WINDOW_S,
    )
    sc.dumbbell(
        senders=hosts,
        bottleneck=link_params(f"{link_mbps * scale:g}Mbps", "10ms", bottleneck_queue),
        access=link_params("1000Mbps", "1ms"),
        rtt={"dist": "uniform", "min": "60ms", "max": "1000ms"},
    )
    web = source("web", sessions=SESSIONS_PER_WEB_HOST, start_window=WINDOW_S, tcp=TCP)
    for k in range(hosts):
        start = WINDOW_S * k / (hosts * SESSIONS_PER_WEB_HOST)
        sc.flow(f"s{k}", f"d{k}", web, name=f"web{k}", start=start)
    return sc


def run_point(sessions: int, link_mbps: float, scale: float, measure_s: float) -> dict:
    """One calibration run: drop rate and offered load (bottleneck rate over 10 Mb/s)."""
    res = scenario(sessions, link_mbps, scale, measure_s).run()
    if not res.conserved:
        raise RuntimeError(f"sfg calibration {sessions} sessions: conservation violated")
    port = res.ports.set_index("port").loc[BOTTLENECK]
    return {
        "sessions": sessions,
        "link_mbps": link_mbps,
        "drop_rate": float(port["drops_pkts"] / port["arrivals_pkts"]),
        "offered_load": float(port["throughput_bps"]) / (LINK_MBPS * scale * 1e6),
    }


def fit(points: pd.DataFrame) -> tuple[float, float, float]:
    """(slope, intercept, R²) of drop rate (10 Mb/s runs) against offered load (100 Mb/s
    runs), matched by number of sessions."""
    drops = points[points["link_mbps"] == LINK_MBPS].set_index("sessions")["drop_rate"]
    load = points[points["link_mbps"] == UNCONGESTED_MBPS].set_index("sessions")["offered_load"]
    x, y = load.loc[drops.index].to_numpy(), drops.to_numpy()
    slope, intercept = np.polyfit(x, y, 1)
    residual = y - (slope * x + intercept)
    r2 = 1 - float(residual @ residual) / float(((y - y.mean()) ** 2).sum())
    return float(slope), float(intercept), r2


def equivalent_loads(phases: pd.DataFrame, flows: list[int], line: tuple) -> pd.DataFrame:
    """Each FTP count's equivalent offered load: its phases' drop-tail drop rate (mean over
    the phases with that count) through the line."""
    slope, intercept, _ = line
    table = phases.assign(ftp_flows=flows).groupby("ftp_flows", sort=True)["drop_rate"].mean()
    return pd.DataFrame(
        {
            "ftp_flows": table.index,
            "drop_rate": table.to_numpy(),
            "offered_load": (table.to_numpy() - intercept) / slope,
        }
    )

"""The two-server gateway's rate sweep [Vaidyanathan99, §4.4.4, Fig. 4.9]: the spoofing pair
at T3 (500 ms satellite round trip, 200 KB far receive buffer, one large transfer) with
gateway 1's IP subsystem served at μ packets/s, for a range of μ and the vanilla gateway.

Per μ: satellite throughput (payload relayed by gateway 2 over the second half of the run),
total buffering at gateway 1 (TCP send buffer and unacknowledged bytes plus IP), whether
the RHS starves (its send buffer empty in most samples of the second half) and whether its
buffer is bounded (it grows by less than 5% of the bytes relayed in the second half). The
optimum is the smallest μ that keeps 98% of the vanilla throughput with a bounded, non-zero
RHS buffer (the source's criterion; it found about 540 packets/s).
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from fairgate.checks import out_folder
from fairgate.results import Results
from fairgate.scenario import Scenario

TITLE = "Two-server gateway: satellite throughput and buffering over the service rate mu"
RATES = [300.0, 400.0, 450.0, 500.0, 540.0, 550.0, 600.0, 800.0, 1000.0, 1200.0, 1500.0, 2000.0]
DURATION_S = 300.0
QUICK_DURATION_S = 60.0
KEEP = 0.98
RECEIVER = {"timestamps": False, "delayed_ack": False}
"""TCP options the source leaves open, as in scenarios/spoofing_gateway.toml (fairgate's
defaults are ns-3's): one ACK per segment, no option bytes; a sender also ticks in 10 ms."""
PINNED = {**RECEIVER, "granularity": 0.01}


def spoofing(mu: float | None, duration_s: float) -> Scenario:
    """The T3 spoofing pair; gateway 1 uses the two-server model when `mu` is given."""
    gw1: dict = {"lhs": RECEIVER, "rhs": {"cc": "sack", "initial_window": 2, **PINNED}}
    if mu is not None:
        gw1["two_server"] = {"rate": mu}
    s = Scenario("two-server-sweep", duration=duration_s, sample_interval="500ms")
    s.node("server").gateway("gw1", gw1)
    gw2_lhs = {"cc": "sack", "window_scale": 3, "rwnd": 200000, **RECEIVER}
    s.gateway("gw2", {"lhs": gw2_lhs, "rhs": PINNED})
    s.node("client")
    s.link("server", "gw1", "10Mbps", "0.1ms", queue={"kind": "fifo", "limit": 1000})
    s.link("gw1", "gw2", "44.736Mbps", "250ms", queue={"kind": "fifo", "limit": 100000})
    s.link("gw2", "client", "10Mbps", "0.1ms", queue={"kind": "fifo", "limit": 1000})
    s.flow("server", "client", {"kind": "tcp", "cc": "sack", **PINNED}, name="file")
    return s


def _series(res: Results, var: str) -> pd.Series:
    t = res.traces
    rows = t[t["var"].astype(str) == var]
    return rows.groupby("time_s")["value"].sum()


def measure(res: Results, mu: float | None, duration_s: float) -> dict:
    """One row of the sweep from a finished run."""
    half = duration_s / 2
    relayed = _series(res, "gw2.relayed_bytes")
    sent = relayed.asof(duration_s) - relayed.asof(half)
    send_buffer = _series(res, "gw1.send_buffer")
    late = send_buffer[send_buffer.index >= half]
    held = _series(res, "gw1.pep_buffer")
    ip = _series(res, "gw1.ip_buffer") if mu is not None else held * 0
    growth = late.iloc[-1] - late.iloc[0]
    starves = bool((late == 0).mean() > 0.5)
    return {
        "mu_pkts_s": mu if mu is not None else float("nan"),
        "gateway": "two-server" if mu is not None else "vanilla",
        "throughput_mbps": sent * 8 / half / 1e6,
        "tcp_buffer_kb": held[held.index >= half].mean() / 1e3,
        "ip_buffer_kb": ip[ip.index >= half].mean() / 1e3,
        "rhs_send_buffer_end_kb": late.iloc[-1] / 1e3,
        "rhs_starves": starves,
        "rhs_bounded": bool(growth < 0.05 * sent),
    }


def sweep(duration_s: float = DURATION_S, rates: list[float] = RATES) -> pd.DataFrame:
    """The vanilla row, then one row per μ."""
    rows = [measure(spoofing(None, duration_s).run(), None, duration_s)]
    rows += [measure(spoofing(mu, duration_s).run(), mu, duration_s) for mu in rates]
    table = pd.DataFrame(rows)
    table["total_buffer_kb"] = table["tcp_buffer_kb"] + table["ip_buffer_kb"]
    return table


def optimum(table: pd.DataFrame) -> float | None:
    """The smallest μ keeping the vanilla throughput with a bounded, non-zero RHS buffer."""
    vanilla = table.loc[table["gateway"] == "vanilla", "throughput_mbps"].iloc[0]
    ok = table[
        (table["gateway"] == "two-server")
        & (table["throughput_mbps"] >= KEEP * vanilla)
        & ~table["rhs_starves"]
        & table["rhs_bounded"]
    ]
    return float(ok["mu_pkts_s"].min()) if len(ok) else None


def run(out_dir: Path, quick: bool = False) -> str:
    """Runs the sweep, writes CSV and Markdown; returns the printed summary."""
    out_dir = out_folder(out_dir)
    duration_s = QUICK_DURATION_S if quick else DURATION_S
    table = sweep(duration_s)
    table.to_csv(out_dir / "two_server.csv", index=False)
    best = optimum(table)
    lines = [
        f"# {TITLE}",
        "",
        f"T3, 500 ms satellite RTT, 200 KB far receive buffer, {duration_s:g} s per run",
        "",
        "```",
        table.round(3).to_string(index=False),
        "```",
        "",
        "Smallest mu keeping the vanilla throughput with a bounded, non-zero RHS buffer: "
        + (f"{best:g} packets/s" if best is not None else "none in the sweep")
        + " (the source: about 540 packets/s, between 500 and 550).",
    ]
    text = "\n".join(lines) + "\n"
    (out_dir / "two_server.md").write_text(text, encoding="utf-8")
    return text

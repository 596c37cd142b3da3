"""[Vaidyanathan99] chapter 4: the spoofing gateway and the two-server model (E4.1-E4.5).

Server -> 10BaseT -> gateway 1 -> satellite (500 ms round trip, T1 or T3) -> gateway 2 ->
10BaseT -> client, one large file; every run is a case on the sweep executor. E4.1 vanilla
spoofing at T1; E4.2 at T3 with 200 KB and 400 KB receive buffers at gateway 2; E4.3 the
two-server model at 500 packets/s; E4.4 the scheduler-rate sweep; E4.5 one TCP and one UDP
connection through a FIFO and through the two-server model (start-time FQ + PFD), then with a
100K receive buffer.

Decisions where the text is silent (docs/reproductions/hybrid_gateways.md gives the reasons):
- MSS 536 B (576 B on the wire), delayed ACKs at gateway 2's LHS (one ACK per two segments):
  a served packet then averages about 3,200 bits, near the thesis's 3,300-3,400.
- The LHS flush period (the thesis's "periodic flush of the receive buffer") is one satellite
  round trip, 0.5 s, at both gateways: the one free parameter behind the T3 puzzle
  (throughput about rwnd / (RTT + period), not rwnd / RTT); decided once, not per row.
- Gateway 1's receive buffer 1 MB (the file server floods it over the LAN), the IP subsystem's
  buffer 1,000 packets, run length 400 s (the thesis's plots run past 300 s).
- E4.5: T1 satellite link, UDP CBR at the T1 rate with 576-byte packets, a 100-packet FIFO at
  the satellite port, μ = the T1 rate in 576-byte packets (335/s), default receive buffer
  64 KB (65,535 B, the largest without window scaling), then 100,000 B.
- Repetitions: the runs through the two-server model (PFD's coin) are repeated over seeds and
  reported as means with 95% Student-t intervals; the vanilla and FIFO runs have no random
  element and run once.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pandas as pd

from fairgate.repro.cases import Case, run_cases
from fairgate.repro.report import Check, Report, Row, Tolerance
from fairgate.scenario import Scenario
from fairgate.sweeps.stats import repetitions

EXPERIMENTS = ["4.1", "4.2", "4.3", "4.4", "4.5"]
T1, T3 = "1.544Mbps", "44.736Mbps"
T1_BPS = 1_544_000.0
SAT_RTT_S = 0.5
MSS = 536
WIRE = MSS + 40
FLUSH_S = 0.5
GW1_RWND = 1_000_000
RWNDS = [200_000, 400_000]
RATES = [400.0, 450.0, 500.0, 540.0, 550.0, 600.0]
"""The thesis's grid, plus 600 packets/s to locate the optimum when it lies above 550."""
QUICK_RATES = [400.0, 550.0]
DURATION_S = 400.0
QUICK_DURATION_S = 60.0
UDP_MU = round(T1_BPS / (WIRE * 8))
E45_RWNDS = [65_535, 100_000]
THESIS_T3_MBPS = {200_000: 1.6, 400_000: 3.4}
KEEP = 0.98
SEEDS = 5
"""Seeds of every run through the two-server model (PFD draws its early drops at random)."""
QUICK_SEEDS = 2


def _receiver(**options: Any) -> dict:
    """A gateway's LHS (a receiver) with the options the source implies set explicitly."""
    base = {"cc": "sack", "mss": MSS, "timestamps": False, "delayed_ack": False}
    return {**base, **options}


def _tcp(**options: Any) -> dict:
    """A TCP sender's config with the options the source implies set explicitly."""
    return _receiver(granularity=0.01, **options)


def spoofing(
    link: str,
    far_rwnd: int,
    duration_s: float,
    mu: float | None = None,
    flush_s: float = FLUSH_S,
    udp: bool = False,
    seed: int = 1,
) -> Scenario:
    """The chapter-4 topology; gateway 1 uses the two-server model when `mu` is given (start-
    time FQ with PFD, as the thesis), and a UDP CBR connection at the T1 rate joins when
    `udp` (E4.5, whose satellite port is a 100-packet FIFO)."""
    flush = f"{flush_s}s"
    gw1: dict = {
        "lhs": _receiver(window_scale=5, rwnd=GW1_RWND),
        "rhs": _tcp(initial_window=2),
        "flush_period": flush,
    }
    if mu is not None:
        pfd = {"kind": "pfd", "thresh": 0.2, "p": 0.02, "limit": 1000}
        gw1["two_server"] = {"rate": mu, "queue": {"kind": "stfq", "buffer": pfd}}
    gw2 = {
        "lhs": _receiver(window_scale=5, rwnd=far_rwnd, delayed_ack=True),
        "rhs": _tcp(initial_window=2),
        "flush_period": flush,
    }
    sample = "1s" if duration_s > 100 else "500ms"
    s = Scenario("hybrid-ch4", duration=duration_s, seed=seed, sample_interval=sample)
    s.node("server").gateway("gw1", gw1).gateway("gw2", gw2).node("client")
    lan = {"kind": "fifo", "limit": 2000}
    sat = {"kind": "fifo", "limit": 100 if udp else 100000}
    s.link("server", "gw1", "10Mbps", "0.1ms", queue=lan)
    s.link("gw1", "gw2", link, f"{SAT_RTT_S / 2 * 1000:g}ms", queue=sat)
    s.link("gw2", "client", "10Mbps", "0.1ms", queue=lan)
    s.flow("server", "client", {"kind": "tcp", **_tcp(rwnd=65535)}, name="file")
    if udp:
        s.flow("server", "client", {"kind": "cbr", "rate": link, "size": WIRE}, name="udp")
    return s


def _series(traces: pd.DataFrame, var: str) -> pd.Series:
    rows = traces[traces["var"].astype(str) == var]
    return rows.groupby("time_s")["value"].sum()


def _rate(cumulative: pd.Series, start: float, end: float) -> float:
    """Mb/s of a cumulative byte count between two times."""
    before = 0.0 if start < cumulative.index[0] else float(cumulative.asof(start))
    return (float(cumulative.asof(end)) - before) * 8 / (end - start) / 1e6


def run_gateway(
    link: str,
    far_rwnd: int,
    duration_s: float,
    mu: float | None,
    flush_s: float,
    seed: int = 1,
) -> dict:
    """One large transfer: scalars and the time series the figures need."""
    res = spoofing(link, far_rwnd, duration_s, mu, flush_s, seed=seed).run()
    if not res.conserved:
        raise RuntimeError(f"conservation violated: {link} {far_rwnd} mu={mu}")
    t = res.traces
    relayed = _series(t, "gw2.relayed_bytes")
    send = _series(t, "gw1.send_buffer")
    held = _series(t, "gw1.pep_buffer")
    ip = _series(t, "gw1.ip_buffer") if mu is not None else held * 0
    half, third = duration_s / 2, duration_s / 3
    late = send[send.index >= half]
    steps = relayed.diff() * 8 / relayed.index.to_series().diff()
    served_pkts = _series(t, "gw1.ip_served_pkts") if mu is not None else None
    served_bits = (
        float(_series(t, "gw1.ip_served_bytes").iloc[-1]) * 8 / max(served_pkts.iloc[-1], 1)
        if served_pkts is not None
        else float("nan")
    )
    return {
        "throughput_mbps": _rate(relayed, half, duration_s),
        "early_mbps": _rate(relayed, 0.0, third),
        "last_quarter_mbps": _rate(relayed, 0.75 * duration_s, duration_s),
        "send_growth_mbps": float(late.iloc[-1] - late.iloc[0]) * 8 / (duration_s - half) / 1e6,
        "send_end_kb": float(send.iloc[-1]) / 1e3,
        "starves": bool((late == 0).mean() > 0.5),
        "bounded": bool(
            late.iloc[-1] - late.iloc[0] < 0.05 * (relayed.iloc[-1] - relayed.asof(half))
        ),
        "tcp_buffer_kb": float(held[held.index >= half].mean()) / 1e3,
        "ip_buffer_kb": float(ip[ip.index >= half].mean()) / 1e3,
        "served_bits": served_bits,
        "series": {
            "time_s": relayed.index.tolist(),
            "throughput_mbps": (steps / 1e6).tolist(),
            "send_buffer_kb": (send.reindex(relayed.index) / 1e3).tolist(),
            "rhs_cwnd_kb": (_series(t, "gw1.rhs_cwnd").reindex(relayed.index) / 1e3).tolist(),
            "ip_buffer_kb": (ip.reindex(relayed.index) / 1e3).tolist(),
            "tcp_buffer_kb": (held.reindex(relayed.index) / 1e3).tolist(),
        },
    }


def run_tcp_udp(duration_s: float, mu: float | None, far_rwnd: int, seed: int = 1) -> dict:
    """E4.5: goodput of the TCP and the UDP connection over time and over the second half."""
    res = spoofing(T1, far_rwnd, duration_s, mu, udp=True, seed=seed).run()
    if not res.conserved:
        raise RuntimeError(f"conservation violated: E4.5 mu={mu} rwnd={far_rwnd}")
    fs = res.flow_series
    wide = fs.pivot(index="time_s", columns="flow", values="goodput_bytes")
    half = duration_s / 2
    rates = wide.diff().mul(8e-6).div(wide.index.to_series().diff(), axis=0).iloc[1:]
    timeouts = res.traces[res.traces["var"].astype(str) == "gw1.leg_timeouts"]["value"]
    return {
        "tcp_mbps": _rate(wide["file"], half, duration_s),
        "udp_mbps": _rate(wide["udp"], half, duration_s),
        "leg_timeouts": float(timeouts.max()) if len(timeouts) else 0.0,
        "series": {
            "time_s": rates.index.tolist(),
            "tcp_mbps": rates["file"].tolist(),
            "udp_mbps": rates["udp"].tolist(),
        },
    }


def cases(experiments: list[str], quick: bool) -> list[Case]:
    """Every run of the chosen experiments, once each (E4.3 and E4.4 share the vanilla run);
    a run through the two-server model once per seed, keyed `KEY-sN`."""
    d = QUICK_DURATION_S if quick else DURATION_S
    seeds = range(1, (QUICK_SEEDS if quick else SEEDS) + 1)
    wanted: dict[str, Case] = {}

    def add(key: str, function: Any, args: tuple) -> None:
        wanted.setdefault(key, Case(key, function, args))

    def add_seeds(key: str, function: Any, args: tuple) -> None:
        for seed in seeds:
            add(f"{key}-s{seed}", function, (*args, seed))

    for e in experiments:
        if e == "4.1":
            add("t1", run_gateway, (T1, RWNDS[0], d, None, FLUSH_S))
        if e == "4.2":
            for rwnd in RWNDS:
                add(f"t3-{rwnd}", run_gateway, (T3, rwnd, d, None, FLUSH_S))
                add(f"t3-{rwnd}-noflush", run_gateway, (T3, rwnd, d, None, 0.0))
        if e in ("4.3", "4.4"):
            add(f"t3-{RWNDS[0]}", run_gateway, (T3, RWNDS[0], d, None, FLUSH_S))
            rates = [500.0] if e == "4.3" else (QUICK_RATES if quick else RATES)
            for mu in rates:
                add_seeds(f"mu-{mu:g}", run_gateway, (T3, RWNDS[0], d, mu, FLUSH_S))
        if e == "4.5":
            add("udp-fifo", run_tcp_udp, (d, None, E45_RWNDS[0]))
            for rwnd in E45_RWNDS:
                add_seeds(f"udp-fq-{rwnd}", run_tcp_udp, (d, float(UDP_MU), rwnd))
    return list(wanted.values())


def combine_seeds(values: dict[str, dict]) -> tuple[dict[str, dict], pd.DataFrame]:
    """Folds the `KEY-sN` runs into one value per KEY: the mean of every number over the
    seeds, `NAME_ci95` its 95% half-width, a flag held by most seeds, seed 1's series; and
    the per-KEY intervals as a table (mean, ci_low, ci_high per number)."""
    by_key: dict[str, list[dict]] = {}
    for key, value in values.items():
        base, _, seed = key.rpartition("-s")
        by_key.setdefault(base if seed.isdigit() else key, []).append(value)
    combined: dict[str, dict] = {}
    rows = []
    for key, runs in by_key.items():
        numbers = [n for n, x in runs[0].items() if isinstance(x, float)]
        frame = pd.DataFrame([{n: r[n] for n in numbers} for r in runs]).assign(case=key)
        table = repetitions(frame, ["case"], numbers)
        rows.append(table)
        stats = table.iloc[0]
        value = dict(runs[0])
        for n in numbers:
            value[n] = float(stats[f"{n}_mean"])
            value[f"{n}_ci95"] = float(stats[f"{n}_mean"] - stats[f"{n}_ci_low"])
        for n, x in runs[0].items():
            if isinstance(x, bool):
                value[n] = 2 * sum(bool(r[n]) for r in runs) > len(runs)
        value["seeds"] = len(runs)
        combined[key] = value
    return combined, pd.concat(rows, ignore_index=True) if rows else pd.DataFrame()


def _pm(value: dict, name: str) -> str:
    """`x.xxx` or `x.xxx±y.yyy` when the value has an interval over seeds."""
    half = value.get(f"{name}_ci95", math.nan)
    text = f"{value[name]:.3f}"
    return text if math.isnan(half) else f"{text}±{half:.3f}"


def sweep(
    experiments: list[str], quick: bool, progress: bool = False, client: Any = None
) -> tuple[dict[str, dict], dict[str, str]]:
    """Runs the cases on the executor; ({key: value}, {key: error})."""
    return run_cases(cases(experiments, quick), client, progress, desc="hybrid-gateways ch4")


def _check(report: Report, exp: str, metric: str, holds: bool, note: str) -> None:
    report.add(Check(f"E{exp}", metric, 1.0, 1.0 if holds else 0.0, Tolerance(), note))


def checks_41_42(v: dict[str, dict], report: Report) -> None:
    """Figs. 4.5, 4.6: T1 link-limited with a growing send buffer; T3 limited by the far buffer."""
    if "t1" in v:
        t1 = v["t1"]
        payload = T1_BPS * MSS / WIRE / 1e6
        report.add(
            Check(
                "E4.1",
                "satellite throughput / T1 payload rate",
                1.0,
                t1["throughput_mbps"] / payload,
                Tolerance(relative=0.03),
                f"{t1['throughput_mbps']:.3f} of {payload:.3f} Mb/s (figs. 4.5, 4.6)",
            )
        )
        _check(
            report,
            "4.1",
            "RHS send buffer grows without bound (figs. 4.5, 4.6)",
            t1["send_growth_mbps"] > 0.5,
            f"grows {t1['send_growth_mbps']:.2f} Mb/s, {t1['send_end_kb']:.0f} KB at the end",
        )
    got = {r: v.get(f"t3-{r}") for r in RWNDS}
    for rwnd, run in got.items():
        if run is None:
            continue
        bound = rwnd * 8 / SAT_RTT_S / 1e6
        flushed = rwnd * 8 / (SAT_RTT_S + FLUSH_S) / 1e6
        raw = v.get(f"t3-{rwnd}-noflush", {}).get("throughput_mbps", float("nan"))
        report.add(
            Check(
                "E4.2",
                f"T3 throughput, {rwnd // 1000} KB receive buffer (Mb/s)",
                THESIS_T3_MBPS[rwnd],
                run["throughput_mbps"],
                Tolerance(relative=0.10),
                f"analytic bound rwnd/RTT {bound:.2f}; rwnd/(RTT+flush) {flushed:.2f}; "
                f"without the flush period {raw:.2f} Mb/s (figs. 4.5, 4.6)",
            )
        )
        report.add(
            Row(
                "E4.2",
                f"analytic bound rwnd/RTT, {rwnd // 1000} KB (Mb/s)",
                THESIS_T3_MBPS[rwnd],
                bound,
                None,
                "the thesis's value beside the bound",
            )
        )
    if all(got.values()):
        ratio = got[RWNDS[1]]["throughput_mbps"] / got[RWNDS[0]]["throughput_mbps"]
        report.add(
            Check(
                "E4.2",
                "throughput ratio 400 KB / 200 KB",
                3.4 / 1.6,
                ratio,
                Tolerance(relative=0.15),
                "roughly linear in the receive buffer (figs. 4.5, 4.6)",
            )
        )
        run = got[RWNDS[0]]
        _check(
            report,
            "4.2",
            "RHS send buffer grows without bound at T3, 200 KB",
            run["send_growth_mbps"] > 0.5,
            f"grows {run['send_growth_mbps']:.2f} Mb/s",
        )


def checks_43_44(v: dict[str, dict], report: Report, quick: bool) -> None:
    """Figs. 4.7-4.9: the two-server model at 500/s against vanilla, and the rate sweep."""
    vanilla = v.get(f"t3-{RWNDS[0]}")
    if vanilla is None:
        return
    if "mu-500" in v:
        ts = v["mu-500"]
        report.add(
            Check(
                "E4.3",
                "early throughput, two-server 500/s / vanilla",
                1.0,
                ts["early_mbps"] / vanilla["early_mbps"],
                Tolerance(relative=0.10),
                f"{ts['early_mbps']:.3f} vs {vanilla['early_mbps']:.3f} Mb/s, first third"
                " (figs. 4.7, 4.8)",
            )
        )
        total_v = vanilla["tcp_buffer_kb"] + vanilla["ip_buffer_kb"]
        total_t = ts["tcp_buffer_kb"] + ts["ip_buffer_kb"]
        _check(
            report,
            "4.3",
            "total buffering (TCP + IP) at least 10x lower (figs. 4.7, 4.8)",
            total_v >= 10 * total_t,
            f"vanilla {total_v:.0f} KB, two-server {total_t:.0f} KB",
        )
    sweep_runs = {mu: v[f"mu-{mu:g}"] for mu in RATES if f"mu-{mu:g}" in v}
    if len(sweep_runs) < 2:
        return
    base = vanilla["throughput_mbps"]
    for mu in (400.0, 450.0):
        if mu in sweep_runs:
            r = sweep_runs[mu]
            _check(
                report,
                "4.4",
                f"{mu:g}/s scheduler-limited and starving (fig. 4.9)",
                r["throughput_mbps"] < 0.95 * base and r["starves"],
                f"{_pm(r, 'throughput_mbps')} of vanilla {base:.3f} Mb/s, starves {r['starves']}",
            )
    if 500.0 in sweep_runs and not quick:
        r = sweep_runs[500.0]
        _check(
            report,
            "4.4",
            "500/s declines late (ACK load on the scheduler) (fig. 4.9)",
            r["last_quarter_mbps"] < 0.95 * r["early_mbps"],
            f"first third {_pm(r, 'early_mbps')}, last quarter {_pm(r, 'last_quarter_mbps')} Mb/s",
        )
    if 550.0 in sweep_runs:
        r = sweep_runs[550.0]
        _check(
            report,
            "4.4",
            "550/s sustains the vanilla throughput (fig. 4.9)",
            r["throughput_mbps"] >= KEEP * base and not r["starves"],
            f"{_pm(r, 'throughput_mbps')} of {base:.3f} Mb/s, starves {r['starves']}",
        )
    ok = [
        mu
        for mu, r in sweep_runs.items()
        if r["throughput_mbps"] >= KEEP * base and not r["starves"] and r["bounded"]
    ]
    best = min(ok) if ok else float("nan")
    if not quick:
        report.add(
            Check(
                "E4.4",
                "optimum scheduler rate (packets/s)",
                540.0,
                best,
                Tolerance(absolute=10.0),
                "smallest rate of the grid keeping 98% of the "
                "vanilla throughput with a bounded, non-zero RHS buffer (fig. 4.9)",
            )
        )
    bits = [r["served_bits"] for r in sweep_runs.values()]
    report.add(
        Check(
            "E4.4",
            "mean served packet (bits)",
            3350.0,
            sum(bits) / len(bits),
            Tolerance(absolute=150.0),
            "IP subsystem, mean over the rates (fig. 4.9)",
        )
    )
    report.add(
        Row(
            "E4.4",
            "steady-state throughput (Mb/s)",
            1.67,
            base,
            None,
            "vanilla at 200 KB, second half",
        )
    )


def checks_45(v: dict[str, dict], report: Report) -> None:
    """Figs. 4.10, 4.11: UDP shuts TCP out of a FIFO; the two-server model with FQ + PFD
    protects it."""
    fifo = v.get("udp-fifo")
    fq = [v.get(f"udp-fq-{r}") for r in E45_RWNDS]
    if fifo is None or None in fq:
        return
    share = fifo["udp_mbps"] / max(fifo["udp_mbps"] + fifo["tcp_mbps"], 1e-9)
    _check(
        report,
        "4.5",
        "FIFO: UDP takes most of the link, TCP times out (figs. 4.10, 4.11)",
        share > 0.75 and fifo["leg_timeouts"] > 0,
        f"UDP {fifo['udp_mbps']:.3f}, TCP {fifo['tcp_mbps']:.3f} Mb/s, "
        f"{fifo['leg_timeouts']:.0f} satellite-leg timeouts",
    )
    small, large = fq
    fair = T1_BPS * MSS / WIRE / 2 / 1e6
    _check(
        report,
        "4.5",
        "two-server + FQ + PFD: TCP and UDP near their fair shares (figs. 4.10, 4.11)",
        large["tcp_mbps"] >= 0.8 * fair and large["udp_mbps"] >= 0.8 * fair,
        f"TCP {_pm(large, 'tcp_mbps')} (100K) and {_pm(small, 'tcp_mbps')} (64K), "
        f"UDP {_pm(large, 'udp_mbps')} Mb/s; fair share {fair:.3f}",
    )
    _check(
        report,
        "4.5",
        "a 100K receive buffer raises TCP's throughput (figs. 4.10, 4.11)",
        large["tcp_mbps"] > small["tcp_mbps"],
        f"{_pm(small, 'tcp_mbps')} -> {_pm(large, 'tcp_mbps')} Mb/s",
    )


def run(
    out_dir: Path,
    experiments: list[str],
    quick: bool,
    report: Report,
    progress: bool = False,
    client: Any = None,
) -> None:
    """Runs the chosen chapter-4 experiments and adds their checks, notes and figures to
    ``report``."""
    from fairgate.repro.hybrid_ch4_plots import figures

    runs, errors = sweep(experiments, quick, progress, client)
    report.notes.extend(f"run failed: {key}: {error}" for key, error in errors.items())
    values, intervals = combine_seeds(runs)
    checks_41_42(values, report)
    checks_43_44(values, report, quick)
    checks_45(values, report)
    scalars = [
        {"case": k, **{n: x for n, x in val.items() if n != "series"}} for k, val in runs.items()
    ]
    out_dir.mkdir(parents=True, exist_ok=True)
    pd.DataFrame(scalars).to_csv(out_dir / "hybrid_ch4_runs.csv", index=False)
    intervals.to_csv(out_dir / "hybrid_ch4_summary.csv", index=False)
    report.figures.extend(figures(values, out_dir))
    duration = QUICK_DURATION_S if quick else DURATION_S
    seeds = QUICK_SEEDS if quick else SEEDS
    report.notes.append(
        f"chapter 4: {duration:g} s per run; the two-server runs over {seeds} seeds (means, 95%"
        " intervals in hybrid_ch4_summary.csv), the others once; per-run numbers in"
        " hybrid_ch4_runs.csv"
    )
    report.notes.extend(rate_sweep_notes(values))


def rate_sweep_notes(values: dict[str, dict]) -> list[str]:
    """One line per two-server case: its throughputs with their 95% intervals over seeds."""
    notes = []
    for key, value in values.items():
        if key.startswith("mu-"):
            notes.append(
                f"E4.4 {key}: throughput {_pm(value, 'throughput_mbps')} Mb/s, first third "
                f"{_pm(value, 'early_mbps')}, last quarter {_pm(value, 'last_quarter_mbps')};"
                f" starves {value['starves']}, bounded {value['bounded']} ({value['seeds']} seeds)"
            )
        if key.startswith("udp-fq-"):
            notes.append(
                f"E4.5 {key}: TCP {_pm(value, 'tcp_mbps')}, UDP {_pm(value, 'udp_mbps')} Mb/s"
                f" ({value['seeds']} seeds)"
            )
    return notes

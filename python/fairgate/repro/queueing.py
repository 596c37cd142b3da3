"""Queueing theory as a reproduction: the engine against closed forms.

M/M/1 (mean number in system rho/(1-rho), mean sojourn 1/(mu-lambda)) and M/D/1
(Pollaczek-Khinchine: mean queue rho^2/(2(1-rho))) at three loads, and a CBR source above and
below capacity (utilisation r/C, loss 1-C/r). Tolerance 2% (5% in quick mode, which runs a tenth
of the packets).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from matplotlib.figure import Figure

import fairgate as fg
from fairgate._core import SimulationError
from fairgate.plot import save
from fairgate.repro.cases import Case, run_cases
from fairgate.repro.report import Report, Row, Tolerance

TITLE = "Queueing theory: M/M/1, M/D/1 and CBR against closed forms"
SOURCE = "Kleinrock, Queueing Systems vol. 1 (1975); the foundation issue's acceptance tests"
EXPERIMENTS = ["mm1", "md1", "cbr"]
LOADS = [0.5, 0.8, 0.9]
HEAVY_LOAD_FACTOR = 5
"""Runs at load 0.9 take this many times more packets: the M/M/1 time average's asymptotic
variance grows as 2 rho (1 + rho) / (1 - rho)^4 (Whitt 1989), 19 times larger at 0.9 than at
0.8, so equal run lengths would give it a 4x wider error."""
RATE_BPS = 80e6
MEAN_BYTES = 10_000
SERVICE_S = MEAN_BYTES * 8 / RATE_BPS


def _single_queue(load: float, exponential: bool, packets: int, seed: int) -> fg.Results:
    if load > 0.85:
        packets *= HEAVY_LOAD_FACTOR
    duration = packets * SERVICE_S / load
    sc = fg.Scenario(f"queue-{load}", duration=duration, sample_interval=duration / 10, seed=seed)
    sc.node("a").node("b")
    sc.link("a", "b", RATE_BPS, 0, fg.queue("fifo", limit=10_000_000), duplex=False)
    size = {"dist": "exponential", "mean": MEAN_BYTES} if exponential else MEAN_BYTES
    sc.flow("a", "b", fg.source("poisson", rate=load * RATE_BPS, size=size))
    return sc.run()


def queue_case(load: float, exponential: bool, packets: int, seed: int) -> dict[str, float]:
    """One M/M/1 or M/D/1 run on a worker, reduced to the port's and the flow's means."""
    res = _single_queue(load, exponential, packets, seed)
    port, flow = res.ports.iloc[0], res.flows.iloc[0]
    means = {k: port[k] for k in ("mean_system_pkts", "mean_queue_pkts", "mean_wait_s")}
    return {**means, "mean_delay_s": flow["mean_delay_s"]}


def cbr_case(rate_mbps: float, quick: bool) -> dict[str, float]:
    """A CBR source at ``rate_mbps`` into 10 Mb/s: the link's utilisation and the loss."""
    sc = fg.Scenario("cbr", duration=5 if quick else 30)
    sc.node("a").node("b")
    sc.link("a", "b", "10Mbps", "10ms", fg.queue("fifo", limit=5))
    sc.flow("a", "b", fg.source("cbr", rate=rate_mbps * 1e6))
    res = sc.run()
    flow = res.flows.iloc[0]
    loss = flow["dropped_pkts"] / flow["offered_pkts"]
    return {"utilisation": res.ports.iloc[0]["utilisation"], "loss": loss}


CBR_RATES_MBPS = (5.0, 20.0)
SEEDS = {"mm1": 11, "md1": 12}


def _cases(selected: list[str], packets: int, quick: bool) -> list[Case]:
    cases = [
        Case(f"{name}-{rho}", queue_case, (rho, name == "mm1", packets, SEEDS[name]))
        for name in ("mm1", "md1")
        if name in selected
        for rho in LOADS
    ]
    if "cbr" in selected:
        cases += [Case(f"cbr-{rate}", cbr_case, (rate, quick)) for rate in CBR_RATES_MBPS]
    return cases


def _mm1(report: Report, values: dict, tol: Tolerance, points: list) -> None:
    for rho in LOADS:
        v = values[f"mm1-{rho}"]
        exp = f"M/M/1 rho={rho}"
        report.add(Row(exp, "mean number in system", rho / (1 - rho), v["mean_system_pkts"], tol))
        sojourn = 1e3 * SERVICE_S / (1 - rho)
        report.add(Row(exp, "mean sojourn (ms)", sojourn, 1e3 * v["mean_delay_s"], tol))
        points.append(("M/M/1", rho, v["mean_system_pkts"]))


def _md1(report: Report, values: dict, tol: Tolerance, points: list) -> None:
    for rho in LOADS:
        v = values[f"md1-{rho}"]
        lq = rho**2 / (2 * (1 - rho))
        exp = f"M/D/1 rho={rho}"
        report.add(Row(exp, "mean queue (waiting)", lq, v["mean_queue_pkts"], tol))
        wait = 1e3 * lq * SERVICE_S / rho
        report.add(Row(exp, "mean wait (ms)", wait, 1e3 * v["mean_wait_s"], tol))
        points.append(("M/D/1", rho, v["mean_queue_pkts"] + rho))


def _cbr(report: Report, values: dict) -> None:
    for rate_mbps in CBR_RATES_MBPS:
        v = values[f"cbr-{rate_mbps}"]
        exp = f"CBR {rate_mbps:g} Mb/s on 10 Mb/s"
        if rate_mbps < 10:
            util = v["utilisation"]
            report.add(Row(exp, "utilisation", rate_mbps / 10, util, Tolerance(relative=0.001)))
        else:
            loss = v["loss"]
            report.add(Row(exp, "drop rate", 1 - 10 / rate_mbps, loss, Tolerance(relative=0.01)))


def figure(points: list) -> Figure:
    """Mean number in system against load: the closed forms and fairgate's points."""
    fig = Figure(figsize=(6, 4), layout="constrained")
    ax = fig.subplots()
    grid = [x / 100 for x in range(5, 96)]
    ax.plot(grid, [r / (1 - r) for r in grid], color="C0", lw=1, label="M/M/1 theory")
    ax.plot(grid, [r + r**2 / (2 * (1 - r)) for r in grid], color="C1", lw=1, label="M/D/1 theory")
    for model, colour in (("M/M/1", "C0"), ("M/D/1", "C1")):
        xs = [rho for m, rho, _ in points if m == model]
        ys = [v for m, _, v in points if m == model]
        ax.scatter(xs, ys, color=colour, zorder=3, label=f"{model} fairgate")
    ax.set_xlabel("load rho")
    ax.set_ylabel("mean number in system")
    ax.set_yscale("log")
    ax.legend()
    return fig


def run(
    out_dir: Path,
    experiment: str | None = None,
    quick: bool = False,
    progress: bool = False,
    client: Any = None,
) -> Report:
    """Runs the selected experiments' simulations as cases on the executor (``client``)."""
    report = Report("queueing", TITLE, SOURCE)
    packets = 200_000 if quick else 2_000_000
    tol = Tolerance(relative=0.05 if quick else 0.02)
    points: list = []
    selected = [experiment] if experiment else EXPERIMENTS
    values, errors = run_cases(_cases(selected, packets, quick), client, progress, "queueing")
    if errors:
        failures = "; ".join(f"{key}: {error}" for key, error in errors.items())
        raise SimulationError(f"queueing cases failed: {failures}")
    if "mm1" in selected:
        _mm1(report, values, tol, points)
    if "md1" in selected:
        _md1(report, values, tol, points)
    if "cbr" in selected:
        _cbr(report, values)
    if points:
        out_dir.mkdir(parents=True, exist_ok=True)
        report.figures.append(save(figure(points), out_dir / "queueing_number_in_system.png"))
    report.notes.append(
        f"{packets:,} packets per queueing run ({HEAVY_LOAD_FACTOR}x at load 0.9), Poisson "
        "arrivals, seeds 11 (M/M/1) and 12 (M/D/1); exponential sizes are rounded to bytes."
    )
    return report

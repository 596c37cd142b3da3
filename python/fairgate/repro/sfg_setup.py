"""The two scenarios of the SFG-PI paper [Chung06, §4] for its seven schemes.

The dumbbell: a 10 Mb/s bottleneck with a 500 KB queue, round-trip times uniform in
[60, 1000] ms per sender, ECN NewReno with 1000-byte packets, 50 reverse FTP flows and forward
FTP flows whose number changes every phase (10-50-100-200-400-400-200-100-50-10, 200 s each).
Scenario 2 adds five 2 Mb/s CBR flows from 100 s to 1700 s. ``scale`` and ``phase`` shrink the
flow counts and the phases together for short runs (the CBR times follow the phases).

Not yet here: the 300 web sessions (the web workload is not in the core yet), so the load of
each phase is below the paper's.
"""

from __future__ import annotations

from typing import Any

from fairgate.scenario import Scenario, link_params, queue, source

BOTTLENECK = "left->right"
QUEUE_BYTES = 500_000
PHASE_FLOWS = (10, 50, 100, 200, 400, 400, 200, 100, 50, 10)
REVERSE_FLOWS = 50
CBR_FLOWS = 5
CBR_RATE = "2Mbps"
CBR_START_PHASES, CBR_STOP_PHASES = 0.5, 8.5

# RED as the paper sets it for RED-PD and CHOKe: 50-300 packets, max_p 0.15, w_q 0.002, gentle.
PAPER_RED = {"min_th": 50, "max_th": 300, "max_p": 0.15, "w_q": 0.002, "gentle": True}
DROP_TAIL = queue("fifo", limit=QUEUE_BYTES, limit_bytes=QUEUE_BYTES)
PI = queue("pi", limit=QUEUE_BYTES, limit_bytes=QUEUE_BYTES)

SCHEMES: dict[str, dict[str, Any]] = {
    "DT": DROP_TAIL,
    "PI": PI,
    # Bins of 25 packets: the docs page's ceil(limit / bins) for the paper's 500 packets.
    "SFB": queue("sfb", limit=QUEUE_BYTES, limit_bytes=QUEUE_BYTES, bin_size=25),
    "CHOKe": queue(
        "choke",
        red={**PAPER_RED, "limit": QUEUE_BYTES, "limit_bytes": QUEUE_BYTES},
        draws="subregions",
    ),
    "RED-PD": queue("red_pd", red={**PAPER_RED, "limit": QUEUE_BYTES, "limit_bytes": QUEUE_BYTES}),
    # p_e as the text defines it: the overflow loss rate of drop-tail, PI's reported probability.
    "SFG": queue("sfg", inner=DROP_TAIL, notification="measured"),
    "SFG-PI": queue("sfg", inner=PI, notification="reported"),
}
"""Scheme name -> bottleneck queue; every parameter not given is the docs page's default."""


def phase_groups(scale: float) -> list[tuple[int, int, int, int]]:
    """(first flow, end flow, first phase, end phase) of each group of forward FTP flows.

    Flow i runs in every phase whose count exceeds i, so each group starts at the phase where
    the count first passes it and stops where the count falls below it again."""
    counts = sorted(set(PHASE_FLOWS))
    groups = []
    low = 0
    for count in counts:
        high = max(low + 1, round(count * scale))
        active = [k for k, c in enumerate(PHASE_FLOWS) if c >= count]
        groups.append((low, high, active[0], active[-1] + 1))
        low = high
    return groups


def scenario(
    scheme: str, cbr: bool = False, phase: float = 200.0, scale: float = 1.0, seed: int = 1
) -> Scenario:
    """Scenario 1 (``cbr=False``) or 2 for one of :data:`SCHEMES`."""
    groups = phase_groups(scale)
    forward = groups[-1][1]
    reverse = max(1, round(REVERSE_FLOWS * scale))
    hosts = max(forward, reverse) + (CBR_FLOWS if cbr else 0)
    name = f"sfg-{'cbr' if cbr else 'tcp'}-{scheme.lower()}"
    sc = Scenario(name, duration=phase * len(PHASE_FLOWS), sample_interval=1.0, seed=seed)
    sc.dumbbell(
        senders=hosts,
        bottleneck=link_params("10Mbps", "10ms", SCHEMES[scheme]),
        access=link_params("100Mbps", "1ms"),
        rtt={"dist": "uniform", "min": "60ms", "max": "1000ms"},
    )
    tcp = source("tcp", cc="newreno", mss=960, ecn=True)
    for low, high, first, end in groups:
        start = {"dist": "uniform", "min": first * phase, "max": first * phase + 1}
        for i in range(low, high):
            sc.flow(f"s{i}", f"d{i}", tcp, name=f"ftp{i}", start=start, stop=end * phase)
    for i in range(reverse):
        sc.flow(
            f"d{i}", f"s{i}", tcp, name=f"rev{i}", start={"dist": "uniform", "min": 0, "max": 1}
        )
    if cbr:
        cbr_source = source("cbr", rate=CBR_RATE, size=1000)
        for k in range(CBR_FLOWS):
            i = hosts - CBR_FLOWS + k
            sc.flow(
                f"s{i}",
                f"d{i}",
                cbr_source,
                name=f"cbr{k}",
                start=CBR_START_PHASES * phase,
                stop=CBR_STOP_PHASES * phase,
            )
    return sc

"""The two scenarios of the SFG-PI paper [Chung06, §4] for its seven schemes.

The dumbbell: a 10 Mb/s bottleneck with a 500 KB queue, round-trip times uniform in
[60, 1000] ms per sender, ECN NewReno with 1000-byte packets, 50 reverse FTP flows and forward
FTP flows whose number changes every phase (10-50-100-200-400-400-200-100-50-10, 200 s each).
300 forward web sessions (WebTraf) start evenly over the first 30 s and open no new page
after 1850 s, when the paper's web flows end. Scenario 2 adds five 2 Mb/s CBR flows from 100 s
to 1700 s. ``scale`` and ``phase`` shrink the flow and session counts and the phases together
for short runs (the CBR and web times follow the phases).

Decisions (docs/reproductions/sfg.md): the web sessions run on 30 server hosts of their own,
10 sessions each, so they draw their round-trip times as the FTP senders do; the TCP options
are ns-2's as the paper ran them, set here so fairgate's defaults do not move the runs.
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
WEB_SESSIONS = 300
SESSIONS_PER_WEB_HOST = 10
WEB_START_WINDOW_S = 30.0
WEB_STOP_PHASES = 9.25
# ns-2's TCP as the paper ran it: 1000-byte packets, ECN NewReno, no delayed ACKs, no
# timestamps, 10 ms ticks; a lost SYN waits ns-2's initial 3-s timeout and its backoff carries
# over to the first data segment; an ECN-Echo halves the window down to one segment and, at one
# segment, waits for the retransmit timer (ns-2's TcpAgent::ecn and slowdown, RFC 3168); a
# sender never gives up (ns-2's agents have no retry limit). The initial window is ns-2's
# windowInit_ of 2 (after the SYN, as ns-2's syn_ and delay_growth_ send it); ns-2's window_ of
# 20 packets is not what the paper ran (it would cap the 10-flow phase at about half the link),
# so the advertised window is one that never binds: above the longest path's 1.25 MB
# bandwidth-delay product plus the 500 KB queue.
TCP = {
    "cc": "newreno",
    "mss": 960,
    "ecn": True,
    "delayed_ack": False,
    "timestamps": False,
    "granularity": 0.01,
    "initial_rto": 1.0,
    "min_rto": 1.0,
    "syn_rto": 3.0,
    "lost_syn_rto": "ns3",
    "ecn_floor": "one_segment",
    "max_retries": 1_000_000,
    "initial_window": 2,
    "rwnd": 2_000_000,
    "window_scale": 5,
}

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


def web_hosts(scale: float) -> int:
    return max(1, round(WEB_SESSIONS * scale / SESSIONS_PER_WEB_HOST))


def add_web(sc: Scenario, first_host: int, hosts: int, stop: float) -> None:
    """``hosts`` web flows of SESSIONS_PER_WEB_HOST sessions, servers s{i} -> clients d{i}."""
    web = source(
        "web",
        sessions=SESSIONS_PER_WEB_HOST,
        start_window=WEB_START_WINDOW_S,
        tcp=TCP,
    )
    for k in range(hosts):
        i = first_host + k
        start = WEB_START_WINDOW_S * k / (hosts * SESSIONS_PER_WEB_HOST)  # all evenly spread
        sc.flow(f"s{i}", f"d{i}", web, name=f"web{k}", start=start, stop=stop)


def scenario(
    scheme: str,
    cbr: bool = False,
    phase: float = 200.0,
    scale: float = 1.0,
    seed: int = 1,
    web: bool = True,
) -> Scenario:
    """Scenario 1 (``cbr=False``) or 2 for one of :data:`SCHEMES`; ``web=False`` leaves out
    the web sessions."""
    groups = phase_groups(scale)
    forward = groups[-1][1]
    reverse = max(1, round(REVERSE_FLOWS * scale))
    web_count = web_hosts(scale) if web else 0
    hosts = max(forward, reverse) + (CBR_FLOWS if cbr else 0) + web_count
    name = f"sfg-{'cbr' if cbr else 'tcp'}-{scheme.lower()}"
    sc = Scenario(
        name,
        duration=phase * len(PHASE_FLOWS),
        sample_interval=1.0,
        seed=seed,
        record_drops="all",
    )
    sc.phase_edges([k * phase for k in range(1, len(PHASE_FLOWS))])
    sc.dumbbell(
        senders=hosts,
        bottleneck=link_params("10Mbps", "10ms", SCHEMES[scheme]),
        access=link_params("100Mbps", "1ms"),
        rtt={"dist": "uniform", "min": "60ms", "max": "1000ms"},
    )
    tcp = source("tcp", **TCP)
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
            i = max(forward, reverse) + web_count + k
            sc.flow(
                f"s{i}",
                f"d{i}",
                cbr_source,
                name=f"cbr{k}",
                start=CBR_START_PHASES * phase,
                stop=CBR_STOP_PHASES * phase,
            )
    if web_count:
        add_web(sc, max(forward, reverse), web_count, WEB_STOP_PHASES * phase)
    return sc

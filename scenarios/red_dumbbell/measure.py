"""Runs the RED dumbbells and prints bottleneck utilisation, mean queue and drop counts.

    python scenarios/red_dumbbell/measure.py            # as written, 1993 rules, ns-3 set-up
    python scenarios/red_dumbbell/measure.py --plain    # as written only (older builds)
    python scenarios/red_dumbbell/measure.py --ns2      # beside ns-2 2.35 (`ns` on PATH)
    python scenarios/red_dumbbell/measure.py --ns2 --tcp-defaults   # both with ns-3's TCP

`--tcp-defaults` replaces the TCP options the scenarios pin (those of the ns-2 comparison: no
timestamps, no delayed ACKs, 10 ms ticks) by fairgate's defaults, which are ns-3's (timestamps,
delayed ACKs every second segment with a 200 ms timer, 1 ms ticks); with `--ns2` the ns-2
script runs the same options (timestamps, a delayed-ACK sink, 1 ms ticks).

The 1993 rules switch RED's reference options back to the 1993 pseudo-code (the behaviour
before they existed, so one build shows both). The ns-3 set-up adds a one-packet device queue
under RED on the bottleneck (ns-3's point-to-point device) and splits each flow's extra delay
evenly between its two access links.
Run it with the interpreter of the build to measure (e.g. `.venv/bin/python`). With `--ns2`
both simulators run the same evenly spaced RTTs (20-200 ms) split evenly over the access links,
fairgate as written and ns-2 with `ns2_red_dumbbell.tcl`.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
from pathlib import Path

import fairgate as fg

HERE = Path(__file__).parent
SCENARIOS = ("red_dumbbell_10.toml", "red_dumbbell_100.toml")
NS3_SETUP = ("topology.bottleneck.device_queue=1", 'topology.rtt_split="even"')
RED = "topology.bottleneck.queue."
FLOYD93_RULES = tuple(
    RED + option
    for option in (
        "wait=false",
        "skip_short_queue=false",
        'count_rule="floyd93"',
        'idle_decay="floyd93"',
    )
)
TCP_DEFAULTS = (
    "flows[0].source.timestamps=true",
    "flows[0].source.delayed_ack=true",
    'flows[0].source.granularity="1ms"',
)
COLUMNS = ("utilisation", "mean_queue_pkts", "drops_early", "drops_forced", "drops_overflow")


def measure(path: Path, overrides: tuple[str, ...]) -> dict[str, float]:
    """One run: the bottleneck's figures and the data flows' loss-recovery counts."""
    results = fg.run_file(path, list(overrides))
    ports = results.ports.set_index("port")
    row = {name: float(ports.loc["left->right", name]) for name in COLUMNS}
    data = results.flows[results.flows["role"] == "data"]
    row["timeouts"] = float(data["timeouts"].sum())
    row["fast_retransmits"] = float(data["fast_retransmits"].sum())
    return row


def even_rtts(n: int) -> list[float]:
    """n round-trip times in seconds, evenly spaced over 20-200 ms."""
    return [0.02 + 0.18 * i / max(n - 1, 1) for i in range(n)]


def ns2_rows(duration: str, tcp: tuple[str, ...]) -> None:
    """fairgate and ns-2 on the same evenly spaced RTTs, one Markdown row each; `tcp` holds
    the TCP overrides (empty, or TCP_DEFAULTS for both simulators with ns-3's TCP)."""
    ns = shutil.which("ns")
    seconds = float(duration.rstrip("s"))
    print("| flows | simulator | utilisation | mean_queue_pkts | drops_early | other drops |")
    print("|---|---|---|---|---|---|")
    for name, n in zip(SCENARIOS, (10, 100), strict=True):
        rtts = even_rtts(n)
        listed = "[" + ", ".join(f'"{r * 1000:.6f}ms"' for r in rtts) + "]"
        overrides = (f"topology.rtt={listed}", 'topology.rtt_split="even"')
        row = measure(HERE / name, overrides + tcp + (f'simulation.duration="{duration}"',))
        other = row["drops_forced"] + row["drops_overflow"]
        print(
            f"| {n} | fairgate | {row['utilisation']:.3f} | {row['mean_queue_pkts']:.3f} "
            f"| {row['drops_early']:.0f} | {other:.0f} |"
        )
        if ns is None:
            continue
        script = str(HERE / "ns2_red_dumbbell.tcl")
        args = [ns, script, str(n), " ".join(f"{r:.6f}" for r in rtts), str(seconds)]
        args += ["ns3tcp"] if tcp else []
        words = subprocess.run(args, capture_output=True, text=True, check=True).stdout.split()
        figures = dict(zip(words[::2], words[1::2], strict=True))
        print(
            f"| {n} | ns-2 | {figures['utilisation']} | {figures['mean_queue_pkts']} "
            f"| {figures['drops_early']} | {figures['other_drops']} |"
        )


def main() -> None:
    """Prints one Markdown row per scenario and set-up."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--plain", action="store_true", help="run the scenarios as written only")
    parser.add_argument("--duration", default=None, help="override simulation.duration")
    parser.add_argument("--ns2", action="store_true", help="fairgate beside ns-2 on even RTTs")
    parser.add_argument(
        "--tcp-defaults", action="store_true", help="fairgate's (ns-3's) TCP defaults"
    )
    parser.add_argument("--seeds", type=int, default=1, help="mean ± sd over seeds 1..N")
    args = parser.parse_args()
    tcp = TCP_DEFAULTS if args.tcp_defaults else ()
    if args.ns2:
        ns2_rows(args.duration or "60s", tcp)
        return
    setups: list[tuple[str, tuple[str, ...]]] = [("as written", ())]
    if not args.plain:
        setups += [("1993 rules", FLOYD93_RULES), ("ns-3 set-up", NS3_SETUP)]
    extra = tcp + ((f'simulation.duration="{args.duration}"',) if args.duration else ())
    header = ("scenario", "set-up", *COLUMNS, "timeouts", "fast_retransmits")
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    for name in SCENARIOS:
        for label, overrides in setups:
            rows = [
                measure(HERE / name, overrides + extra + (f"simulation.seed={seed}",))
                for seed in range(1, args.seeds + 1)
            ]
            cells = [cell([r[c] for r in rows], c in COLUMNS[:2]) for c in header[2:]]
            print(f"| {name} | {label} | " + " | ".join(cells) + " |")


def cell(values: list[float], fractional: bool) -> str:
    """One value, or mean ± sample standard deviation over seeds."""
    digits = 3 if fractional else 0
    mean = statistics.fmean(values)
    if len(values) == 1:
        return f"{mean:.{digits}f}"
    return f"{mean:.{digits}f} ± {statistics.stdev(values):.{digits}f}"


if __name__ == "__main__":
    main()

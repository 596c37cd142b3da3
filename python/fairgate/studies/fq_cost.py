"""[Vaidyanathan99, §2.3-2.6]: the per-packet cost of fair queueing at a gateway.

The model charges each arriving packet with flow classification, tag computation, flow state
and scheduler service, as functions of the number N(t) of active flows (table 2.1): WFQ
c + 2N + log2(2N), start-time FQ c + 1 + N + log2(2N), DRR c + N, stochastic FQ 1 + N. The
thesis measured N(t) on Internet traces; here N(t) is measured at the bottleneck of a
simulated mix of many on/off sources, with the flow timeout of [Vaidyanathan99, §2.1].
The Rust core records the port, counts active flows and applies the model.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from fairgate import _core
from fairgate.checks import number, out_folder, shown, text_value

TITLE = "Per-packet cost of WFQ, start-time FQ, DRR and stochastic FQ over time"
PORT = "left->right"
TIMEOUT_S = 0.5
INTERVAL_S = 0.5
EFFICIENCY = 0.99
MEAN_COLLIDING = 2.0
MAX_FLOWS = 100_000
"""The most sources :func:`scenario` writes: the scale the engine is built and measured for
(each is a flow entry of the text)."""


def scenario(flows: int = 60, duration_s: float = 60.0) -> str:
    """A dumbbell whose bottleneck carries `flows` bursty on/off sources (TOML text) for
    `duration_s` seconds."""
    flows = int(number("flows", flows, 1, MAX_FLOWS, integer=True))
    duration_s = number("duration_s", duration_s, 0, low_open=True)
    lines = [
        'name = "fq-cost"',
        f'[simulation]\nduration = "{duration_s}s"\nseed = 1\nsample_interval = "1s"',
        '[topology]\nkind = "dumbbell"',
        f"senders = {flows}",
        'bottleneck = { rate = "10Mbps", delay = "10ms", queue = { kind = "fifo", limit = 200 } }',
        'access = { rate = "100Mbps", delay = "1ms", queue = { kind = "fifo", limit = 1000 } }',
    ]
    for i in range(flows):
        lines.append(
            f'[[flows]]\nname = "f{i}"\nsrc = "s{i}"\ndst = "d{i}"\n'
            'source = { kind = "onoff", rate = "1Mbps", '
            'on = { dist = "exponential", mean = "0.5s" }, '
            'off = { dist = "exponential", mean = "3s" } }'
        )
    return "\n".join(lines) + "\n"


def cost_table(text: str, port: str = PORT) -> pd.DataFrame:
    """One row per (sample time, discipline): active flows and the cost by component, from
    the scenario ``text`` (TOML) run with a recorder at ``port`` ("from->to"). Ctrl-C stops
    it."""
    text = text_value(text, "text")
    if not isinstance(port, str):
        raise _core.ScenarioError(f"`port`: got {shown(port)}, expected a port's name (from->to)")
    rows = _core.fq_cost_study(
        text,
        port,
        key="flow",
        timeout_s=TIMEOUT_S,
        interval_s=INTERVAL_S,
        efficiency=EFFICIENCY,
        mean_colliding=MEAN_COLLIDING,
    )
    return pd.DataFrame(rows)


def run(out_dir: Path, quick: bool = False) -> str:
    """Runs the study, writes the CSV table and a Markdown summary; returns the summary."""
    out_dir = out_folder(out_dir)
    duration_s = 10.0 if quick else 60.0
    table = cost_table(scenario(duration_s=duration_s))
    table.to_csv(out_dir / "fq_cost.csv", index=False)
    summary = table.groupby("discipline")[["active", "total"]].agg(["mean", "max"])
    lines = [
        f"# {TITLE}",
        "",
        f"{duration_s:g} s simulated{' (--quick)' if quick else ''}, "
        f"port {PORT}, flow timeout {TIMEOUT_S:g} s, samples every {INTERVAL_S:g} s, "
        f"hash efficiency {EFFICIENCY:g}, {MEAN_COLLIDING:g} colliding flows searched",
        "",
        "```",
        summary.round(3).to_string(),
        "```",
    ]
    text = "\n".join(lines) + "\n"
    (out_dir / "fq_cost.md").write_text(text, encoding="utf-8")
    return text

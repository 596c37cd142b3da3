"""Fair-queueing overhead on a real packet trace [Vaidyanathan99, ch. 2]: the passive
trace-driven gateway of §2.5.2 (the core's ``studies::trace_gateway``) over a trace's first
packets, for the experiments of §2.6:

- E2.1, the flow inactivity timeout (10, 5, 1, 0 s) with flow definition f1 (table 2.2,
  fig. 2.3);
- E2.2, flow aggregation f0..f3 with timeout 0 (table 2.3, fig. 2.4);
- E2.3, packets by protocol (table 2.4);
- E2.4, table 2.1's operations per arriving packet over time for WFQ, start-time FQ and DRR
  (fig. 2.5) and DRR against stochastic FQ (fig. 2.6), flow definition f0, timeout 0.

The thesis used the first 500,000 packets of DEC-PKT-1 and FIXWEST, which are not available
here; its numbers are printed beside the trace's own for reference, and its qualitative
claims are checked on the trace (``docs/studies/trace_fq.md``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd
from matplotlib.figure import Figure

from fairgate import _core
from fairgate.checks import fields_named, number, out_folder, path_value, shown

TITLE = "FQ overhead on a real trace: timeouts, aggregation, protocols, cost (--trace FILE)"
TIMEOUTS_S = [10.0, 5.0, 1.0, 0.0]
KEYS = ["f0", "f1", "f2", "f3"]
INTERVAL_S = 0.1
"""The thesis sampled every 100-200 ms (§2.6)."""
RATE_BPS = 1.544e6
"""The output line (T1); the thesis does not give its line speed (decision on the docs page)."""
PACKETS = 500_000
QUICK_PACKETS = 10_000

PAPER_TIMEOUT = pd.DataFrame(
    {
        "timeout_s": [10.0, 5.0, 1.0, 0.0] * 2,
        "trace": ["DEC-PKT-1"] * 4 + ["FIXWEST"] * 4,
        "max_flows": [364, 304, 238, 192, 14220, 8792, 2913, 589],
        "flow_creations": [9247, 13417, 32741, 83904, 57892, 70881, 105054, 178481],
        "collisions": [6590, 4376, 3237, 2738, 229222, 220902, 177489, 113173],
        "hash_efficiency": [
            0.986820,
            0.991248,
            0.993526,
            0.994524,
            0.541502,
            0.558144,
            0.644980,
            0.773627,
        ],
    }
)
"""Table 2.2 (flow type f1, first 500,000 packets; "flow operations" printed as N*2)."""
PAPER_KEYS = pd.DataFrame(
    {
        "key": ["f3", "f2", "f1", "f0"] * 2,
        "trace": ["DEC-PKT-1"] * 4 + ["FIXWEST"] * 4,
        "max_flows": [24, 42, 192, 269, 47, 58, 589, 795],
        "flow_creations": [194585, 154524, 83904, 83174, 187582, 179047, 178481, 191026],
        "collisions": [0, 0, 2738, 74691, 2818, 4582, 113173, 116982],
        "hash_efficiency": [1, 1, 0.994524, 0.850618, 0.994363, 0.990835, 0.773627, 0.766008],
    }
)
"""Table 2.3 (timeout 0, first 500,000 packets)."""
PAPER_PROTOCOLS = pd.DataFrame(
    {
        "trace": ["FIXWEST", "DEC-PKT-1"],
        "packets": [1008918, 3362373],
        "tcp": [270643, 2153462],
        "udp": [409160, 829759],
        "other": [329115, 379152],
    }
)
"""Table 2.4 (whole traces)."""


def gateway(trace: Path, key: str, timeout_s: float, **options: Any) -> dict[str, Any]:
    """One pass of the passive gateway: ``summary``, ``active`` [(t, N)] and ``costs``.
    ``options``: ``rate_bps``, ``buckets``, ``packets``, ``format`` (the core checks their
    ranges; their kinds are checked here, where the binding raised TypeError)."""
    trace_path = path_value(trace, "trace")
    if not isinstance(key, str):
        raise _core.ScenarioError(f"`key`: got {shown(key)}, expected f0..f3 or a key's name")
    checked = {name: _gateway_option(name, value) for name, value in options.items()}
    with fields_named(GATEWAY_NAMES):
        return _core.trace_study(
            str(trace_path),
            key=key,
            timeout_s=number("timeout_s", timeout_s),
            interval_s=INTERVAL_S,
            **checked,
        )


GATEWAY_NAMES = {"timeout": "timeout_s", "rate": "rate_bps"}
"""The core's trace reader's fields by the names ``gateway`` takes them under."""

RUN_NAMES = {"format": "trace_format"}
"""The same for ``run``, whose format is ``trace_format``."""


def _gateway_option(name: str, value: object) -> Any:
    if name == "rate_bps":
        return number("rate_bps", value)
    if name in ("buckets", "packets"):
        most = _core.TRACE_MAX_BUCKETS if name == "buckets" else _core.TRACE_MAX_PACKETS
        return int(number(name, value, 1, most, integer=True))
    if name == "format":
        if value is not None and not isinstance(value, str):
            raise _core.ScenarioError(f"`format`: got {shown(value)}, expected a format's name")
        return value
    raise _core.ScenarioError(
        f"`{name}`: unknown option, expected one of rate_bps, buckets, packets, format"
    )


def _row(summary: dict[str, Any], **label: Any) -> dict[str, Any]:
    keep = ["max_flows", "mean_flows", "flow_creations", "collisions", "hash_efficiency"]
    return {**label, **{k: summary[k] for k in keep}}


def timeout_sweep(trace: Path, **options: Any) -> tuple[pd.DataFrame, pd.DataFrame]:
    """E2.1: table 2.2's rows and N(t) per timeout, flow definition f1."""
    rows, series = [], []
    for timeout in TIMEOUTS_S:
        out = gateway(trace, "f1", timeout, **options)
        rows.append(_row(out["summary"], timeout_s=timeout))
        series += [(timeout, t, n) for t, n in out["active"]]
    return pd.DataFrame(rows), pd.DataFrame(series, columns=["timeout_s", "time_s", "active"])


def key_sweep(trace: Path, **options: Any) -> tuple[pd.DataFrame, pd.DataFrame, dict[str, Any]]:
    """E2.2 and E2.4: table 2.3's rows, N(t) per definition, and f0's full output."""
    rows, series, f0 = [], [], {}
    for key in KEYS:
        out = gateway(trace, key, 0.0, **options)
        rows.append(_row(out["summary"], key=key))
        series += [(key, t, n) for t, n in out["active"]]
        f0 = out if key == "f0" else f0
    return pd.DataFrame(rows), pd.DataFrame(series, columns=["key", "time_s", "active"]), f0


def protocols(summary: dict[str, Any]) -> pd.DataFrame:
    """E2.3: packets by protocol, with the non-IP records the reader skipped."""
    row = {k: summary[k] for k in ["packets", "tcp", "udp", "other", "non_ip"]}
    for k in ["tcp", "udp", "other"]:
        row[f"{k}_share"] = row[k] / max(row["packets"], 1)
    return pd.DataFrame([row])


def checks(timeouts: pd.DataFrame, keys: pd.DataFrame, costs: pd.DataFrame) -> pd.DataFrame:
    """The thesis's qualitative claims, each with whether the trace bears it out."""
    by_key = keys.set_index("key")
    mean = costs.groupby("discipline")["total"].mean()
    falling = timeouts["max_flows"].is_monotonic_decreasing
    rising = timeouts["flow_creations"].is_monotonic_increasing
    rows = [
        (
            "§2.6.1: max flows fall as the timeout falls (10, 5, 1, 0 s)",
            falling,
            ", ".join(map(str, timeouts["max_flows"])),
        ),
        (
            "§2.6.1: flow operations rise as the timeout falls",
            rising,
            ", ".join(map(str, timeouts["flow_creations"])),
        ),
        (
            "§2.6.1: hash efficiency improves as the timeout falls",
            timeouts["hash_efficiency"].is_monotonic_increasing,
            ", ".join(f"{e:.4f}" for e in timeouts["hash_efficiency"]),
        ),
        (
            "§2.6.2: max flows f0 >= f1 >= f2 and f3 (aggregation)",
            by_key.at["f0", "max_flows"]
            >= by_key.at["f1", "max_flows"]
            >= max(by_key.at["f2", "max_flows"], by_key.at["f3", "max_flows"]),
            ", ".join(f"{k} {by_key.at[k, 'max_flows']}" for k in KEYS),
        ),
        (
            "§2.6.2: sources (f3) fewer than destinations (f2)",
            by_key.at["f3", "max_flows"] < by_key.at["f2", "max_flows"],
            f"f3 {by_key.at['f3', 'max_flows']}, f2 {by_key.at['f2', 'max_flows']}",
        ),
        (
            "§2.6.4: mean cost WFQ > start-time FQ > DRR >= stochastic FQ",
            mean["wfq"] > mean["stfq"] > mean["drr"] >= mean["stochastic_fq"],
            ", ".join(f"{d} {mean[d]:.3f}" for d in ["wfq", "stfq", "drr", "stochastic_fq"]),
        ),
        (
            "§2.6.4: stochastic FQ saves under 5% of DRR's cost",
            (mean["drr"] - mean["stochastic_fq"]) / mean["drr"] < 0.05,
            f"{(mean['drr'] - mean['stochastic_fq']) / mean['drr']:.2%}",
        ),
    ]
    frame = pd.DataFrame(rows, columns=["claim", "holds", "measured"])
    return frame.assign(holds=frame["holds"].map({True: "yes", False: "no"}))


def _figure(series: pd.DataFrame, by: str, title: str, path: Path) -> None:
    fig = Figure(figsize=(8, 4))
    ax = fig.add_subplot()
    for label, group in series.groupby(by, sort=False):
        ax.plot(group["time_s"], group["active"], lw=0.8, label=f"{by} {label}")
    ax.set(xlabel="time (s)", ylabel="active flows", title=title)
    ax.legend()
    fig.savefig(path, dpi=120, bbox_inches="tight")


def _cost_figure(costs: pd.DataFrame, disciplines: list[str], title: str, path: Path) -> None:
    fig = Figure(figsize=(8, 4))
    ax = fig.add_subplot()
    for d in disciplines:
        one = costs[costs["discipline"] == d]
        ax.plot(one["time_s"], one["total"], lw=0.8, label=d)
    ax.set(xlabel="time (s)", ylabel="operations per arriving packet", title=title)
    ax.legend()
    fig.savefig(path, dpi=120, bbox_inches="tight")


def _table(frame: pd.DataFrame) -> str:
    lines = ["| " + " | ".join(map(str, frame.columns)) + " |", "|" + "---|" * frame.shape[1]]
    for row in frame.itertuples(index=False):
        cells = [f"{v:.6g}" if isinstance(v, float) else str(v) for v in row]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def _markdown(name: str, tables: dict[str, pd.DataFrame], head: str) -> str:
    parts = [f"# {TITLE}", "", head, ""]
    for title, table in tables.items():
        parts += [f"## {title}", "", _table(table), ""]
    parts.append(f"Figures: {name}_fig2_3.png .. {name}_fig2_6.png")
    return "\n".join(parts) + "\n"


def run(
    out_dir: Path,
    quick: bool = False,
    trace: Path | None = None,
    trace_format: str | None = None,
    rate_bps: float = RATE_BPS,
) -> str:
    """Runs E2.1-E2.4 on ``trace``; writes CSV tables, Markdown and figures into ``out_dir``."""
    out_dir = out_folder(out_dir)
    if trace is None:
        raise _core.ScenarioError(
            "`trace`: got none, expected a packet trace (pcap, pcapng, ERF, TSH, ITA .tcp or "
            "CSV; see docs/studies/trace_fq.md)"
        )
    trace = Path(path_value(trace, "trace"))
    number("rate_bps", rate_bps, low=1.0, high=1e13)
    packets = QUICK_PACKETS if quick else PACKETS
    options = {"format": trace_format, "rate_bps": rate_bps, "packets": packets}
    with fields_named(RUN_NAMES):
        timeouts, timeout_series = timeout_sweep(trace, **options)
        keys, key_series, f0 = key_sweep(trace, **options)
    costs = pd.DataFrame(f0["costs"])
    summary = f0["summary"]
    tables = {
        "E2.1 timeout, f1 (table 2.2)": timeouts,
        "E2.2 flow definition, timeout 0 (table 2.3)": keys,
        "E2.3 packets by protocol (table 2.4)": protocols(summary),
        "E2.4 mean and max operations per packet, f0 (fig. 2.5, 2.6)": costs.groupby(
            "discipline", as_index=False
        )["total"].agg(["mean", "max"]),
        "The thesis's claims on this trace": checks(timeouts, keys, costs),
        "Thesis, table 2.2 (DEC-PKT-1 and FIXWEST)": PAPER_TIMEOUT,
        "Thesis, table 2.3": PAPER_KEYS,
        "Thesis, table 2.4": PAPER_PROTOCOLS,
    }
    name = "trace_fq"
    timeouts.to_csv(out_dir / f"{name}_timeouts.csv", index=False)
    keys.to_csv(out_dir / f"{name}_keys.csv", index=False)
    costs.to_csv(out_dir / f"{name}_costs.csv", index=False)
    pd.concat([timeout_series, key_series]).to_csv(out_dir / f"{name}_active.csv", index=False)
    _figure(
        timeout_series,
        "timeout_s",
        "Active flows by timeout, f1 (fig. 2.3)",
        out_dir / f"{name}_fig2_3.png",
    )
    _figure(
        key_series,
        "key",
        "Active flows by flow definition, timeout 0 (fig. 2.4)",
        out_dir / f"{name}_fig2_4.png",
    )
    _cost_figure(
        costs,
        ["wfq", "stfq", "drr"],
        "Cost per packet, f0 (fig. 2.5)",
        out_dir / f"{name}_fig2_5.png",
    )
    _cost_figure(
        costs,
        ["drr", "stochastic_fq"],
        "DRR and stochastic FQ, f0 (fig. 2.6)",
        out_dir / f"{name}_fig2_6.png",
    )
    head = (
        f"trace {trace.name}: first {summary['packets']:,} IP packets over "
        f"{summary['duration_s']:.3f} s; line {rate_bps / 1e6:g} Mb/s (utilisation "
        f"{summary['utilisation']:.3f}); samples every {INTERVAL_S:g} s; "
        f"{summary['reordered']} packets out of time order"
    )
    if summary["utilisation"] > 1:
        head += (
            "\n\n**The line is overloaded** (utilisation above 1): its queue grows through the "
            "whole trace, so at timeout 0 flows stay while queued; a faster `--rate` gives the "
            "load of the trace's own link."
        )
    text = _markdown(name, tables, head)
    (out_dir / f"{name}.md").write_text(text, encoding="utf-8")
    return text

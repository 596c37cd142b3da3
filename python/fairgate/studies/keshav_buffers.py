"""[Keshav91, ch. 3]: the cost of Keshav's four buffer structures for Fair Queueing.

N Tahoe sources of maximum window W share one FQ trunk with B buffers; the arrivals and
departures are replayed through LINK (ordered list scanned from the tail), TREE (unbalanced
binary tree), HEAP (double heap) and PERC (per-conversation queues with head and tail heaps),
counting elementary operations (link traversals or heap exchanges) per insertion.

The text does not list its 35 (N, B) points; the axes below follow its figure 3.4:
A entirely underloaded (W N < B), B entirely overloaded, C, D and E crossing the locus W N = B.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd
from matplotlib.figure import Figure

from fairgate import _core
from fairgate.checks import number, out_folder
from fairgate.plot import save

TITLE = "Keshav's FQ buffer structures: operations per insertion over (N, B)"
WINDOW = 8
TRACE_S = 2500.0
QUICK_TRACE_S = 200.0
AXES: dict[str, list[tuple[int, int]]] = {
    "A": [(2, 256), (4, 256), (8, 256), (12, 256), (16, 256), (24, 256), (30, 256)],
    "B": [(8, 32), (12, 32), (16, 32), (24, 32), (32, 32), (48, 32), (64, 32)],
    "C": [(2, 64), (4, 64), (6, 64), (8, 64), (10, 64), (12, 64), (16, 64)],
    "D": [(4, 128), (8, 128), (12, 128), (16, 128), (20, 128), (24, 128), (32, 128)],
    "E": [(2, 32), (4, 48), (8, 64), (12, 80), (16, 96), (24, 128), (32, 160)],
}
STRUCTURES = ["link", "tree", "heap", "perc"]


def sweep(window: int = WINDOW, trace_s: float = TRACE_S) -> pd.DataFrame:
    """One row per (axis, N, B, structure): N Tahoe sources of maximum window ``window``
    packets (1 to 68), traces of ``trace_s`` seconds (above 0, at most 1.8e7). Ctrl-C stops it."""
    window = int(number("window", window, 1, _core.MAX_TAHOE_WINDOW, integer=True))
    trace_s = number("trace_s", trace_s, 0, low_open=True)
    frames = []
    for axis, points in AXES.items():
        rows = _core.keshav_study(points, window, trace_s)
        frame = pd.DataFrame(rows)
        frame.insert(0, "axis", axis)
        frame.insert(3, "load", ["overload" if r["drops"] else "underload" for r in rows])
        frames.append(frame)
    table = pd.concat(frames, ignore_index=True)
    table["window_x_n_over_b"] = window * table["conversations"] / table["buffers"]
    return table


def findings(table: pd.DataFrame) -> list[tuple[str, bool]]:
    """The text's qualitative findings, checked on the sweep."""
    wide = table.pivot_table(
        index=["axis", "conversations", "buffers"],
        columns="structure",
        values="mean_ops_per_insert",
    )
    drops = table.groupby(["axis", "conversations", "buffers"])["drops"].max()
    under = wide[drops.reindex(wide.index).eq(0)]
    over = wide[drops.reindex(wide.index).gt(0)]
    return [
        ("PERC < HEAP at every point", bool((wide["perc"] < wide["heap"]).all())),
        ("PERC < TREE at every point", bool((wide["perc"] < wide["tree"]).all())),
        ("HEAP within 10x of PERC at every point", bool((wide["heap"] < 10 * wide["perc"]).all())),
        (
            "LINK cheapest wherever nothing is dropped",
            bool((under["link"] <= under[["tree", "heap", "perc"]].min(axis=1)).all()),
        ),
        (
            "TREE dearer in underload than in overload (mean)",
            bool(under["tree"].mean() > over["tree"].mean()),
        ),
    ]


def figure(table: pd.DataFrame) -> Figure:
    """Mean operations per insertion against conversations, one panel per axis."""
    fig = Figure(figsize=(15, 3.6), layout="constrained")
    axes = fig.subplots(1, len(AXES), sharey=True)
    for ax, axis in zip(axes, AXES, strict=True):
        part = table[table["axis"] == axis]
        for structure in STRUCTURES:
            rows = part[part["structure"] == structure]
            ax.plot(
                rows["conversations"],
                rows["mean_ops_per_insert"],
                marker="o",
                ms=3,
                label=structure.upper(),
            )
        ax.set_yscale("log")
        ax.set_title(f"axis {axis}")
        ax.set_xlabel("conversations N")
        ax.grid(alpha=0.3)
    axes[0].set_ylabel("mean operations per insertion")
    axes[0].legend(fontsize="small")
    return fig


def run(out_dir: Path, quick: bool = False, window: int = WINDOW) -> str:
    """Runs the sweep, writes CSV, Markdown and the figure; returns the printed summary."""
    out_dir = out_folder(out_dir)
    table = sweep(window, QUICK_TRACE_S if quick else TRACE_S)
    table.to_csv(out_dir / "keshav_buffers.csv", index=False)
    png = save(figure(table), out_dir / "keshav_buffers.png", dpi=110)
    wide = table.pivot_table(
        index=["axis", "conversations", "buffers", "drops"],
        columns="structure",
        values=["mean_ops_per_insert", "max_ops_per_insert"],
    )
    checks = findings(table)
    lines = [
        f"# {TITLE}",
        "",
        f"W = {window}, trace {QUICK_TRACE_S if quick else TRACE_S:g} s",
        "",
        "```",
        wide.round(3).to_string(),
        "```",
        "",
        "## Findings of [Keshav91, ch. 3]",
        "",
    ]
    lines += [f"- {'holds' if ok else 'DOES NOT HOLD'}: {text}" for text, ok in checks]
    lines += ["", f"![mean cost per axis]({png.name})"]
    text = "\n".join(lines) + "\n"
    (out_dir / "keshav_buffers.md").write_text(text, encoding="utf-8")
    return text

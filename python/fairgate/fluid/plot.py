"""Figures of the fluid models: transmit queue and marking probability over time per scheme
(as [Byun07, Figs 4.12, 4.13, 6.33, 6.34]) and model-versus-simulation-versus-paper bars (as
[Byun07, Fig. 4.14]). Each returns the Figure and writes a PNG only when a path is given.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from pathlib import Path

import pandas as pd
from matplotlib.figure import Figure

from fairgate._core import ScenarioError
from fairgate.checks import shown
from fairgate.plot import image_path, save


def _save(fig: Figure, path: str | Path | None) -> Figure:
    if path is not None:
        save(fig, path)
    return fig


def _frame(table: object, columns: Iterable[str], name: str, made_by: str) -> pd.DataFrame:
    """``table`` when it is a frame with ``columns``; otherwise ScenarioError naming ``name``."""
    needed = list(columns)
    if not isinstance(table, pd.DataFrame) or not set(needed) <= set(table.columns):
        raise ScenarioError(
            f"{name}: got {shown(table)}, expected a frame with the columns "
            f"{', '.join(needed)} (as {made_by} returns)"
        )
    return table


def _labels(values: pd.Series) -> list[str]:
    """A bar's label: its value, or nothing where it has none (no bar is drawn there)."""
    return ["" if math.isnan(v) else f"{v:.0f}" for v in values.astype(float)]


def solutions_figure(
    solutions: Mapping[str, pd.DataFrame], path: str | Path | None = None, title: str | None = None
) -> Figure:
    """Transmit queue q and marking probability p against time, one line per named solution."""
    if not isinstance(solutions, Mapping):
        raise ScenarioError(
            f"solutions: got {shown(solutions)}, expected a mapping of a name to a solution"
        )
    for name, frame in solutions.items():
        _frame(frame, ("time_s", "q", "p"), f"solutions[{name!r}]", "fairgate.fluid.solve")
    if path is not None:
        image_path(path)
    fig = Figure(figsize=(9, 5.5), layout="constrained")
    ax_q, ax_p = fig.subplots(2, 1, sharex=True)
    for name, frame in solutions.items():
        ax_q.plot(frame["time_s"], frame["q"], label=name, linewidth=0.8)
        ax_p.plot(frame["time_s"], frame["p"], label=name, linewidth=0.8)
    ax_q.set_ylabel("transmit queue (packets)")
    ax_p.set_ylabel("marking probability")
    ax_p.set_xlabel("time (s)")
    ax_q.legend(loc="upper right")
    fig.suptitle(title or "fluid model")
    return _save(fig, path)


def improvement_figure(table: pd.DataFrame, path: str | Path | None = None) -> Figure:
    """Bars of the queue improvement (%) per statistic: model, simulation (if given) and paper;
    no bar where a change has no value (NaN)."""
    needed = ("statistic", "model_pct", "simulation_pct", "paper_pct")
    table = _frame(table, needed, "table", "fairgate.fluid.improvement_table")
    if path is not None:
        image_path(path)
    fig = Figure(figsize=(6, 4), layout="constrained")
    ax = fig.subplots()
    columns = [c for c in ("model_pct", "simulation_pct", "paper_pct") if table[c].notna().any()]
    width = 0.8 / len(columns)
    for offset, column in enumerate(columns):
        positions = [i + offset * width for i in range(len(table))]
        heights = table[column].astype(float)
        ax.bar(positions, heights, width, label=column.removesuffix("_pct"))
    ax.set_xticks(
        [i + width * (len(columns) - 1) / 2 for i in range(len(table))], table["statistic"]
    )
    ax.axhline(0.0, color="black", linewidth=0.6)
    ax.set_ylabel("AVQRED vs RED, queue change (%)")
    ax.legend()
    return _save(fig, path)


SOURCES = (
    ("paper", "paper's emulation"),
    ("simulation", "fairgate packet-level"),
    ("model", "model"),
)


def model_simulation_figure(table: pd.DataFrame, path: str | Path | None = None) -> Figure:
    """Transmit-queue mean and std per scheme, the paper's emulation, the packet-level
    simulation and the model side by side, one panel per statistic (as [Byun07, Figs 6.35,
    6.36]). ``table``: columns ``scheme``, ``statistic`` (``mean``/``std``) and one per source
    in ``SOURCES`` (NaN where a source has no value: no bar is drawn there)."""
    needed = ("scheme", "statistic", *(column for column, _ in SOURCES))
    table = _frame(table, needed, "table", "the satellite reproduction's model table")
    if path is not None:
        image_path(path)
    fig = Figure(figsize=(9, 4), layout="constrained")
    axes = fig.subplots(1, 2)
    width = 0.8 / len(SOURCES)
    for ax, stat in zip(axes, ("mean", "std"), strict=True):
        rows = table[table["statistic"] == stat].reset_index(drop=True)
        for offset, (column, label) in enumerate(SOURCES):
            positions = [i + offset * width for i in range(len(rows))]
            heights = rows[column].astype(float)
            bars = ax.bar(positions, heights, width, label=label)
            ax.bar_label(bars, labels=_labels(heights), fontsize=7)
        ax.set_xticks([i + width for i in range(len(rows))], rows["scheme"])
        ax.set_ylabel(f"transmit queue {stat} (packets)")
        ax.set_yscale("symlog", linthresh=100.0)
    axes[0].legend()
    return _save(fig, path)

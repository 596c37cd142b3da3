"""Cell-level GFR networks [Goyal98]: run the Rust core's ATM model (AAL5 edges, named GFR
VCs, cell links, a backbone buffer discipline, SACK TCPs) from a scenario with an ``[atm]``
section (TOML text or the same as a dict) and get its results as data frames. The section is
documented in docs/models/gfr.md."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from fairgate import _core
from fairgate._core import ScenarioError
from fairgate.checks import shown, text_value
from fairgate.display import simulated_bar
from fairgate.runner import override_list
from fairgate.scenario import toml_text

PAPER_VCS_A = [12_000, 24_000, 36_000, 48_000, 60_000]
"""MCR set A of [Goyal98, §4], cells/s (51% of the OC-3c cell rate)."""
PAPER_VCS_B = [20_000, 40_000, 60_000, 80_000, 100_000]
"""MCR set B of [Goyal98, §4], cells/s (85%)."""


TABLES = ("vcs", "refused", "occupancy")
"""The tables a cell network's run writes, one Parquet file each."""


@dataclass
class AtmRun:
    """The outcome of one cell-level run."""

    vcs: pd.DataFrame
    """Per VC: goodput, excess over MCR, mean occupancy, drops (one row per VC, in order)."""
    refused: pd.DataFrame
    """Frames refused at the backbone buffer by VC, DFBA region (0 = no regions) and CLP."""
    occupancy: pd.DataFrame
    """Backbone buffer occupancy per VC over time (time, vc, cells)."""
    total_goodput_mbps: float
    window_s: float
    backbone_cells: int
    events: int

    def save(self, out_dir: str | Path) -> list[Path]:
        """Writes ``summary.json`` and the vcs, refused and occupancy tables (Parquet) into
        ``out_dir``, checked as ``fairgate run --out`` is and locked while written, as
        :meth:`fairgate.Results.save` does; returns the paths written."""
        from fairgate.runner import check_out_dir
        from fairgate.sweeps.store import writing

        out = check_out_dir(out_dir, "out_dir")
        with writing(out, "out_dir"):
            return self.write_into(out, "out_dir")

    def write_into(self, out: Path, name: str = "--out") -> list[Path]:
        """Writes the run into ``out`` for a caller that has checked it and holds its lock:
        staged in a hidden folder and moved in, the summary last, when all are complete,
        replacing an earlier single run of either kind (its tables, store and figures); a
        directory holding a sweep raises ScenarioError naming ``name``."""
        from fairgate.sweeps.store import write_single_run

        tables = {table: getattr(self, table) for table in TABLES}
        return write_single_run(out, name, tables, summary(self))


def paper_vcs(mcrs: list[int], tcps_per_vc: int) -> list[dict[str, Any]]:
    """Five VCs named vc1..vc5 with the given MCRs (cells/s) and TCPs each."""
    return [{"name": f"vc{i + 1}", "mcr": m, "tcps": tcps_per_vc} for i, m in enumerate(mcrs)]


def run_atm(
    scenario: dict[str, Any] | str, overrides: Sequence[str] = (), progress: bool = False
) -> AtmRun:
    """Runs the cell-level GFR network of a scenario with an ``[atm]`` section (a dict or TOML
    text, with ``key.path=value`` overrides); bad input raises ``fairgate.ScenarioError``.
    ``progress`` draws a bar of simulated seconds once the run takes more than 2 s."""
    if isinstance(scenario, dict):
        scenario = toml_text(scenario)
    text = text_value(scenario, "scenario", "TOML text or its dict")
    overrides = override_list(overrides)
    with simulated_bar(progress, 1.0, "simulating cells") as bar:

        def advanced(now_s: float, end_s: float) -> None:
            bar.total = end_s
            bar.update(now_s - bar.n)

        raw = json.loads(_core.atm_run(text, overrides, advanced))
    names = [v["name"] for v in raw["vcs"]]
    occupancy = pd.DataFrame(raw["occupancy"])
    occupancy["vc"] = occupancy["vc"].map(dict(enumerate(names)))
    refused = pd.DataFrame(raw["refused"], columns=["vc", "region", "clp", "frames"])
    return AtmRun(
        vcs=pd.DataFrame(raw["vcs"]),
        refused=refused,
        occupancy=occupancy,
        total_goodput_mbps=raw["total_goodput_mbps"],
        window_s=raw["window_s"],
        backbone_cells=raw["backbone_cells"],
        events=raw["events"],
    )


def is_atm(scenario: dict[str, Any]) -> bool:
    """Whether a validated scenario describes a cell network (it has an ``[atm]`` section)."""
    if not isinstance(scenario, dict):
        raise ScenarioError(f"scenario: got {shown(scenario)}, expected a validated scenario")
    return scenario.get("atm") is not None


def summary(run: AtmRun) -> dict[str, Any]:
    """The run's totals, as ``fairgate run`` writes them to ``summary.json``."""
    if not isinstance(run, AtmRun):
        raise ScenarioError(f"run: got {shown(run)}, expected an AtmRun (as run_atm returns)")
    return {
        "kind": "atm",
        "total_goodput_mbps": run.total_goodput_mbps,
        "window_s": run.window_s,
        "backbone_cells": run.backbone_cells,
        "events": run.events,
    }

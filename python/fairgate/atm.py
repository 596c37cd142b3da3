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
from fairgate.checks import text_value
from fairgate.runner import override_list
from fairgate.scenario import toml_text

PAPER_VCS_A = [12_000, 24_000, 36_000, 48_000, 60_000]
"""MCR set A of [Goyal98, §4], cells/s (51% of the OC-3c cell rate)."""
PAPER_VCS_B = [20_000, 40_000, 60_000, 80_000, 100_000]
"""MCR set B of [Goyal98, §4], cells/s (85%)."""


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


def paper_vcs(mcrs: list[int], tcps_per_vc: int) -> list[dict[str, Any]]:
    """Five VCs named vc1..vc5 with the given MCRs (cells/s) and TCPs each."""
    return [{"name": f"vc{i + 1}", "mcr": m, "tcps": tcps_per_vc} for i, m in enumerate(mcrs)]


def run_atm(scenario: dict[str, Any] | str, overrides: Sequence[str] = ()) -> AtmRun:
    """Runs the cell-level GFR network of a scenario with an ``[atm]`` section (a dict or TOML
    text, with ``key.path=value`` overrides); bad input raises ``fairgate.ScenarioError``."""
    if isinstance(scenario, dict):
        scenario = toml_text(scenario)
    text = text_value(scenario, "scenario", "TOML text or its dict")
    raw = json.loads(_core.atm_run(text, override_list(overrides)))
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
    return scenario.get("atm") is not None


def summary(run: AtmRun) -> dict[str, Any]:
    """The run's totals, as ``fairgate run`` writes them to ``summary.json``."""
    return {
        "kind": "atm",
        "total_goodput_mbps": run.total_goodput_mbps,
        "window_s": run.window_s,
        "backbone_cells": run.backbone_cells,
        "events": run.events,
    }


def save(run: AtmRun, out: Path) -> list[Path]:
    """Writes ``summary.json`` and the vcs, refused and occupancy tables (Parquet) into
    ``out``; returns the paths written."""
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for name in ("vcs", "refused", "occupancy"):
        path = out / f"{name}.parquet"
        getattr(run, name).to_parquet(path, index=False, compression="zstd")
        written.append(path)
    path = out / "summary.json"
    path.write_text(json.dumps(summary(run), indent=2, sort_keys=True) + "\n", encoding="utf-8")
    return [*written, path]

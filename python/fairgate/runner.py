"""Loading and running scenarios through the core, with a progress bar on long runs."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from tqdm import tqdm

from fairgate import _core
from fairgate.results import Results

PROGRESS_STEPS = 200
"""A run is advanced in this many chunks so the progress bar can move."""


def _read(path: str | Path) -> str:
    try:
        return Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise _core.ScenarioError(f"scenario file {str(path)!r} does not exist") from None
    except (IsADirectoryError, UnicodeDecodeError, PermissionError) as err:
        raise _core.ScenarioError(f"cannot read scenario file {str(path)!r}: {err}") from None


def validate_text(text: str, overrides: Sequence[str] = ()) -> dict[str, Any]:
    """Validates TOML text; returns the scenario as the core understood it."""
    return json.loads(_core.validate(text, list(overrides)))


def validate_file(path: str | Path, overrides: Sequence[str] = ()) -> dict[str, Any]:
    return validate_text(_read(path), overrides)


def _advance(sim: Any, progress: bool) -> None:
    end = sim.end_s
    with tqdm(
        total=round(end, 6),
        unit="s",
        desc="simulating",
        delay=2.0,
        disable=not progress,
        leave=False,
        bar_format="{l_bar}{bar}| {n:.3g}/{total:.3g} s simulated [{elapsed}<{remaining}]",
    ) as bar:
        for step in range(1, PROGRESS_STEPS + 1):
            target = end * step / PROGRESS_STEPS
            sim.run_until(target)
            bar.update(round(sim.now_s - bar.n, 9))


def run_text(text: str, overrides: Sequence[str] = (), progress: bool = False) -> Results:
    """Runs TOML text with ``key.path=value`` overrides; returns the results."""
    sim = _core.load(text, list(overrides))
    _advance(sim, progress)
    return Results.from_core(sim.results())


def run_file(path: str | Path, overrides: Sequence[str] = (), progress: bool = False) -> Results:
    return run_text(_read(path), overrides, progress)


def registry() -> dict[str, list[str]]:
    """The registered queue disciplines and sources."""
    return dict(_core.registry())

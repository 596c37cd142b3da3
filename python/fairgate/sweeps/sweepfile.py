"""Sweep files: a TOML file naming a scenario and its axes.

::

    scenario = "showcase.toml"          # relative to this file
    seeds = 5                           # or a list: [1, 7, 9]
    set = ["simulation.duration=20s"]   # fixed overrides (optional)

    [grid]                              # axes combined as a product
    "bottleneck.queue.kind" = ["fifo", "red"]
    buffer = { path = "bottleneck.queue.limit", values = [10, 20, 50] }

    [[zip]]                             # axes that vary together, one table per group
    "flows[0].source.rate" = ["1Mbps", "2Mbps"]
    "flows[1].source.rate" = ["3Mbps", "4Mbps"]
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fairgate._core import ScenarioError
from fairgate.checks import clipped, path_value, shown
from fairgate.runner import is_regular_file, read_text_file, toml_document
from fairgate.sweeps.axes import Axis

KEYS = {"scenario", "seeds", "set", "grid", "zip"}


@dataclass
class SweepFile:
    scenario: Path
    seeds: int | list[int] | None = None
    overrides: list[str] = field(default_factory=list)
    grid: list[Axis] = field(default_factory=list)
    zipped: list[list[Axis]] = field(default_factory=list)


def is_sweep_file(doc: dict[str, Any]) -> bool:
    """A sweep file names its scenario; a scenario file never has a ``scenario`` key."""
    return "scenario" in doc


def _axis(name: str, spec: Any, where: str) -> Axis:
    if isinstance(spec, dict):
        unknown = set(spec) - {"path", "values"}
        if unknown or "values" not in spec:
            raise ScenarioError(f"`{where}`: expected a table with `values` and optional `path`")
        path, values = spec.get("path", name), spec["values"]
    else:
        path, values = name, spec
    if not isinstance(values, list) or not isinstance(path, str):
        raise ScenarioError(f"`{where}`: got {shown(values)}, expected a list of values")
    return Axis(name, path, tuple(values))


def _axes(table: Any, where: str) -> list[Axis]:
    if not isinstance(table, dict):
        raise ScenarioError(f"`{where}`: expected a table of axes")
    return [_axis(name, spec, f"{where}.{name}") for name, spec in table.items()]


def _check_scenario_file(path: Path, given: str) -> None:
    """Names the key when the sweep file's ``scenario`` is missing or not a regular file."""
    try:
        if path.is_file():
            return
        problem = "does not exist" if not path.exists() else "is not a regular file"
    except OSError as err:
        problem = f"the system refuses ({err.strerror})"
    raise ScenarioError(
        f"`scenario`: got {shown(given)} ({clipped(str(path))}), which {problem}; "
        "expected the path of a scenario file, relative to the sweep file"
    )


def _check_not_a_sweep_file(path: Path, given: str) -> None:
    """Names the key when the sweep file's ``scenario`` is a sweep file itself (its own name,
    say), which the scenario reader would refuse as a scenario with an unknown `scenario` key.
    A file that cannot be parsed is left for the scenario reader to name."""
    try:
        doc = toml_document(read_text_file(path))
    except ScenarioError:
        return
    if is_sweep_file(doc):
        raise ScenarioError(
            f"`scenario`: got {shown(given)}, which is a sweep file (it has a `scenario` key); "
            "expected a scenario file"
        )


def load(path: Path) -> SweepFile:
    """Reads a sweep file; raises ScenarioError naming the bad key."""
    return from_doc(toml_document(read_text_file(path, "sweep file")), base_of(path))


def base_of(path: Path) -> Path:
    """Where the paths a sweep file names are relative to: its folder, or the current
    directory for a file that is a pipe (``/dev/stdin``, a shell's ``<(...)``), whose
    folder (``/dev``, ``/proc/self/fd``) says nothing of where the user is."""
    return path.parent if is_regular_file(path) else Path(".")


def from_doc(doc: dict[str, Any], base: Path) -> SweepFile:
    unknown = sorted(set(doc) - KEYS)
    if unknown:
        raise ScenarioError(
            f"`{unknown[0]}`: unknown key, expected one of {', '.join(sorted(KEYS))}"
        )
    scenario = doc.get("scenario")
    if not isinstance(scenario, str) or not scenario.strip():
        raise ScenarioError(
            f"`scenario`: got {shown(scenario)}, expected the path of a scenario file (a string)"
        )
    scenario_path = base / path_value(scenario, "scenario")
    _check_scenario_file(scenario_path, scenario)
    _check_not_a_sweep_file(scenario_path, scenario)
    seeds = doc.get("seeds")
    if seeds is not None and not isinstance(seeds, int | list):
        raise ScenarioError(f"`seeds`: got {shown(seeds)}, expected a count or a list of seeds")
    overrides = doc.get("set", [])
    if not isinstance(overrides, list) or not all(isinstance(o, str) for o in overrides):
        raise ScenarioError('`set`: expected a list of "key.path=value" strings')
    zipped = doc.get("zip", [])
    if not isinstance(zipped, list):
        raise ScenarioError("`zip`: expected an array of tables ([[zip]])")
    return SweepFile(
        scenario=scenario_path,
        seeds=seeds,
        overrides=list(overrides),
        grid=_axes(doc.get("grid", {}), "grid"),
        zipped=[_axes(group, f"zip[{i}]") for i, group in enumerate(zipped)],
    )

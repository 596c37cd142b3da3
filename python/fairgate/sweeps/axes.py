"""Sweep axes: which scenario values vary, how they combine, and the points they make.

An axis sets one scenario parameter path (``topology.bottleneck.queue.limit``, or any unique
ending of it such as ``bottleneck.queue.limit``) to each of its values. Axes in one zip group
vary together; groups combine as a product; every combination runs once per seed. Every axis
value is checked by the core before any point runs, so a bad axis fails with its name.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import math
import re
import unicodedata
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any

from fairgate._core import ScenarioError
from fairgate.checks import UNSEEN_CATEGORIES, clipped, seed_value, shown
from fairgate.display import progress_bar
from fairgate.runner import toml_document, validate_text

RESERVED_COLUMNS = frozenset(
    {"point", "seed", "status", "error", "attempts", "scenario", "flow", "port"}
)
"""Column names the results store uses itself; an axis may not take one of them."""


@cache
def column_tables() -> dict[str, str]:
    """Every column of the store's summary, flows and ports tables, with its table's name:
    an axis is a column beside them (``goodput_bps`` as an axis name failed every point)."""
    from fairgate.results import written_columns
    from fairgate.sweeps.store import METRICS

    tables = {name: "summary" for name in METRICS}
    for table in ("ports", "flows"):
        tables.update({name: table for name in written_columns()[table]})
    return tables


@dataclass(frozen=True)
class Axis:
    """One varied parameter: the column ``name``, the scenario ``path`` and its values."""

    name: str
    path: str
    values: tuple[Any, ...]


@dataclass(frozen=True)
class Point:
    """One simulation of a sweep: axis values (in axis order) and a seed."""

    params: tuple[tuple[str, Any], ...]
    overrides: tuple[str, ...]
    seed: int

    @property
    def key(self) -> str:
        """Stable identity of the point: a digest of its parameters and seed."""
        canonical = json.dumps({"params": dict(self.params), "seed": self.seed}, sort_keys=True)
        return hashlib.sha256(canonical.encode()).hexdigest()[:16]

    def all_overrides(self) -> list[str]:
        return [*self.overrides, f"{SEED_PATH}={self.seed}"]


@dataclass(frozen=True)
class Grid:
    """Zip groups combined as a product, each combination run once per seed."""

    groups: tuple[tuple[Axis, ...], ...]
    seeds: tuple[int, ...]

    @property
    def axes(self) -> list[Axis]:
        return [axis for group in self.groups for axis in group]

    def points(self) -> list[Point]:
        rows = [list(zip(*(a.values for a in group), strict=True)) for group in self.groups]
        axes = self.axes
        enclosing = [sum(_steps_inside(a.path, b.path) is not None for b in axes) for a in axes]
        order = sorted(range(len(axes)), key=enclosing.__getitem__)  # a table before its fields
        points = []
        for combination in itertools.product(*rows):
            values = [v for group_values in combination for v in group_values]
            params = tuple((a.name, column_value(v)) for a, v in zip(axes, values, strict=True))
            overrides = tuple(f"{axes[i].path}={toml_literal(values[i])}" for i in order)
            points.extend(Point(params, overrides, seed) for seed in self.seeds)
        return points


def toml_literal(value: Any) -> str:
    """The value in TOML syntax, as an override's right-hand side."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isnan(value):
            return "nan"
        return repr(value) if math.isfinite(value) else ("inf" if value > 0 else "-inf")
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, list | tuple):
        return "[" + ", ".join(toml_literal(v) for v in value) + "]"
    if isinstance(value, dict):
        items = ", ".join(f"{json.dumps(str(k))} = {toml_literal(v)}" for k, v in value.items())
        return "{ " + items + " }"
    raise TypeError(f"{type(value).__name__} has no TOML form")


def column_value(value: Any) -> Any:
    """How a value is stored in its parameter column: tables and arrays as their TOML text."""
    return toml_literal(value) if isinstance(value, list | tuple | dict) else value


def parse_cli_values(text: str, axis: str) -> list[Any]:
    """``red,pfd``, ``10,20,50`` or ``[1,2],[3]``: TOML values separated by the commas outside
    brackets and quotes, bare words as strings. An empty value (``1,,2``, a trailing comma) is
    refused rather than dropped."""
    if not text.strip():
        return []
    parts = split_top_level(text)
    for index, part in enumerate(parts):
        if not part.strip():
            raise ScenarioError(
                f"axis `{axis}`: value {index + 1} of {len(parts)} is empty; "
                "expected VALUE1,VALUE2,... with no empty value"
            )
    values = [part.strip() for part in parts]
    for value in values:
        if _too_large_a_whole_number(value):
            raise ScenarioError(
                f"axis `{axis}`: got {clipped(value)}, expected a whole number from "
                f"{-(2**63)} to {2**63 - 1} (a float such as 1e23 for larger values)"
            )
        if _too_large_a_float(value):
            raise ScenarioError(
                f"axis `{axis}`: got {clipped(value)}, expected a number a float holds "
                "(magnitude up to 1.8e308)"
            )
    return [parse_cli_value(value, axis) for value in values]


def _too_large_a_float(text: str) -> bool:
    """A decimal number past a float's range (1e400): TOML refuses it, a float reads it as
    infinite (as the core's overrides decide)."""
    if not text or not all(c.isdigit() or c in ".eE+-" for c in text):
        return False
    try:
        return math.isinf(float(text))
    except ValueError:
        return False


def _too_large_a_whole_number(text: str) -> bool:
    """Digits TOML would read as a whole number but for their size: not a bare word (as the
    core's overrides decide; "0123", which TOML refuses, stays a word)."""
    digits = text[1:] if text[:1] in ("+", "-") else text
    return len(digits) > 18 and not digits.startswith("0") and digits.isascii() and digits.isdigit()


def split_top_level(text: str) -> list[str]:
    """``text`` split at the commas outside brackets, braces and quotes."""
    parts, depth, quote, start = [], 0, "", 0
    for i, char in enumerate(text):
        if quote:
            quote = "" if char == quote else quote
        elif char in "\"'":
            quote = char
        elif char in "[{":
            depth += 1
        elif char in "]}":
            depth -= 1
        elif char == "," and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    return [*parts, text[start:]]


def parse_cli_value(text: str, axis: str = "") -> Any:
    """A TOML value, or the text as a word; a value that opens an inline table or an array
    and does not parse is refused with TOML's message (as the core's ``--set`` does), not
    taken for a word that the scenario would refuse as "expected a table"."""
    try:
        return toml_document(f"v = {text}")["v"]
    except ScenarioError as err:
        inside = re.match(r"`v([.\[][^`]*)`: (.*)", err.args[0], re.DOTALL)
        if inside:  # a date inside a table or array: TOML, but no field takes one
            where = inside.group(1).removeprefix(".")
            message = f"axis `{axis}`: `{where}` of {clipped(text)}: {inside.group(2)}"
            raise ScenarioError(message) from None
        if text.lstrip().startswith(("{", "[")):
            raise ScenarioError(
                f"axis `{axis}`: got {clipped(text)}, which is not a TOML table or array "
                f"({err.args[0]}); expected TOML value syntax such as "
                '{ kind = "red", limit = 60 } or [1, 2]'
            ) from None
        return text


def parse_cli_axis(spec: str, option: str) -> Axis:
    """``PATH=V1,V2`` from ``--grid`` or ``--zip``."""
    path, sep, values = spec.partition("=")
    path = path.strip()
    if not sep or not path:
        raise ScenarioError(f"{option} {shown(spec)}: expected PATH=VALUE1,VALUE2,...")
    return Axis(path, path, tuple(parse_cli_values(values, path)))


def _paths(node: Any, prefix: str = "") -> Iterator[str]:
    """Every table key and array entry of a TOML document, as override paths."""
    if isinstance(node, dict):
        for key, child in node.items():
            here = f"{prefix}.{key}" if prefix else str(key)
            yield here
            yield from _paths(child, here)
    elif isinstance(node, list):
        for index, child in enumerate(node):
            if isinstance(child, dict | list):
                yield from _paths(child, f"{prefix}[{index}]")


def resolve_path(doc: dict[str, Any], path: str, axis: str) -> str:
    """The full path ``path`` names: itself if the scenario has it, else the unique path it
    ends. A key the scenario lacks is appended to its parent's full path and left for the
    core to accept (a default) or reject (naming the key)."""
    known = list(_paths(doc))
    if path in known:
        return path
    matches = [p for p in known if p.endswith("." + path)]
    if len(matches) > 1:
        endings = ", ".join(matches[:6])
        raise ScenarioError(f"axis `{axis}`: `{path}` is ambiguous, it ends {endings}")
    if matches:
        return matches[0]
    parent, dot, leaf = path.rpartition(".")
    if dot and "[" not in leaf:
        resolved = resolve_path(doc, parent, axis)
        if resolved in known:
            return f"{resolved}.{leaf}"
    return path


def _value_kind(value: Any) -> str:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list | tuple | dict):
        return "table or array"
    raise ScenarioError(f"got {type(value).__name__} {shown(value)}, expected a TOML value")


def _uniform(axis: Axis) -> Axis:
    """All values of one kind (ints among floats become floats), so a column has one type."""
    kinds = {_value_kind(v) for v in axis.values}
    if len(kinds) > 1:
        raise ScenarioError(f"values mix {' and '.join(sorted(kinds))}, expected one type")
    if any(isinstance(v, float) for v in axis.values) and kinds == {"number"}:
        return Axis(axis.name, axis.path, tuple(float(v) for v in axis.values))
    return axis


def _check_axis(axis: Axis) -> Axis:
    if not axis.values:
        raise ScenarioError(f"axis `{axis.name}`: empty, expected at least one value")
    if any(unicodedata.category(c) in UNSEEN_CATEGORIES for c in axis.name):
        raise ScenarioError(
            f"axis {shown(axis.name)}: expected a name without control characters or invisible "
            "ones (formatting such as U+200B or U+202E, line separators, private or "
            "unassigned), as a flow's name: it names a column of every table"
        )
    if axis.name.lower() in RESERVED_COLUMNS:  # SQL reads column names without case
        listed = ", ".join(sorted(RESERVED_COLUMNS))
        raise ScenarioError(f"axis `{axis.name}`: the name is reserved ({listed})")
    table = column_tables().get(axis.name.lower())
    if table is not None:
        raise ScenarioError(
            f"axis `{axis.name}`: the name is a column of the store's `{table}` table (SQL "
            "reads names without case), beside which each axis is a column of its own; "
            "expected another name (the same name failed every point with 'Duplicate column "
            "names', and one differing in case was renamed by `fairgate query`)"
        )
    try:
        return _uniform(axis)
    except ScenarioError as err:
        raise ScenarioError(f"axis `{axis.name}`: {err.args[0]}") from None


def _check_distinct(group: Sequence[Axis], option: str) -> None:
    """Two equal values of an axis (or tuples of a zipped group) would be one point run
    twice."""
    seen: dict[str, int] = {}
    for index, row in enumerate(zip(*(a.values for a in group), strict=True), 1):
        literal = ", ".join(toml_literal(v) for v in row)
        if literal in seen:
            names = " + ".join(f"`{a.name}`" for a in group)
            raise ScenarioError(
                f"{option} {names}: values {seen[literal]} and {index} are both {literal}, "
                "expected distinct values"
            )
        seen[literal] = index


def _check_group(group: Sequence[Axis], option: str) -> None:
    if not group:
        raise ScenarioError(f"{option}: a group with no axes, expected at least one axis")
    lengths = {a.name: len(a.values) for a in group}
    if len(set(lengths.values())) > 1:
        counts = ", ".join(f"`{k}` has {n}" for k, n in lengths.items())
        raise ScenarioError(f"{option}: zipped axes need equal lengths; {counts}")


def _validate_values(
    text: str, base: Sequence[str], group: Sequence[Axis], option: str, bar: Any
) -> None:
    """The core checks each value (each zipped tuple) on the scenario before anything runs.
    Two values that the core reads as one scenario (``"10s"`` and ``10``, ``"20Mbps"`` and
    ``20e6``) would run the same point twice, and are refused."""
    seen: dict[str, int] = {}
    for index, values in enumerate(zip(*(a.values for a in group), strict=True), 1):
        bar.update(1)
        overrides = [f"{a.path}={toml_literal(v)}" for a, v in zip(group, values, strict=True)]
        named = " + ".join(
            f"`{a.name}` = {toml_literal(v)}" for a, v in zip(group, values, strict=True)
        )
        try:
            scenario = validate_text(text, [*base, *overrides])
        except ScenarioError as err:
            raise ScenarioError(f"{option} {named}: {err.args[0]}") from None
        digest = hashlib.sha256(json.dumps(scenario, sort_keys=True).encode()).hexdigest()
        if digest in seen:
            raise ScenarioError(
                f"{option} {named}: value {index} gives the same scenario as value "
                f"{seen[digest]} (the same quantity in other units or spelling); expected "
                "values that differ"
            )
        seen[digest] = index


MAX_POINTS = 1_000_000
"""The most points (runs) one sweep may have: a million runs of even a second each keep two
cores busy for six days, and the list of points alone would grow past memory long before a
billion (``--seeds 1000000000`` was killed at 24 GB)."""


def check_point_count(groups: Sequence[Sequence[Axis]], seeds: int) -> None:
    """Refuses more than MAX_POINTS points, naming the longest axis or the seeds."""
    lengths = {group[0].name: len(group[0].values) for group in groups}
    points = math.prod(lengths.values()) * seeds
    if points <= MAX_POINTS:
        return
    name, length = max(lengths.items(), key=lambda item: item[1], default=("seeds", seeds))
    field = "seeds" if seeds >= length else f"axis `{name}`"
    count = f"{points:,}" if points < 10**18 else f"about 10^{len(str(points)) - 1}"
    raise ScenarioError(
        f"{field}: the sweep has {count} points (axis values x seeds), expected at most "
        f"{MAX_POINTS:,}"
    )


SEED_PATH = "simulation.seed"
"""Set by every point from ``seeds`` (after the axes), so an axis here would be overridden."""
LABELS = ("name", "description")
"""The scenario's own labels: they change no simulated value."""


def _check_varies_the_run(axis: Axis) -> None:
    """An axis that leaves the runs the same would run each seed once per value of the axis:
    one at ``simulation.seed`` (every point's seed comes from ``seeds``, set after the axes)
    or at a label of the scenario."""
    seed_inside = _steps_inside(SEED_PATH, axis.path)  # an axis at `simulation`, say
    holds_seed = seed_inside is not None and any(_holds(v, seed_inside) for v in axis.values)
    if axis.path == SEED_PATH or holds_seed:
        raise ScenarioError(
            f"axis `{axis.name}`: sets `{SEED_PATH}`, which each point takes from the seeds; "
            "expected the seeds as seeds (--seeds N, or a list in Python or a sweep file)"
        )
    if axis.path in LABELS:
        raise ScenarioError(
            f"axis `{axis.name}`: sets the scenario's `{axis.path}`, a label that changes no "
            "simulated value (every value would run the same simulations); expected a field "
            "of the network, its traffic or the simulation"
        )


def _check_names_distinct(names: list[str]) -> None:
    """Refuses an axis name given twice, or two that differ only in the case of their letters
    (SQL reads column names without case: `fairgate query` would show one of them renamed)."""
    first_named: dict[str, str] = {}
    for name in names:
        other = first_named.setdefault(name.lower(), name)
        if other == name and names.count(name) > 1:
            raise ScenarioError(f"axis `{name}`: given more than once")
        if other != name:
            raise ScenarioError(
                f"axis `{name}`: named as axis `{other}` but for the case of its letters; "
                "expected names that differ otherwise (SQL reads column names without case: "
                "`fairgate query` would show one of them renamed)"
            )


def build_grid(
    text: str,
    product: Sequence[Axis],
    zipped: Sequence[Sequence[Axis]],
    seeds: Sequence[int],
    base_overrides: Sequence[str] = (),
    progress: bool = False,
) -> Grid:
    """Resolves and checks every axis against the scenario ``text``; raises ScenarioError
    naming the axis at the first problem. The number of points is checked before the core
    checks each value (which takes about 0.1 ms a value); ``progress`` shows a bar while it
    does, after 2 s."""
    doc = toml_document(text)
    if not seeds:
        raise ScenarioError("seeds: empty, expected at least one seed")
    for index, seed in enumerate(seeds):
        seed_value(seed, f"seeds[{index}]")
    seen: set[int] = set()
    for seed in seeds:
        if seed in seen:
            raise ScenarioError(f"seeds: {seed} is given twice, expected distinct seeds")
        seen.add(seed)
    groups: list[tuple[Axis, ...]] = []
    given = [*(("axis", [a]) for a in product), *(("zip", z) for z in zipped)]
    options = [option for option, _ in given]
    for option, group in given:
        checked = tuple(
            Axis(a.name, resolve_path(doc, a.path, a.name), a.values)
            for a in map(_check_axis, group)
        )
        for axis in checked:
            _check_varies_the_run(axis)
        if option == "zip":
            _check_group(checked, option)
        _check_distinct(checked, option)
        groups.append(checked)
    check_point_count(groups, len(seeds))
    with progress_bar(
        progress,
        total=sum(len(group[0].values) for group in groups),
        desc="checking axis values",
        unit=" values",
        delay=2.0,
        leave=False,
    ) as bar:
        for option, group in zip(options, groups, strict=True):
            _validate_values(text, base_overrides, group, option, bar)
    _check_names_distinct([a.name for g in groups for a in g])
    by_path: dict[str, str] = {}
    for axis in (a for g in groups for a in g):
        if axis.path in by_path:
            raise ScenarioError(
                f"axis `{axis.name}`: sets `{axis.path}`, as axis `{by_path[axis.path]}` does; "
                "expected one axis per field"
            )
        by_path[axis.path] = axis.name
    _check_overrides_kept(base_overrides, by_path)
    _check_nested_axes([a for g in groups for a in g])
    return Grid(tuple(groups), tuple(seeds))


def _check_overrides_kept(overrides: Sequence[str], axis_of_path: dict[str, str]) -> None:
    """Refuses a fixed override of the field an axis sets: the axis's value is applied after
    it at every point, so the override was lost without a word (`--set bottleneck.rate=5Mbps`
    with an axis of that rate ran the axis's rates). One inside an axis's table is refused by
    the core; an axis inside an override's table refines it."""
    for override in overrides:
        path = override.partition("=")[0].strip()
        if path in axis_of_path:
            raise ScenarioError(
                f"axis `{axis_of_path[path]}`: sets `{path}`, which the fixed override "
                f"`{clipped(override)}` (--set, overrides= or a sweep file's `set`) sets too; "
                "expected one or the other (each point would run the axis's value, and the "
                "override would be lost)"
            )


def _check_nested_axes(axes: Sequence[Axis]) -> None:
    """An axis inside another's table (``bottleneck.queue.limit`` inside ``bottleneck.queue``)
    is applied after it, at each point, and so refines each of its values; a value of the
    outer axis that sets the same field is refused: the point would run the inner axis's
    value while the outer axis's column showed its own."""
    for inner in axes:
        for outer in axes:
            inside = _steps_inside(inner.path, outer.path)
            if inside is None:
                continue
            for index, value in enumerate(outer.values, 1):
                if _holds(value, inside):
                    raise ScenarioError(
                        f"axis `{inner.name}`: sets `{inner.path}`, which value {index} of axis "
                        f"`{outer.name}` ({clipped(toml_literal(value))}) sets too; expected one "
                        "axis to set it (the point would run this axis's value, and the other "
                        "axis's column would show its own)"
                    )


PATH_STEP = re.compile(r"\.([^.\[\]]+)|\[(\d+)\]")
"""One step of an override path after its first key: ``.key`` or ``[index]``."""


def _steps_inside(path: str, outer: str) -> list[str | int] | None:
    """The steps from ``outer`` down to ``path`` when ``path`` lies inside it, else None."""
    if not path.startswith(outer) or path[len(outer) : len(outer) + 1] not in (".", "["):
        return None
    rest = path[len(outer) :]
    return [key.strip() if key else int(index) for key, index in PATH_STEP.findall(rest)]


def _holds(value: Any, steps: Sequence[str | int]) -> bool:
    """Whether ``value`` (a table or array an axis sets) holds something at ``steps``."""
    for step in steps:
        if isinstance(step, int) and isinstance(value, list | tuple) and step < len(value):
            value = value[step]
        elif isinstance(step, str) and isinstance(value, dict) and step in value:
            value = value[step]
        else:
            return False
    return True

"""Mutants of every shipped scenario: one to three random edits of its parsed document (a number
or a number with a unit scaled by 0 to 10^6, a key deleted, a value replaced by an extreme or
wrongly typed one, a table by an array, a scalar by a table, a list entry repeated, a table
replaced by another shipped scenario's table under the same key), run for
the shortest duration the unmutated scenario validates with. Each mutant must be refused with
``ScenarioError`` or run to its end with every packet accounted for (``forked.run_forked``).
Where ``tests/test_extreme_fields.py`` sets one known field at a time, this reaches every
field of every shipped scenario, the Keshav and cell-network ones included, in combination.
A second kind of mutant leaves the text alone and gives one to three ``--set`` overrides, as a
user would: an existing path, a new key under it, or an index past a list's end, set to the
old value scaled or to an extreme or wrongly typed TOML value.
The default suite runs 200 mutants of each kind; ``-m slow`` 10,000 of each.
"""

from __future__ import annotations

import copy
import random
import re
import tomllib
from collections.abc import Iterator
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import fairgate as fg
from conftest import SCENARIOS
from fairgate.scenario import toml_text
from forked import run_forked

FILES = sorted(p for p in SCENARIOS.rglob("*.toml") if p.name != "pairs.toml")
DURATIONS = ["0.3s", "1s", "3s", "10s", "30s"]
EXTREMES: list[Any] = [0, -1, 0.5, 1e9, 4294967295, 2**63 - 1, 1e300, "1ps", "1e6s", "1e15bps"]
WRONG_TYPES: list[Any] = ["", "x", True, [], [1e300], {}, {"kind": "fifo"}, [{"a": 1}]]
FACTORS = [0, 0.001, 0.1, 0.5, 2, 10, 1000, 1e6]
OVERRIDE_VALUES = [
    "0",
    "-1",
    "1e300",
    str(2**63 - 1),
    "x",
    "true",
    "[]",
    "{}",
    "[1, 2]",
    '{ kind = "fifo" }',
    '"10ms"',
    "5Mbps",
    "",
    "nan",
    "inf",
    "[[1]]",
    "{ a = { b = 1 } }",
]
"""Override values as a user types them after ``=``: TOML syntax, bare words as strings."""
UNSET = ("simulation", "duration")
"""The one path overrides leave alone, so that a mutant runs for its short duration."""
GROSS_SHARE = 0.2
"""The share of edits that change a value's kind or remove it; the rest scale a number, so
that most mutants still run."""


def with_duration(doc: dict[str, Any], duration: str) -> dict[str, Any]:
    out = copy.deepcopy(doc)
    sim = out.setdefault("simulation", {})
    if isinstance(sim, dict):  # an edit may have made it something else: refused, as it is
        sim["duration"] = duration
        if "warmup" in sim:
            sim["warmup"] = "0.01s"
    return out


@cache
def shipped(path: Path) -> tuple[dict[str, Any], str]:
    """The scenario's document and the shortest of ``DURATIONS`` it validates with (its
    flows may start late)."""
    doc = tomllib.loads(path.read_text(encoding="utf-8"))
    for duration in DURATIONS:
        try:
            fg.validate_text(toml_text(with_duration(doc, duration)))
        except fg.ScenarioError:
            continue
        return doc, duration
    raise AssertionError(f"{path}: valid with none of {DURATIONS}")


@cache
def transplants() -> dict[str, list[Any]]:
    """Every table and list of the shipped scenarios by the key it sits under (``queue``,
    ``source``, ``gateway``, ``delay``, ``app``, ``buffer``, ...), to put in place of another
    scenario's value under the same key."""
    out: dict[str, list[Any]] = {}
    for path in FILES:
        doc, _ = shipped(path)
        for place in places(doc):
            value = doc
            for key in place:
                value = value[key]
            if isinstance(place[-1], str) and isinstance(value, dict | list):
                out.setdefault(place[-1], []).append(value)
    return out


def places(node: Any, prefix: tuple = ()) -> Iterator[tuple]:
    """The path of every value under ``node``."""
    items = node.items() if isinstance(node, dict) else enumerate(node)
    for key, value in items:
        yield (*prefix, key)
        if isinstance(value, dict | list):
            yield from places(value, (*prefix, key))


def scaled(value: Any, rng: random.Random) -> Any:
    """A number, or the number in front of a unit, times a random factor; a bool flipped."""
    factor = rng.choice(FACTORS)
    if isinstance(value, bool):
        return not value
    if isinstance(value, int):
        return int(value * factor)
    if isinstance(value, float):
        return value * factor
    if isinstance(value, str) and (m := re.fullmatch(r"([0-9]+\.?[0-9]*)(.*)", value)):
        return f"{float(m.group(1)) * factor:g}{m.group(2)}"
    return value


def edit(doc: dict[str, Any], rng: random.Random) -> None:
    """One random edit of ``doc`` in place."""
    path = rng.choice(list(places(doc)))
    parent = doc
    for key in path[:-1]:
        parent = parent[key]
    key, value = path[-1], parent[path[-1]]
    if rng.random() >= GROSS_SHARE:
        parent[key] = scaled(value, rng)
        return
    gross = rng.randrange(6)
    if gross == 5 and isinstance(key, str) and key in transplants():
        parent[key] = copy.deepcopy(rng.choice(transplants()[key]))
    elif gross == 0:
        del parent[key]
    elif gross == 1 and isinstance(value, dict):
        parent[key] = list(value.values())
    elif gross == 2 and not isinstance(value, dict | list):
        parent[key] = {"value": value}
    elif gross == 3 and isinstance(value, list) and value:
        value.append(copy.deepcopy(rng.choice(value)))
    else:  # a copy: one list put in two places could be put inside itself by a later edit
        parent[key] = copy.deepcopy(rng.choice(EXTREMES + WRONG_TYPES))


def mutant(path: Path, rng: random.Random) -> str:
    """The TOML text of one to three edits of the shipped scenario at ``path``."""
    doc, duration = shipped(path)
    doc = copy.deepcopy(doc)
    for _ in range(rng.randint(1, 3)):
        edit(doc, rng)
    return toml_text(with_duration(doc, duration))


def override_path(doc: dict[str, Any], rng: random.Random) -> tuple:
    """An existing path of ``doc``, a new key under one, or an index past a list's end."""
    path = rng.choice([p for p in places(doc) if p[: len(UNSET)] != UNSET])
    roll = rng.random()
    if roll < 0.2:
        return (*path, "extra")
    if roll < 0.3 and isinstance(path[-1], int):
        return (*path[:-1], path[-1] + rng.choice([1, 5, 1000]))
    return path


def dotted(path: tuple) -> str:
    """``path`` as ``--set`` spells it: ``flows[0].rate``."""
    out = ""
    for key in path:
        out += f"[{key}]" if isinstance(key, int) else f"{'.' if out else ''}{key}"
    return out


def override_value(doc: dict[str, Any], path: tuple, rng: random.Random) -> str:
    """The old value scaled, written as TOML, or an extreme or wrongly typed value."""
    value: Any = doc
    try:
        for key in path:
            value = value[key]
    except (KeyError, IndexError, TypeError):  # a new key, an index past the end
        return rng.choice(OVERRIDE_VALUES)
    if isinstance(value, dict | list) or rng.random() < GROSS_SHARE:
        return rng.choice(OVERRIDE_VALUES)
    return toml_text({"v": scaled(value, rng)}).split("=", 1)[1].strip()


def override_mutant(path: Path, rng: random.Random) -> tuple[str, list[str]]:
    """The shipped scenario's text (at its short duration) and one to three overrides."""
    doc, duration = shipped(path)
    overrides = []
    for _ in range(rng.randint(1, 3)):
        place = override_path(doc, rng)
        overrides.append(f"{dotted(place)}={override_value(doc, place, rng)}")
    return toml_text(with_duration(doc, duration)), overrides


def failure(kind: str, path: Path, seed: int) -> str | None:
    """What went wrong with the mutant of ``kind`` (``"edits"`` or ``"overrides"``) made from
    ``seed``, or None when it was refused or ran and conserved."""
    rng = random.Random(seed)
    text, overrides = (mutant(path, rng), []) if kind == "edits" else override_mutant(path, rng)
    outcome = run_forked(text, overrides)
    if outcome in ("ok", "refused"):
        return None
    return f"{path.name}, seed {seed}, {overrides}: {outcome}\n{text}"


MUTANTS = settings(
    max_examples=200,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow],
)


@MUTANTS
@given(st.sampled_from(FILES), st.integers(0, 2**32 - 1))
def test_a_mutant_of_a_shipped_scenario_is_refused_or_runs_and_conserves(path: Path, seed: int):
    assert failure("edits", path, seed) is None


@MUTANTS
@given(st.sampled_from(FILES), st.integers(0, 2**32 - 1))
def test_overrides_of_a_shipped_scenario_are_refused_or_run_and_conserve(path: Path, seed: int):
    assert failure("overrides", path, seed) is None


def test_an_override_path_is_spelled_as_set_takes_it():
    assert dotted(("flows", 0, "source", "rate")) == "flows[0].source.rate"
    assert dotted(("links", 12)) == "links[12]"


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["edits", "overrides"])
def test_ten_thousand_mutants_are_refused_or_run_and_conserve(kind: str):
    failures = [failure(kind, FILES[seed % len(FILES)], seed) for seed in range(10_000)]
    assert not any(failures), "\n".join(f for f in failures if f)

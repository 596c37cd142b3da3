"""Checks Dask's configuration before a cluster is started or reached.

Dask reads its configuration from ``DASK_*`` environment variables and YAML files (in
``~/.config/dask`` and ``DASK_CONFIG``) when it is imported, and parses a value only where it
is used: a timeout of ``bogus`` surfaced as a ``KeyError`` traceback from deep inside the
start of the local cluster. Every value of ``distributed`` whose default is a duration, a size
in bytes or a number is checked here instead, and a bad one is named with where it may have
come from.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from fairgate._core import ScenarioError
from fairgate.checks import clipped, shown

USED = "distributed."
"""The part of Dask's configuration fairgate's clusters read (not dask.array's, say)."""
FILES = "the YAML files of ~/.config/dask and DASK_CONFIG"
WHERE = f"DASK_* environment variables or {FILES}"


def _leaves(tree: Mapping[str, Any], prefix: str = "") -> Iterator[tuple[str, Any]]:
    for key, value in tree.items():
        if isinstance(value, Mapping):
            yield from _leaves(value, f"{prefix}{key}.")
        else:
            yield f"{prefix}{key}", value


def _kind(default: Any) -> str | None:
    """What a default says its key holds: "duration", "size", "number" or None (other)."""
    if isinstance(default, bool) or default is None:
        return None
    if isinstance(default, int | float):
        return "number"
    if not isinstance(default, str):
        return None
    return next((kind for kind in ("duration", "size") if _parses(kind, default)), None)


def _valid(kind: str, value: Any) -> bool:
    if value is None or isinstance(value, bool):
        return True  # "off" where a key allows it; Dask says so where it does not
    if kind == "number":
        return isinstance(value, int | float)
    return isinstance(value, str | int | float) and _parses(kind, value)


def _parses(kind: str, value: Any) -> bool:
    """Whether Dask reads ``value`` as a ``kind`` ("duration" or "size")."""
    from dask.utils import parse_bytes, parse_timedelta

    parse = parse_timedelta if kind == "duration" else parse_bytes
    try:
        parse(value)
    except (ValueError, KeyError, TypeError):
        return False
    return True


def environment_name(key: str) -> str:
    """The environment variable that sets ``key`` (``DASK_A__B_C`` for ``a.b-c``)."""
    return "DASK_" + "__".join(part.upper().replace("-", "_") for part in key.split("."))


def check_dask_config() -> None:
    """Raises ScenarioError naming the first configured value Dask could not parse."""
    import dask.config

    try:
        import distributed  # noqa: F401  (adds its defaults to dask.config.defaults)
    except (ValueError, KeyError, TypeError) as err:  # it parses a few values as it loads
        raise ScenarioError(
            f"Dask configuration: {clipped(str(err))}; expected valid values in {WHERE}"
        ) from None
    defaults: dict[str, Any] = {}
    for tree in dask.config.defaults:
        defaults.update(_leaves(tree))
    for key, default in defaults.items():
        kind = _kind(default)
        value = dask.config.get(key, default)
        if key.startswith(USED) and kind is not None and not _valid(kind, value):
            raise ScenarioError(
                f"Dask configuration `{key}`: got {shown(value)}, expected a {kind} such as "
                f"{default!r}, its default (set by {environment_name(key)} or in {FILES})"
            )

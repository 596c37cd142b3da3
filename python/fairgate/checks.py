"""Argument checks for the Python-side models (fluid, analysis): one error form everywhere,
``ScenarioError("`name`: got VALUE, expected WHAT")``, as the core's scenario errors."""

from __future__ import annotations

import contextlib
import math
import numbers
import os
import re
import unicodedata
from collections.abc import Iterator, Mapping
from pathlib import Path

from fairgate._core import ScenarioError

SHOWN_CHARACTERS = 80
"""The longest text an error shows of a value; longer ones show their first 50 characters and
their length, as the core's errors do."""


UNSEEN_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"})
"""Characters a name may not hold (the core's rule for a flow's name): controls, formats,
surrogates, private or unassigned code points, line and paragraph separators."""

ACTING_CATEGORIES = frozenset({"Cc", "Cf", "Zl", "Zp"})
"""Unicode categories a terminal acts on or does not show: controls, formats (a
bidirectional override), line and paragraph separators."""


def printable(text: str) -> str:
    """``text`` with each character of ACTING_CATEGORIES but a line break written as its
    escape (``\\x1b``): a path, an axis name or a key is echoed in errors, and an escape
    sequence in it would reach the terminal raw (``\\x1b[2J`` cleared the screen)."""
    if all(c == "\n" or unicodedata.category(c) not in ACTING_CATEGORIES for c in text):
        return text
    return "".join(
        c if c == "\n" or unicodedata.category(c) not in ACTING_CATEGORIES else ascii(c)[1:-1]
        for c in text
    )


def shown(value: object) -> str:
    """``repr(value)`` for an error message, :func:`clipped`; a value whose repr takes several
    lines (a DataFrame, a 2-d array) is named by its type and shape."""
    text = repr(value)
    if "\n" not in text:
        return clipped(text)
    shape = getattr(value, "shape", None)
    return f"a {type(value).__name__}" + (f" of shape {shape}" if isinstance(shape, tuple) else "")


def clipped(text: str) -> str:
    """``text`` for an error message: its first 50 characters and its length when longer than
    SHOWN_CHARACTERS (a 100,000-character name would otherwise fill a screen)."""
    if len(text) <= SHOWN_CHARACTERS:
        return text
    return f"{text[:50]}... ({len(text)} characters)"


def number(
    name: str,
    value: object,
    low: float = -math.inf,
    high: float = math.inf,
    *,
    low_open: bool = False,
    high_open: bool = False,
    integer: bool = False,
) -> float:
    """``value`` as a float when it is a finite real number (not a bool) within the bounds,
    whole when ``integer``; otherwise ScenarioError naming ``name`` and the bounds in words."""
    if _fits(value, low, high, low_open, high_open, integer):
        return float(value)  # type: ignore[arg-type]
    what = _bounds(low, high, low_open, high_open, integer)
    raise ScenarioError(f"`{name}`: got {shown(value)}, expected {what}")


def _fits(
    value: object, low: float, high: float, low_open: bool, high_open: bool, integer: bool
) -> bool:
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        return False
    x = float(value)
    if not math.isfinite(x) or (integer and not x.is_integer()):
        return False
    above = x > low or (not low_open and x == low)
    below = x < high or (not high_open and x == high)
    return above and below


def compact(x: float) -> str:
    """``x`` as ``:g`` writes it, its exponent as the scenarios write one: 1e13, 2.5e-05 as
    2.5e-5."""
    mantissa, e, exponent = f"{x:g}".partition("e")
    return f"{mantissa}e{int(exponent)}" if e else mantissa


def _bounds(low: float, high: float, low_open: bool, high_open: bool, integer: bool) -> str:
    kind = "a whole number" if integer else "a finite number"

    def bound(x: float) -> str:  # a whole number's every digit: 16777216 is no 1.67772e+07
        return str(int(x)) if integer else compact(x)

    if math.isinf(low) and math.isinf(high):
        return kind
    if math.isinf(high):
        return f"{kind} {'>' if low_open else '>='} {bound(low)}"
    if math.isinf(low):
        return f"{kind} {'<' if high_open else '<='} {bound(high)}"
    left, right = "(" if low_open else "[", ")" if high_open else "]"
    return f"{kind} in {left}{bound(low)}, {bound(high)}{right}"


@contextlib.contextmanager
def fields_named(names: Mapping[str, str]) -> Iterator[None]:
    """Renames the field a ScenarioError begins with (`` `rate`: got 0``) to the name the
    caller wrote (``names["rate"]``, say `` `rate_bps` `` or ``--rate``), where a lower layer
    names a field of its own that the caller's parameters or flags do not have."""
    try:
        yield
    except ScenarioError as err:
        text = str(err)
        for field, name in names.items():
            if text.startswith(f"`{field}`: "):
                shown_name = name if name.startswith("-") else f"`{name}`"
                raise ScenarioError(f"{shown_name}: {text[len(field) + 4 :]}") from None
        raise


MAX_SEED = 2**63 - 1
"""The largest seed: a TOML integer (and the store's seed column) is a signed 64-bit one."""


def seed_value(seed: object, name: str) -> int:
    """``seed`` as an int when it is a whole number (numpy's too, never a bool) from 0 to
    MAX_SEED; otherwise ScenarioError naming ``name``, the CLI option or Python argument."""
    if isinstance(seed, numbers.Integral) and not isinstance(seed, bool):
        if 0 <= int(seed) <= MAX_SEED:
            return int(seed)
        got = clipped(str(int(seed)))
    else:
        got = _typed(seed)
    raise ScenarioError(f"{name}: got {got}, expected a whole number from 0 to {MAX_SEED}")


URL = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://")
"""A path that pandas, Arrow and DuckDB take as a URL (``s3://``, ``file://``, ``https://``):
fairgate made local folders named ``s3:`` while Arrow wrote, or failed with a traceback, after
the run."""


def path_value(path: object, name: str) -> str:
    """``path`` as text, with a leading ``~`` or ``~user`` expanded to the home directory,
    when it is a path (text or ``os.PathLike``); otherwise ScenarioError naming ``name``. A
    number would be opened as a file descriptor, and closed after; an empty path would be
    read as the current directory; a URL (:data:`URL`) is refused. The shell leaves ``~`` in
    ``--out=~/x`` and in a quoted path: fairgate made a folder named ``~`` there while pandas
    wrote to the home directory."""
    if isinstance(path, str | os.PathLike) and not isinstance(path, bytes):
        text = os.fspath(path)
        if text == "":
            raise ScenarioError(f"{name}: got an empty path, expected a file or directory")
        if URL.match(text):
            raise ScenarioError(
                f"{name}: got {shown(text)}, a URL; expected a local path (fairgate reads and "
                "writes local files; write ./ before a folder whose name has a colon)"
            )
        return os.path.expanduser(text)
    raise ScenarioError(f"{name}: got {_typed(path)}, expected a path (str or pathlib.Path)")


def out_folder(out_dir: object, name: str = "out_dir") -> Path:
    """``out_dir`` as a Path, made with its parents: a study's or a reproduction's folder. A
    value that is no path, or a folder the system will not make, raises ScenarioError naming
    ``name`` before any work (a str was an AttributeError once the study had run)."""
    out = Path(path_value(out_dir, name))
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise ScenarioError(f"{name}: cannot make {out} ({err.strerror or err})") from None
    return out


MAX_FILE_BYTES = 64 << 20
"""The largest text file fairgate reads (a scenario, a sweep file, a saved summary, a sweep's
manifest, Fourier inputs): the largest shipped is 5 KB, and reading ``/dev/zero`` whole was
killed for memory."""


def small_text(path: str | os.PathLike[str]) -> str:
    """The UTF-8 text of ``path``; ValueError when it holds more than MAX_FILE_BYTES (or is
    not UTF-8), OSError when it cannot be read: the callers name the file and what it
    should hold."""
    with open(path, "rb") as f:
        data = f.read(MAX_FILE_BYTES + 1)
    if len(data) > MAX_FILE_BYTES:
        raise ValueError(f"larger than {MAX_FILE_BYTES >> 20} MiB")
    return data.decode("utf-8")


def text_value(text: object, name: str, expected: str = "TOML text (str)") -> str:
    """``text`` when it is a str; otherwise ScenarioError naming ``name``. TOML text that is
    a file's path (``run_text("s.toml")``, which TOML reads as a key without a value) is
    named as one."""
    if not isinstance(text, str):
        raise ScenarioError(f"{name}: got {_typed(text)}, expected {expected}")
    if expected.startswith("TOML") and _looks_like_a_path(text):
        raise ScenarioError(
            f"{name}: got {shown(text)}, a file's path; expected {expected}, such as "
            f"pathlib.Path({shown(text)}).read_text() (fairgate.run_file runs a file)"
        )
    return text


def _looks_like_a_path(text: str) -> bool:
    """One line with neither a key's ``=`` nor a table's ``[``, that ends in ``.toml`` or
    names a file: not TOML, so the path reading takes nothing away."""
    line = text.strip()
    if not line or any(c in line for c in "=[\n"):
        return False
    return line.endswith(".toml") or os.path.isfile(line)


def _typed(value: object) -> str:
    """A value of the wrong type, shown with its type (``int 3``; ``None`` alone)."""
    return "None" if value is None else f"{type(value).__name__} {shown(value)}"


def backslash_problem(path: Path) -> str | None:
    """What is wrong with ``path`` as a folder of results when its full path has a backslash,
    else None: DuckDB finds no file under such a folder (its file search reads ``\\`` as a
    separator), so ``fairgate query`` could not read what was written there."""
    try:
        full = str(path.resolve())
    except (OSError, RuntimeError):
        return None  # the system's own refusal is named where the folder is used
    if "\\" not in full:
        return None
    return (
        f"'{printable(full)}' has a backslash, which DuckDB (that reads results back) takes as a "
        "separator; expected a path without one (on this system a backslash is part of a name)"
    )


def utf8_path(path: str | os.PathLike[str], name: str) -> Path:
    """``path`` as a Path when it is a path whose name is UTF-8 text; otherwise ScenarioError
    naming ``name`` (:func:`path_value`, :func:`utf8_problem`)."""
    text = path_value(path, name)
    problem = utf8_problem(text)
    if problem:
        raise ScenarioError(f"{name}: {problem}")
    return Path(text)


def utf8_problem(path: str | os.PathLike[str]) -> str | None:
    """What is wrong with ``path`` when its name is not UTF-8 text, else None. A name of other
    bytes reaches Python as surrogates, which Arrow, DuckDB and the core cannot take as a
    path: it would fail only once the results are written."""
    try:
        os.fsencode(path).decode("utf-8")
    except UnicodeDecodeError:
        return (
            f"got {shown(str(path))}, which is not UTF-8 text; expected a path in UTF-8 "
            "(rename the file or folder)"
        )
    return None

"""Loading and running scenarios through the core, with a progress bar on long runs."""

from __future__ import annotations

import argparse
import codecs
import contextlib
import contextvars
import json
import os
import re
import stat
import tempfile
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from fairgate import _core
from fairgate.checks import (
    MAX_FILE_BYTES,
    backslash_problem,
    path_value,
    shown,
    text_value,
    utf8_path,
    utf8_problem,
)
from fairgate.display import simulated_bar
from fairgate.results import Results

PROGRESS_STEPS = 200
"""A run is advanced in at least this many chunks so the progress bar can move."""

CHUNK_WALL_SECONDS = 0.25
"""Each chunk is sized to take about this long, so that Ctrl-C (seen by Python between
chunks) stops a long run within a fraction of a second. Where a run pauses never changes its
results."""

FIRST_CHUNK_SECONDS = 0.01
"""Simulated time of the first chunk (or less, for a short run); later chunks grow from it."""

SMALLEST_CHUNK_SECONDS = 1e-6


class ConservationError(_core.SimulationError):
    """A run broke a conservation law. Its results, marked invalid, are in ``results``."""

    def __init__(self, results: Results) -> None:
        violations = results.summary["conservation"]["violations"]
        super().__init__(_core.conservation_brief(violations))
        self.results = results

    @property
    def kept_on_failure(self) -> dict[str, Any]:
        """What a sweep keeps of the failed point: every broken law, and that none held."""
        violations = self.results.summary["conservation"]["violations"]
        return {"conserved": False, "violations": "; ".join(violations)}

    def __reduce__(self) -> tuple[type[ConservationError], tuple[Results]]:
        """Rebuilt from its results, so that it crosses a process boundary (multiprocessing,
        Dask) whole; the default would call ``__init__`` with the message."""
        return (type(self), (self.results,))


def path_argument(text: str) -> Path:
    """A command-line path, ``~`` expanded (:func:`fairgate.checks.path_value`); an empty one
    is refused (``Path("")`` would silently be the current directory)."""
    if not text.strip():
        raise argparse.ArgumentTypeError("got an empty path, expected a file or directory")
    problem = utf8_problem(text)
    if problem:
        raise argparse.ArgumentTypeError(problem)
    try:
        return Path(path_value(text, "path"))
    except _core.ScenarioError as err:
        raise argparse.ArgumentTypeError(str(err).removeprefix("path: ")) from None


def rate_argument(text: str) -> float:
    """A command-line rate in bits per second, a number or written with the scenarios' units
    (``10Mbps``, ``1.5MB/s``); its range is the option's to check."""
    try:
        return _core.rate_in_bps(text)
    except _core.ScenarioError as err:
        raise argparse.ArgumentTypeError(err.message) from None


def output_argument(text: str) -> Path:
    """A command-line path to write a file at: :func:`path_argument`, but ``-`` is refused
    with the name of standard output (it wrote a file named ``-``, where many tools write
    to standard output)."""
    if text == "-":
        raise argparse.ArgumentTypeError(
            "got '-', which would name a file '-'; expected a file path (standard output is "
            "written as /dev/stdout)"
        )
    return path_argument(text)


def check_out_file(path: str | Path, option: str) -> Path:
    """Checks, before any work, that a file can be written at ``path``; raises ScenarioError
    naming ``option`` when it is a directory, or its directory is missing, a file or not
    writable (:func:`_probe_writable`), or the system refuses the path itself (too long)."""
    path = utf8_path(path, option)
    with _path_refused(option, path):
        _check_file_target(path, option)
    return path


def _check_outside_a_store(path: Path, option: str) -> None:
    from fairgate.sweeps.store import store_holding

    store = store_holding(path)
    if store is not None:
        raise _core.ScenarioError(
            f"{option}: got {shown(str(path))}, among the tables of the results store "
            f"{shown(str(store))}; expected a path outside its summary/, flows/ and ports/ "
            "folders and its table files (writing there would change what the store holds)"
        )


def _check_file_target(path: Path, option: str) -> None:
    _check_outside_a_store(path, option)
    if path.is_dir():
        raise _core.ScenarioError(
            f"{option}: got {shown(str(path))}, a directory; expected a file path"
        )
    parent = _written_path(path, option).parent
    if not parent.is_dir():
        raise _core.ScenarioError(
            f"{option}: got {shown(str(path))}, but {shown(str(parent))} is not a directory; "
            "expected a file in an existing directory"
        )
    if path.is_socket():
        raise _core.ScenarioError(
            f"{option}: got {shown(str(path))}, a socket, which cannot be opened as a file; "
            "expected a file path"
        )
    try:
        if path.exists() and not path.is_file():
            _check_access(path)  # a pipe or device: opening it would wait for a reader
        elif path.exists():
            with open(path, "ab"):
                pass
        else:
            _probe_writable(parent)
    except OSError as err:
        raise _core.ScenarioError(
            f"{option}: got {shown(str(path))}, which is not writable ({err.strerror}); "
            "expected a file you can write"
        ) from None


def _written_path(path: Path, option: str) -> Path:
    """The file a write to ``path`` creates: ``path``, or where a symbolic link there that
    leads to no file yet points; ScenarioError naming ``option`` when links go round in a loop
    (Python's ``resolve`` raised RuntimeError, a traceback)."""
    if not path.is_symlink() or path.exists():
        return path
    try:
        return path.resolve()
    except (RuntimeError, OSError):
        raise _core.ScenarioError(
            f"{option}: got {shown(str(path))}, a symbolic link that goes round in a loop; "
            "expected a file path"
        ) from None


@contextlib.contextmanager
def _path_refused(option: str, path: Path) -> Iterator[None]:
    """Turns the system's refusal of ``path`` while it is checked (a name longer than the
    file system allows, a folder that cannot be searched) into ScenarioError naming
    ``option``; without it, the OSError would end the command as a failure of the system."""
    try:
        yield
    except OSError as err:
        raise _core.ScenarioError(
            f"{option}: got {shown(str(path))}, which the system refuses ({err.strerror}); "
            "expected a path you can write to"
        ) from None


def _check_access(path: Path) -> None:
    """OSError unless the user may write ``path``, checked without opening it."""
    if not os.access(path, os.W_OK):
        raise PermissionError(13, "Permission denied", str(path))


def _probe_writable(directory: Path) -> None:
    """Creates and removes a temporary directory in ``directory``, leaving nothing behind;
    OSError if it refuses one (permission bits say nothing for root and nothing about
    read-only file systems)."""
    os.rmdir(tempfile.mkdtemp(prefix=".fairgate-probe-", dir=directory))


def check_out_dir(out: str | Path, option: str = "--out") -> Path:
    """Checks, before a run, that results can be written to directory ``out``.

    Raises ScenarioError naming ``option`` (``out`` in Python) when it is an existing file,
    lies under a file, its first existing ancestor refuses a new entry
    (:func:`_probe_writable`), or it is a directory holding entries fairgate did not write
    (:func:`_check_ours_or_empty`), or a folder DuckDB could not read back
    (:func:`fairgate.checks.backslash_problem`).
    """
    out = utf8_path(out, option)
    problem = backslash_problem(out)
    if problem:
        raise _core.ScenarioError(f"{option}: {problem}")
    with _path_refused(option, out):
        _check_dir_target(out, option)
    return out


def _check_dir_target(out: Path, option: str) -> None:
    _check_outside_a_store(out, option)
    if out.exists() and not out.is_dir():
        raise _core.ScenarioError(
            f"{option}: got {shown(str(out))}, an existing file; expected a directory"
        )
    existing = out
    while not existing.exists():
        if existing.is_symlink():
            raise _core.ScenarioError(
                f"{option}: got {shown(str(out))}, but {shown(str(existing))} is a symbolic link "
                "that leads nowhere (to a missing path, or round in a loop); expected a "
                "directory path"
            )
        existing = existing.parent
    if not existing.is_dir():
        raise _core.ScenarioError(
            f"{option}: got {shown(str(out))}, which lies under the file {shown(str(existing))}; "
            "expected a directory path"
        )
    try:
        _probe_writable(existing)
    except OSError as err:
        raise _core.ScenarioError(
            f"{option}: got {shown(str(out))}, but {shown(str(existing))} is not writable "
            f"({err.strerror}); expected a directory you can write to"
        ) from None
    if existing == out:
        _check_ours_or_empty(out, option)


FAIRGATE_MARKS = (".lock", "sweep.json")
"""Entries that mark a directory as a fairgate command's output: every command that writes
one holds its lock file, ``.lock``, and a store has its manifest."""

NOT_COUNTED = frozenset({".DS_Store", ".gitkeep", ".keep"})
"""Entries a directory may hold and still be taken as empty (a file manager's or a
repository's placeholders)."""


def _check_ours_or_empty(out: Path, option: str) -> None:
    """Refuses an existing directory that holds entries fairgate did not write: the results
    would be mixed with them and entries of the same names replaced (``--out .`` in a
    project, ``--out ~``, ``Results.save("/")`` as root)."""
    entries = sorted(entry.name for entry in out.iterdir() if entry.name not in NOT_COUNTED)
    if not entries or _written_by_fairgate(out, entries):
        return
    listed = ", ".join(shown(name) for name in entries[:3])
    more = f" and {len(entries) - 3} more" if len(entries) > 3 else ""
    raise _core.ScenarioError(
        f"{option}: got {shown(str(out))}, a directory holding entries fairgate did not write "
        f"({listed}{more}); expected a new or empty directory, or one a fairgate command "
        "wrote (the results would be mixed with those entries, and any of the same names "
        "replaced)"
    )


def _written_by_fairgate(out: Path, entries: list[str]) -> bool:
    """Whether ``out`` holds a fairgate command's output: its lock or a store's manifest, or
    the pair of files an earlier ``Results.save`` wrote before it took the lock."""
    if any(mark in entries for mark in FAIRGATE_MARKS):
        return True
    return (out / "summary.json").is_file() and (out / "flows.parquet").is_file()


_READ_ONCE: contextvars.ContextVar[dict[str, str] | None] = contextvars.ContextVar(
    "fairgate_read_once", default=None
)
"""Within :func:`streams_read_once`, the text of each file read that is not a regular one
(a context variable: two commands run in two threads keep their own)."""


@contextlib.contextmanager
def streams_read_once() -> Iterator[None]:
    """Within the block, a file that is not a regular one (``/dev/stdin``, a shell's
    ``<(...)``, a named pipe) is read once and its text kept: a command reads its scenario
    several times (is it a sweep file? then to validate, run and store it), and a pipe gives
    its text to the first read only (the second saw an empty file: "missing field
    `simulation`")."""
    token = _READ_ONCE.set({})
    try:
        yield
    finally:
        _READ_ONCE.reset(token)


def read_text_file(path: str | Path, what: str = "scenario file") -> str:
    """The UTF-8 text of ``path``, at most MAX_FILE_BYTES; raises ScenarioError naming it."""
    path = path_value(path, what)
    read_once = _READ_ONCE.get()
    kept = None if read_once is None else read_once.get(os.fspath(path))
    if kept is not None:
        return kept
    text = _read_text_file(path, what)
    if read_once is not None and not is_regular_file(path):
        read_once[os.fspath(path)] = text
    return text


def is_regular_file(path: str | Path) -> bool:
    """Whether ``path`` is a regular file (not a pipe, a device or missing)."""
    try:
        return stat.S_ISREG(os.stat(path).st_mode)
    except OSError:
        return False


STANDARD_STREAMS = {"/dev/stdin": 0, "/dev/stdout": 1, "/dev/stderr": 2}
DESCRIPTOR_PATH = re.compile(r"/(?:dev|proc/self)/fd/(\d+)")


def _missing(path: str | Path, what: str) -> str:
    """Why ``path`` was not found: a closed descriptor (``/dev/stdin`` when the shell closed
    standard input, ``<&-``, is a link to nothing) or no such file."""
    name = os.fspath(path)
    match = DESCRIPTOR_PATH.fullmatch(name)
    descriptor = STANDARD_STREAMS.get(name, int(match.group(1)) if match else None)
    if descriptor is not None and not _open_descriptor(descriptor):
        stream = "standard input" if descriptor == 0 else f"file descriptor {descriptor}"
        return (
            f"{what} {shown(name)}: {stream} is closed; expected a scenario piped or "
            "redirected into it, or a file's path"
        )
    stdin = " (standard input is read as /dev/stdin)" if name == "-" else ""
    return f"{what} {shown(name)} does not exist{stdin}"


def _open_descriptor(descriptor: int) -> bool:
    try:
        os.fstat(descriptor)
    except (OSError, OverflowError):
        return False
    return True


def _read_text_file(path: str | Path, what: str) -> str:
    try:
        with open(path, "rb") as f:
            data = f.read(MAX_FILE_BYTES + 1)
    except FileNotFoundError:
        raise _core.ScenarioError(_missing(path, what)) from None
    except OSError as err:
        raise _core.ScenarioError(
            f"cannot read {what} {shown(str(path))}: {err.strerror or err}"
        ) from None
    if len(data) > MAX_FILE_BYTES:
        raise _core.ScenarioError(
            f"{what} {shown(str(path))}: larger than {MAX_FILE_BYTES >> 20} MiB, "
            "expected a TOML file"
        )
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as err:
        raise _core.ScenarioError(
            f"{what} {shown(str(path))}: not UTF-8 text (byte 0x{data[err.start]:02x} at "
            f"offset {err.start}{_encoding_hint(data)}); expected a TOML file in UTF-8"
        ) from None


def _encoding_hint(data: bytes) -> str:
    """What a file that is not UTF-8 looks like, when its first bytes say so."""
    if data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        return ": UTF-16, by its byte-order mark; `iconv -f UTF-16 -t UTF-8` converts it"
    if data.startswith((b"\x1f\x8b", b"PK\x03\x04", b"\xd4\xc3\xb2\xa1", b"\x0a\x0d\x0d\x0a")):
        return ": a compressed or binary file by its first bytes"
    return ""


def override_list(overrides: str | Sequence[str]) -> list[str]:
    """The overrides as a list: one ``key.path=value`` string is one override (not one per
    character); anything but strings raises ScenarioError."""
    if isinstance(overrides, str):
        return [overrides]
    if isinstance(overrides, bytes) or not isinstance(overrides, Sequence):
        raise _core.ScenarioError(
            f"overrides: got {shown(overrides)}, expected a list of key.path=value strings"
        )
    listed = list(overrides)
    for item in listed:
        if not isinstance(item, str):
            raise _core.ScenarioError(
                f"overrides: got {shown(item)}, expected key.path=value strings"
            )
    return listed


def toml_document(text: str) -> dict[str, Any]:
    """TOML text as a dict, parsed by the core's own parser (TOML 1.1, a leading byte-order
    mark allowed) so that whatever runs also sweeps; a syntax error raises ScenarioError."""
    return json.loads(_core.toml_document(text_value(text, "text")))


def validate_text(text: str, overrides: Sequence[str] = ()) -> dict[str, Any]:
    """Validates TOML text; returns the scenario as the core understood it."""
    return json.loads(_core.validate(text_value(text, "text"), override_list(overrides)))


def validate_file(path: str | Path, overrides: Sequence[str] = ()) -> dict[str, Any]:
    """Validates the scenario file ``path`` (:func:`validate_text`); a sweep file, a missing
    or unreadable file raises ScenarioError naming it."""
    return validate_text(read_scenario_file(path), overrides)


SWEEP_KEY = re.compile(r"^\s*scenario\s*=", re.MULTILINE)


def read_scenario_file(path: str | Path) -> str:
    """The text of the scenario file ``path`` (:func:`read_text_file`). A sweep file is
    refused naming how it runs: the core would call its `scenario` key an unknown field."""
    text = read_text_file(path)
    if SWEEP_KEY.search(text) and "scenario" in toml_document(text):
        raise _core.ScenarioError(
            f"{shown(str(path))}: got a sweep file (it has a `scenario` key), expected a "
            "scenario file; run a sweep file with `fairgate sweep PATH`, or its scenario here"
        )
    return text


def _advance(sim: Any, progress: bool) -> None:
    end = sim.end_s
    chunk = min(FIRST_CHUNK_SECONDS, end / PROGRESS_STEPS)
    with simulated_bar(progress, round(end, 6), "simulating") as bar:
        while True:
            target = min(end, sim.now_s + chunk)
            started = time.perf_counter()
            sim.run_until(target)
            chunk = _next_chunk(chunk, time.perf_counter() - started, end)
            bar.update(round(sim.now_s - bar.n, 9))
            if target >= end:
                return


def _next_chunk(chunk: float, took: float, end: float) -> float:
    """The simulated time of the next chunk: scaled toward CHUNK_WALL_SECONDS of wall time
    (at most doubled), never above 1/PROGRESS_STEPS of the run."""
    scale = min(2.0, max(0.01, CHUNK_WALL_SECONDS / max(took, 1e-9)))
    return min(end / PROGRESS_STEPS, max(SMALLEST_CHUNK_SECONDS, chunk * scale))


def run_text(text: str, overrides: Sequence[str] = (), progress: bool = False) -> Results:
    """Runs TOML text with ``key.path=value`` overrides; returns the results.

    Raises ScenarioError for a bad scenario, SimulationError when the run cannot go on, and
    ConservationError (carrying the invalid results) when a conservation law was broken.
    """
    sim = _core.load(text_value(text, "text"), override_list(overrides))
    _advance(sim, progress)
    results = Results.from_core(sim.results())
    if not results.conserved:
        raise ConservationError(results)
    return results


def run_file(path: str | Path, overrides: Sequence[str] = (), progress: bool = False) -> Results:
    """Runs the scenario file ``path`` (:func:`run_text`); a sweep file, a missing or
    unreadable file raises ScenarioError naming it."""
    return run_text(read_scenario_file(path), overrides, progress)


def registry() -> dict[str, list[str]]:
    """The registered queue disciplines and sources."""
    return dict(_core.registry())

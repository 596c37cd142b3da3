"""Writing a command's output so that an interrupted or failed command leaves none of it.

A reproduction or study writes its tables and figures one by one while it runs; stopped
halfway (Ctrl-C, an error) it would leave some new files beside the previous run's, which read
as one complete output. :func:`staged_output` gives it a fresh hidden folder inside ``--out``
and moves what it wrote into ``--out`` only when it finished.
"""

from __future__ import annotations

import os
import shutil
import signal
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any


class Terminated(KeyboardInterrupt):
    """SIGTERM (a batch system's stop), SIGHUP (a closed terminal) or SIGXCPU (a CPU-time
    limit's warning: `ulimit -t`, a batch system's soft limit) received by the CLI, raised
    where Python is, as Ctrl-C raises KeyboardInterrupt: the command stops the same way,
    leaving no partial output, and exits with 128 + the signal's number."""

    def __init__(self, signum: int) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


TERMINATING = (signal.SIGTERM, signal.SIGHUP, signal.SIGXCPU)
STOP_SIGNALS = (signal.SIGINT, *TERMINATING)
"""Every signal a command stops on: Ctrl-C, and those it treats as Ctrl-C."""


_RECEIVED: list[Terminated] = []
"""The last SIGTERM or SIGHUP turned into :class:`Terminated` by the CLI's handler."""


def _raise_terminated(signum: int, frame: object) -> None:
    if signum == signal.SIGXCPU:  # sent again every second past the limit: once is the stop
        signal.signal(signal.SIGXCPU, signal.SIG_IGN)
    stop = Terminated(signum)
    _RECEIVED[:] = [stop]
    raise stop


def stop_received() -> KeyboardInterrupt:
    """The stop to raise where a library turned it into its own error (DuckDB answers a
    KeyboardInterrupt during a query with "Query interrupted"): the last SIGTERM or SIGHUP
    the CLI received, else Ctrl-C's KeyboardInterrupt."""
    return _RECEIVED[-1] if _RECEIVED else KeyboardInterrupt()


@contextmanager
def termination_like_ctrl_c() -> Iterator[None]:
    """Inside the block, SIGTERM and SIGHUP stop this process as Ctrl-C does; the previous
    handlers come back after it. The CLI's commands run inside it (a program that imports
    fairgate keeps its own handlers), where the main thread can set handlers. A signal the
    process was started ignoring stays ignored (``nohup`` ignores SIGHUP)."""
    previous = {}
    _RECEIVED.clear()
    with suppress(ValueError):  # not the main thread: no handler can be set
        for signum in TERMINATING:
            if signal.getsignal(signum) is signal.SIG_DFL:
                previous[signum] = signal.signal(signum, _raise_terminated)
    try:
        yield
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)


def exit_status(stop: KeyboardInterrupt) -> int:
    """The shell's status for a command stopped by a signal: 128 + its number."""
    return 128 + getattr(stop, "signum", signal.SIGINT)


SIGNAL_WORDS = {signal.SIGXCPU: "SIGXCPU (the CPU-time limit: ulimit -t, or a batch system's)"}
"""A signal whose name alone would not say why it came."""


def stopped_by(stop: KeyboardInterrupt) -> str:
    """How a stopped command's last line begins: "interrupted" for Ctrl-C, else the signal."""
    if not isinstance(stop, Terminated):
        return "interrupted"
    return f"stopped by {SIGNAL_WORDS.get(stop.signum, stop.args[0])}"


def _held_signals() -> list[int]:
    """SIGINT unless it is ignored (a background job's), and SIGTERM and SIGHUP where they
    stop the process like Ctrl-C."""
    held = [] if signal.getsignal(signal.SIGINT) is signal.SIG_IGN else [signal.SIGINT]
    held += [s for s in TERMINATING if signal.getsignal(s) is _raise_terminated]
    return held


@contextmanager
def ctrl_c_held() -> Iterator[None]:
    """Delivers a Ctrl-C (or a SIGTERM or SIGHUP the CLI stops on) that arrives inside the
    block only when the block is done."""
    caught: list[int] = []
    previous: dict[int, Any] = {}
    try:
        for signum in _held_signals():
            previous[signum] = signal.signal(signum, lambda got, frame: caught.append(got))
    except ValueError:  # not the main thread: signals cannot arrive here anyway
        yield
        return
    try:
        yield
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)
        if caught:
            raise KeyboardInterrupt if caught[0] == signal.SIGINT else Terminated(caught[0])


@contextmanager
def staging_folder(out: Path) -> Iterator[Path]:
    """A new hidden folder inside ``out`` (created if need be), removed when the block ends.

    Inside, not beside: ``--out`` is checked writable before a run (its parent need not be,
    as for ``--out /tmp``), and a rename within it never crosses a file system. An ``out``
    this call created is removed again if it is left empty."""
    created = not out.exists()
    out.mkdir(parents=True, exist_ok=True)
    with ctrl_c_held():  # a Ctrl-C between creating and entering `try` would leave it behind
        staging = Path(tempfile.mkdtemp(prefix=".partial-", dir=out))
    try:
        yield staging
    finally:
        with ctrl_c_held():
            shutil.rmtree(staging, ignore_errors=True)
            if created and not any(out.iterdir()):
                out.rmdir()


@contextmanager
def staged_output(out: Path) -> Iterator[Path]:
    """A new empty folder to write into (:func:`staging_folder`). When the block ends
    normally, what it holds replaces the entries of the same names in ``out`` (other entries
    of ``out`` stay); when the block raises, including on Ctrl-C, ``out`` is as it was.
    """
    with staging_folder(out) as staging:
        yield staging
        with ctrl_c_held():
            _move_into(staging, out)


def _move_into(source: Path, target: Path) -> None:
    """Moves every entry of ``source`` into ``target``, merging folders that both hold."""
    for entry in sorted(source.iterdir()):
        destination = target / entry.name
        if entry.is_dir() and destination.is_dir():
            _move_into(entry, destination)
            continue
        if destination.is_dir():
            shutil.rmtree(destination)
        os.replace(entry, destination)


def final_path(path: Path, staging: Path, out: Path) -> Path:
    """Where ``path``, written under ``staging``, is once moved into ``out``."""
    return out / path.relative_to(staging)

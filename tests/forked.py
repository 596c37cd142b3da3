"""Runs a scenario (or any call) in a forked child with a memory cap and an alarm, and names
the outcome: ``"ok"``, ``"refused"`` (a ScenarioError) or what went wrong (a panic, an
allocation abort, a hang past the alarm, any other exception, a broken conservation law, or
tables that break ``invariants.violations``)."""

from __future__ import annotations

import os
import resource
import signal
import sys
from collections.abc import Callable, Sequence

import fairgate as fg
import fairgate.atm
from invariants import violations

ALARM_S = 150
MEMORY_CAP = 6 << 30


def run_forked(text: str, overrides: Sequence[str] = ()) -> str:
    """'ok', 'refused' or what went wrong, from a child with a memory cap and an alarm, for
    ``text`` with ``key.path=value`` overrides as ``--set`` gives them."""
    return call_forked(lambda: run_scenario(text, overrides))


def call_forked(call: Callable[[], object]) -> str:
    """'ok', 'refused' (a ScenarioError) or what went wrong when ``call`` runs in a forked
    child with a memory cap and an alarm."""
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(read_end)
        outcome = child(call)
        os.write(write_end, outcome.encode()[:2000])
        os._exit(0)
    os.close(write_end)
    with os.fdopen(read_end) as pipe:
        outcome = pipe.read()
    _, status = os.waitpid(pid, 0)
    if os.WIFSIGNALED(status):
        return f"killed by signal {os.WTERMSIG(status)}"
    return outcome


def run_scenario(text: str, overrides: Sequence[str]) -> None:
    if "\n[atm]\n" in text:
        fairgate.atm.run_atm(text, overrides)
    else:
        broken = violations(fg.run_text(text, overrides))
        assert not broken, "; ".join(broken[:4])


def child(call: Callable[[], object]) -> str:
    """Runs ``call`` in the forked child and names the outcome."""
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_CAP, MEMORY_CAP))
    signal.alarm(ALARM_S)
    sys.stderr = open(os.devnull, "w")  # noqa: SIM115 - the child exits right after
    try:
        call()
    except fg.ScenarioError:
        return "refused"
    except BaseException as e:  # noqa: BLE001 - every other outcome is the finding
        return f"{type(e).__name__}: {e}"
    return "ok"

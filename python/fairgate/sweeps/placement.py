"""Who writes a sweep's results store: its workers, when they share the client's file system.

A worker that writes its own points' partitions spares the client (and, on a local cluster,
the scheduler that shares the client's process) the Parquet encoding, and sends back only the
point's status instead of its tables. It can do so only when it sees the store directory as
the client does and may write in it: a local cluster always, a remote cluster on a shared
file system possibly. So the client asks, once per run: it writes a file with a random token
under ``DIR/.staging`` and every worker reads it back and creates a file beside it
(:func:`workers_share`). ``store_on_workers`` (``fg.sweep``) is ``None`` to follow that answer,
``True`` to require it, ``False`` to have the client write. Partitions are byte-identical
whoever writes them (the same :func:`fairgate.sweeps.store.commit`, a test). A worker that joins
after the question and cannot write records its points as failed with the error; a rerun
runs them again.
"""

from __future__ import annotations

import os
import secrets
import tempfile
from pathlib import Path
from typing import Any

from fairgate._core import ScenarioError
from fairgate.checks import shown

STAGING = ".staging"


def sees_and_writes(probe: str, token: str) -> bool:
    """Runs on a worker: whether ``probe`` holds ``token`` and a file can be made beside it."""
    try:
        if Path(probe).read_text(encoding="utf-8") != token:
            return False
        handle, name = tempfile.mkstemp(prefix="probe-", dir=os.path.dirname(probe))
        os.close(handle)
        os.unlink(name)
    except OSError:
        return False
    return True


def workers_share(client: Any, root: Path) -> bool:
    """Whether every worker of ``client`` (at least one) can write ``root`` as the client sees
    it (the same directory, not one of the same name on another machine)."""
    staging = Path(root) / STAGING
    staging.mkdir(parents=True, exist_ok=True)
    token = secrets.token_hex(16)
    probe = staging / f"probe-{token}"
    probe.write_text(token, encoding="utf-8")
    try:
        answers = client.run(sees_and_writes, str(probe.resolve()), token, on_error="return")
    finally:
        probe.unlink(missing_ok=True)
    return bool(answers) and all(answer is True for answer in answers.values())


def check_choice(wanted: Any) -> None:
    if wanted is not None and not isinstance(wanted, bool):
        raise ScenarioError(f"store_on_workers: got {shown(wanted)}, expected True, False or None")


def store_on_workers(client: Any, root: Path, wanted: bool | None) -> bool:
    """Whether the workers write the store (see the module docstring for ``wanted``)."""
    check_choice(wanted)
    if wanted is False:
        return False
    shared = workers_share(client, root)
    if wanted and not shared:
        raise ScenarioError(
            f"store_on_workers: got True, but not every worker can write {Path(root).resolve()} "
            "(expected a directory the workers share with this process; use False to have "
            "this process write the store)"
        )
    return shared

"""Studies: sweeps that map a cost or performance surface, run by ``fairgate study NAME``."""

from __future__ import annotations

import importlib
from types import ModuleType

STUDIES: dict[str, str] = {
    "fq-cost": "fairgate.studies.fq_cost",
    "keshav-buffers": "fairgate.studies.keshav_buffers",
    "trace-fq": "fairgate.studies.trace_fq",
    "two-server": "fairgate.studies.two_server",
}


def available() -> list[str]:
    return sorted(STUDIES)


def load(name: str) -> ModuleType:
    if name not in STUDIES:
        raise KeyError(name)
    return importlib.import_module(STUDIES[name])

"""Reproductions of published experiments: each module runs its paper's experiments and
reports every published number beside fairgate's (``fairgate reproduce --list``)."""

from __future__ import annotations

import importlib
from types import ModuleType

REPRODUCTIONS: dict[str, str] = {
    "dfba": "fairgate.repro.dfba",
    "hybrid-gateways": "fairgate.repro.hybrid_gateways",
    "keshav": "fairgate.repro.keshav",
    "queueing": "fairgate.repro.queueing",
    "satellite": "fairgate.repro.satellite",
    "sfg": "fairgate.repro.sfg",
}
"""Name -> module. A module defines TITLE, SOURCE, EXPERIMENTS (ids accepted by --scenario)
and run(out_dir, experiment=None, quick=False, progress=False) -> Report; a module whose run
also takes ``client`` runs its cases on the executor (:mod:`fairgate.repro.cases`)."""


def available() -> list[str]:
    return sorted(REPRODUCTIONS)


def load(name: str) -> ModuleType:
    if name not in REPRODUCTIONS:
        raise KeyError(name)
    return importlib.import_module(REPRODUCTIONS[name])

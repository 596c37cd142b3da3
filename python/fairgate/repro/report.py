"""Reproduction reports: every published number beside the one fairgate measured.

A row is (experiment, metric, paper value, fairgate value, tolerance); the report prints as a
table and is written as Markdown and CSV with its figures. Misses are reported, never hidden.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd


@dataclass(frozen=True)
class Tolerance:
    """A row passes when |fairgate - paper| <= absolute + relative x |paper|."""

    absolute: float = 0.0
    relative: float = 0.0

    def allows(self, paper: float, measured: float) -> bool:
        if math.isnan(measured):
            return False
        return abs(measured - paper) <= self.absolute + self.relative * abs(paper) + 1e-12

    def describe(self) -> str:
        parts = []
        if self.relative:
            parts.append(f"±{self.relative * 100:.3g}%")
        if self.absolute:
            parts.append(f"±{self.absolute:g}")
        return " + ".join(parts) if parts else "exact"


@dataclass(frozen=True)
class AtLeast(Tolerance):
    """A check that passes when the measured value is at least ``bound``."""

    bound: float = 0.0

    def allows(self, paper: float, measured: float) -> bool:
        return not math.isnan(measured) and measured >= self.bound

    def describe(self) -> str:
        return f">= {self.bound:g}"


@dataclass(frozen=True)
class AtMost(Tolerance):
    """A check that passes when the measured value is at most ``bound``."""

    bound: float = 0.0

    def allows(self, paper: float, measured: float) -> bool:
        return not math.isnan(measured) and measured <= self.bound

    def describe(self) -> str:
        return f"<= {self.bound:g}"


QUALITATIVE = None
"""A row without tolerance is reported for comparison only (stochastic, phase-sensitive)."""


PASS = "PASS"
"""The verdict of an acceptance check that holds (a :class:`Check`); counted as within tolerance."""


@dataclass(frozen=True)
class Row:
    experiment: str
    metric: str
    paper: float
    fairgate: float
    tolerance: Tolerance | None = QUALITATIVE
    note: str = ""

    @property
    def difference(self) -> float:
        return self.fairgate - self.paper

    @property
    def verdict(self) -> str:
        if self.tolerance is None:
            return "report"
        return "ok" if self.tolerance.allows(self.paper, self.fairgate) else "MISS"


@dataclass(frozen=True)
class Check(Row):
    """An acceptance check: PASS or MISS where a compared row says ok or MISS."""

    @property
    def verdict(self) -> str:
        verdict = super().verdict
        return PASS if verdict == "ok" else verdict


@dataclass
class Report:
    """The outcome of one reproduction."""

    name: str
    title: str
    source: str
    rows: list[Row] = field(default_factory=list)
    figures: list[Path] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    scope: str = ""
    """How it was run when not in full (``--quick``, one experiment): said in every output, so
    that a partial reproduction is never read as the whole one."""

    def add(self, row: Row) -> None:
        self.rows.append(row)

    def frame(self) -> pd.DataFrame:
        return pd.DataFrame(
            {
                "experiment": [r.experiment for r in self.rows],
                "metric": [r.metric for r in self.rows],
                "paper": [r.paper for r in self.rows],
                "fairgate": [r.fairgate for r in self.rows],
                "difference": [r.difference for r in self.rows],
                "tolerance": [r.tolerance.describe() if r.tolerance else "-" for r in self.rows],
                "verdict": [r.verdict for r in self.rows],
                "note": [r.note for r in self.rows],
            }
        )

    def counts(self) -> dict[str, int]:
        verdicts = ["ok" if r.verdict == PASS else r.verdict for r in self.rows]
        return {v: verdicts.count(v) for v in ("ok", "MISS", "report")}

    def summary_line(self) -> str:
        c = self.counts()
        checked = c["ok"] + c["MISS"]
        return (
            f"{c['ok']} of {checked} checked rows within tolerance, {c['MISS']} missed, "
            f"{c['report']} reported for comparison only"
        )

    def run_line(self) -> str:
        """What was run: everything at full length, or what was left out."""
        return f"Run: {self.scope or 'every experiment, full length'}."

    def text(self) -> str:
        frame = self.frame().drop(columns=["note"])
        with pd.option_context("display.float_format", "{:.4g}".format):
            table = frame.to_string(index=False)
        head = f"{self.title}\n{self.source}\n{self.run_line()}"
        return f"{head}\n\n{table}\n\n{self.summary_line()}"

    def markdown(self) -> str:
        lines = [f"# {self.title}", "", self.source, "", f"**{self.run_line()}**", ""]
        lines += [self.summary_line(), ""]
        lines += ["| " + " | ".join(self.frame().columns) + " |"]
        lines += ["|" + "---|" * len(self.frame().columns)]
        for r in self.frame().itertuples(index=False):
            cells = [f"{v:.4g}" if isinstance(v, float) else str(v) for v in r]
            lines.append("| " + " | ".join(cells) + " |")
        if self.notes:
            lines += ["", "## Notes", ""] + [f"- {n}" for n in self.notes]
        if self.figures:
            lines += ["", "## Figures", ""] + [f"![{f.stem}]({f.name})" for f in self.figures]
        return "\n".join(lines) + "\n"

    def write(self, out_dir: Path) -> list[Path]:
        out_dir.mkdir(parents=True, exist_ok=True)
        csv_path = out_dir / f"{self.name}.csv"
        md_path = out_dir / f"{self.name}.md"
        self.frame().assign(run=self.scope or "full").to_csv(csv_path, index=False)
        md_path.write_text(self.markdown(), encoding="utf-8")
        return [md_path, csv_path, *self.figures]

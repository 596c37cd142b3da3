"""`fairgate reproduce sfg` [Chung06, §3-4]: the quick run (20-s phases, a tenth of the flows)
in the default suite, the full run (200-s phases, the paper's flow counts) under `slow`. The
checks hold what the runs show today; rows that miss are listed in docs/reproductions/sfg.md."""

from __future__ import annotations

from pathlib import Path

import pytest

from fairgate.repro import sfg


def rows_by_metric(report: sfg.Report) -> dict[str, sfg.Row]:
    return {row.metric: row for row in report.rows}


def check_common(report: sfg.Report, out: Path) -> dict[str, sfg.Row]:
    rows = rows_by_metric(report)
    for row in report.rows:
        if row.experiment.startswith("configuration"):
            assert row.verdict == "ok", row
    assert rows["DT: goodput per CBR flow (Mb/s)"].verdict == "ok"
    assert rows["SFG-PI: goodput per CBR flow (Mb/s)"].fairgate < 0.8
    assert rows["PI mean queue (KB)"].verdict == "ok"
    written = report.write(out)
    assert len(report.figures) == 2
    assert all(path.exists() for path in written)
    return rows


def test_quick_reproduction(tmp_path):
    report = sfg.run(tmp_path, quick=True)
    check_common(report, tmp_path)


@pytest.mark.slow
def test_full_reproduction(tmp_path):
    report = sfg.run(tmp_path)
    rows = check_common(report, tmp_path)
    for metric in (
        "SFG-PI mean queue (KB)",
        "SFG switches off (s)",
        "DT: CBR share of the link",
        "SFG: goodput per CBR flow (Mb/s)",
    ):
        assert rows[metric].verdict == "ok", rows[metric]

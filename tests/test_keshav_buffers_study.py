"""[Keshav91, ch. 3]'s buffer-structure study over the (N, B) plane with Tahoe sources: the
text's qualitative findings hold on the full 35-point sweep."""

from __future__ import annotations

import subprocess
import sys

from fairgate.studies import keshav_buffers


def test_findings_of_chapter_3_hold_on_the_35_point_sweep():
    table = keshav_buffers.sweep()
    assert len(table) == 35 * 4
    for text, holds in keshav_buffers.findings(table):
        assert holds, text
    # Drops begin exactly where W x N exceeds B (the gateway cannot congest below it).
    points = table.drop_duplicates(["axis", "conversations", "buffers"])
    assert (points["drops"].gt(0) == points["window_x_n_over_b"].gt(1)).all()


def test_study_command_writes_table_and_figure(tmp_path):
    cmd = [sys.executable, "-m", "fairgate.cli", "study", "keshav-buffers", "--quick"]
    done = subprocess.run([*cmd, "--out", str(tmp_path)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert "holds: PERC < HEAP at every point" in done.stdout
    for name in ("keshav_buffers.csv", "keshav_buffers.md", "keshav_buffers.png"):
        assert (tmp_path / name).stat().st_size > 0

"""The reproduction framework: verdicts, reports, interval statistics and the CLI."""

from __future__ import annotations

import math
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

from fairgate.repro.intervals import mean_of_means
from fairgate.repro.report import Check, Report, Row, Tolerance


def test_tolerance_and_verdicts():
    tol = Tolerance(relative=0.03)
    assert Row("s1", "thr", 4.99, 5.10, tol).verdict == "ok"
    assert Row("s1", "thr", 4.99, 5.20, tol).verdict == "MISS"
    assert Row("s1", "rtt", 0.06, 0.079, Tolerance(absolute=0.02)).verdict == "ok"
    assert Row("s1", "rtt", 0.06, math.nan, Tolerance(absolute=0.02)).verdict == "MISS"
    assert Row("s2", "thr", 1.69, 0.3).verdict == "report"


def test_checks_say_pass_or_miss_and_count_as_checked():
    report = Report("demo", "Demo", "a paper")
    report.add(Check("c", "m", 1.0, 1.01, Tolerance(relative=0.02)))
    report.add(Check("c", "n", 1.0, 2.0, Tolerance(relative=0.02)))
    assert [r.verdict for r in report.rows] == ["PASS", "MISS"]
    assert report.counts() == {"ok": 1, "MISS": 1, "report": 0}


def test_report_writes_markdown_and_csv(tmp_path):
    report = Report("demo", "Demo", "a paper")
    report.add(Row("e", "m", 1.0, 1.01, Tolerance(relative=0.02)))
    report.add(Row("e", "n", 2.0, 3.0, Tolerance(relative=0.02), note="explained"))
    written = report.write(tmp_path)
    assert [p.name for p in written] == ["demo.md", "demo.csv"]
    frame = pd.read_csv(tmp_path / "demo.csv")
    assert list(frame["verdict"]) == ["ok", "MISS"]
    markdown = (tmp_path / "demo.md").read_text()
    assert "1 of 2 checked rows within tolerance, 1 missed" in markdown
    assert "**Run: every experiment, full length.**" in markdown
    assert set(frame["run"]) == {"full"}


def test_mean_of_means_discards_the_first_interval():
    table = pd.DataFrame(
        {
            "flow": ["a"] * 4,
            "interval": [0, 1, 2, 3],
            "throughput": [100.0, 4.0, 5.0, 6.0],
            "drop_rate": [0.0] * 4,
            "retx_rate": [0.0] * 4,
            "rtt": [9.0, 1.0, 1.0, np.nan],
        }
    )
    row = mean_of_means(table).iloc[0]
    assert row["throughput_mean"] == 5.0
    assert row["throughput_sd"] == pytest.approx(1.0)
    assert row["rtt_mean"] == 1.0


def fairgate(*args):
    cmd = [sys.executable, "-m", "fairgate.cli", *map(str, args)]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=300)


def test_cli_lists_and_runs_a_reproduction(tmp_path):
    listed = fairgate("reproduce", "--list")
    assert listed.returncode == 0 and "queueing" in listed.stdout
    done = fairgate("reproduce", "queueing", "--quick", "--scenario", "cbr", "--out", tmp_path)
    assert done.returncode == 0, done.stderr
    frame = pd.read_csv(tmp_path / "queueing.csv")
    assert list(frame["verdict"]) == ["ok", "ok"]
    # A partial reproduction says so wherever it is read: stdout, the Markdown, each CSV row.
    scope = "experiment cbr only (of mm1, md1, cbr); --quick: shorter runs, wider tolerances"
    assert f"Run: {scope}; not the full reproduction." in done.stdout
    assert f"**Run: {scope}; not the full reproduction.**" in (tmp_path / "queueing.md").read_text()
    assert set(frame["run"]) == {f"{scope}; not the full reproduction"}
    bad = fairgate("reproduce", "nosuch")
    assert bad.returncode == 2 and "expected one of" in bad.stderr
    bad = fairgate("reproduce", "queueing", "--scenario", "9")
    assert bad.returncode == 2 and "error: --scenario: got" in bad.stderr


@pytest.mark.parametrize("command", ["reproduce", "study"])
def test_the_list_aligns_every_name_and_takes_one(command: str):
    """`hybrid-gateways` ran into its title (a 12-character column); `reproduce NAME --list`
    listed every reproduction, and an unknown NAME with --list was not named."""
    listed = fairgate(command, "--list").stdout.splitlines()
    titles = [line for line in listed if not line.lstrip().startswith("experiments:")]
    starts = {len(line) - len(line.split("  ", 1)[1].lstrip()) for line in titles}
    assert len(titles) >= 4 and len(starts) == 1, listed
    name = titles[-1].split()[0]
    assert fairgate(command, name, "--list").stdout.split()[0] == name
    assert len(fairgate(command, name, "--list").stdout.splitlines()) < len(listed)
    bad = fairgate(command, "nosuch", "--list")
    assert bad.returncode == 2 and "`name`: got 'nosuch'" in bad.stderr

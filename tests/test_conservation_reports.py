"""A broken conservation law is reported in one sentence of bounded length, the laws that
locate the fault first, while the summary keeps every one: a discipline leaking at a port
shared by 20,000 flows broke 20,001 laws, and the error listing each was 1.3 MB on one line
of standard error (and of a sweep's failed point)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

import fairgate as fg
from test_cli import fairgate
from test_hardening import write

FLOWS = 2000

MANY_LEAKING = f"""
[simulation]
duration = "1s"
sample_interval = "0.5s"

[topology]
kind = "dumbbell"
senders = 1
bottleneck = {{ rate = "100Mbps", delay = "5ms", queue = {{ kind = "test_leak", every = 3 }} }}
access = {{ rate = "1Gbps", delay = "1ms", queue = {{ kind = "fifo", limit = 100000 }} }}

[[flows]]
name = "f{{i}}"
count = {FLOWS}
src = "s0"
dst = "d0"
source = {{ kind = "cbr", rate = "12kbps", size = 500 }}
"""

BRIEF = re.compile(
    rf"conservation violated \(1 port, {FLOWS} flows\): port left->right: arrivals \d+ != "
    r"departures \d+ \+ drops 0 \+ queued \d+; flow f0: offered \d+ != .*; flow f2: offered "
    rf"[^;]*; and {FLOWS - 3} more \(the summary lists every one\)$"
)


def test_python_raises_a_short_sentence_and_keeps_every_law_in_the_summary():
    with pytest.raises(fg.ConservationError) as caught:
        fg.run_text(MANY_LEAKING)
    message = str(caught.value)
    assert len(message) < 600 and BRIEF.match(message), message[:1000]
    violations = caught.value.results.summary["conservation"]["violations"]
    assert len(violations) == FLOWS + 1


def test_the_cli_prints_the_sentence_and_summary_json_keeps_every_law(tmp_path: Path):
    out = tmp_path / "o"
    done = fairgate("run", write(tmp_path, MANY_LEAKING), "--out", out, "--quiet")
    assert done.returncode == 1
    first = done.stderr.splitlines()[0]
    assert first.startswith("error: ") and BRIEF.match(first[len("error: ") :]), first[:1000]
    assert len(done.stderr) < 1000
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    assert len(summary["conservation"]["violations"]) == FLOWS + 1


def test_a_sweep_keeps_every_law_of_a_failed_point(tmp_path: Path):
    """The failed point's row had only its error; with the error now short, the laws would
    have been lost: its `conserved` and `violations` columns hold them."""
    out = tmp_path / "store"
    done = fairgate("sweep", write(tmp_path, MANY_LEAKING), "--out", out, "--quiet")
    assert done.returncode == 1
    assert len(done.stderr) < 1500 and "and 1997 more (the summary lists" in done.stderr
    row = fg.sweeps.query(out, "SELECT status, conserved, error, violations FROM summary")
    assert row["status"].tolist() == ["failed"] and row["conserved"].tolist() == [False]
    assert BRIEF.search(row["error"][0].rsplit(" (at ", 1)[0])
    assert len(row["violations"][0].split("; ")) == FLOWS + 1

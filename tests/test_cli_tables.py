"""What `fairgate run` prints for a run larger than a terminal: each table cut at
``PRINTED_ROWS`` rows (the first flows, the ports with the most drops), with a line saying so;
every row stays in the Parquet files."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pandas as pd

from fairgate.cli import PRINTED_ROWS
from fairgate.display import PRINTED_CELL

DUMBBELL = """
name = "wide"
[simulation]
duration = 2
seed = 1
[topology]
kind = "dumbbell"
senders = 60
bottleneck = { rate = "2Mbps", delay = "5ms", queue = { kind = "fifo", limit = 20 } }
access = { rate = "100Mbps", delay = "1ms" }
[[flows]]
name = "t{i}"
count = 60
src = "s{i}"
dst = "d{i}"
source = { kind = "cbr", rate = "100kbps", size = 500 }
"""


def test_a_wide_run_prints_cut_tables_led_by_the_bottleneck(tmp_path: Path) -> None:
    scenario = tmp_path / "wide.toml"
    scenario.write_text(DUMBBELL, encoding="utf-8")
    cmd = [sys.executable, "-m", "fairgate.cli", "run", str(scenario), "--out", str(tmp_path / "o")]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    flows_at, queues_at = lines.index("flows"), lines.index("queues")
    assert lines[flows_at + 2].split()[0] == "t0"
    assert lines[flows_at + 2 + PRINTED_ROWS].startswith(f"... {PRINTED_ROWS} of 60 flows shown")
    assert lines[queues_at + 2].split()[0] == "left->right"  # the only port that drops
    used = (pd.read_parquet(tmp_path / "o" / "ports.parquet")["arrivals_pkts"] > 0).sum()
    assert lines[queues_at + 2 + PRINTED_ROWS].startswith(f"... {PRINTED_ROWS} of {used} ports")
    assert len(pd.read_parquet(tmp_path / "o" / "flows.parquet")) == 60


def test_a_long_name_is_clipped_in_the_printed_table_and_whole_in_the_files(
    tmp_path: Path,
) -> None:
    long_name = "flow-" + "x" * 5000
    scenario = tmp_path / "long.toml"
    text = DUMBBELL.replace('name = "t{i}"\ncount = 60', f'name = "{long_name}"')
    scenario.write_text(text.replace('"s{i}"', '"s0"').replace('"d{i}"', '"d0"'), "utf-8")
    cmd = [sys.executable, "-m", "fairgate.cli", "run", str(scenario), "--out", str(tmp_path / "o")]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    table_lines = [line for line in done.stdout.splitlines() if not line.startswith("wrote")]
    assert max(map(len, table_lines)) < 200
    row = next(line for line in done.stdout.splitlines() if "flow-xxx" in line)
    assert row.split()[0] == "flow-" + "x" * (PRINTED_CELL - 8) + "..."
    flows = pd.read_parquet(tmp_path / "o" / "flows.parquet")
    assert long_name in set(flows["flow"])

"""A web connection whose byte accounting does not close is a conservation failure named by
flow and connection, in Python and on the command line (see docs/models/web.md,
"Conservation per connection")."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

import fairgate as fg
from test_cli import fairgate

CORRUPTED_WEB = """
[simulation]
duration = "20s"
seed = 3
[[nodes]]
name = "a"
[[nodes]]
name = "b"
[[links]]
from = "a"
to = "b"
rate = "10Mbps"
delay = "10ms"
queue = { kind = "test_corrupt", at = 5 }
[[flows]]
name = "web"
src = "a"
dst = "b"
source = { kind = "web", sessions = 5, start_window = "2s" }
"""


def test_a_corrupted_connection_raises_naming_flow_and_connection():
    with pytest.raises(fg.ConservationError) as caught:
        fg.run_text(CORRUPTED_WEB)
    assert caught.value.results.summary["valid"] is False
    assert "flow 0, connection " in str(caught.value)
    assert "delivered in order" in str(caught.value)


def test_the_cli_reports_it_on_stderr_and_exits_1(tmp_path: Path):
    scenario = tmp_path / "s.toml"
    scenario.write_text(CORRUPTED_WEB, encoding="utf-8")
    out = tmp_path / "o"
    done = fairgate("run", scenario, "--out", out, "--quiet")
    assert done.returncode == 1
    assert re.search(r"conservation violated \(\d+ flows?\): flow 0, connection ", done.stderr)
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    assert summary["valid"] is False


def test_without_the_fault_the_same_run_is_valid():
    text = CORRUPTED_WEB.replace('{ kind = "test_corrupt", at = 5 }', '{ kind = "fifo" }')
    assert fg.run_text(text).summary["valid"] is True

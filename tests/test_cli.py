"""The command line: outputs, determinism, and bad input (exit code 2, no files written)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import SCENARIOS
from fairgate.cli import main
from fairgate.sweeps import query

SHOWCASE = SCENARIOS / "showcase.toml"
RANDOM_MIX = SCENARIOS / "open_loop_mix.toml"  # Poisson and on/off sources: the seed matters
OUTPUTS = [
    "summary.json",
    "flows.parquet",
    "ports.parquet",
    "queue_series.parquet",
    "flow_series.parquet",
    "qdisc_state.parquet",
    "traces.parquet",
    "transfers.parquet",
    "drops.parquet",
    "class_series.parquet",
    "phase_classes.parquet",
    "phase_ports.parquet",
]


def fairgate(*args: str | Path) -> subprocess.CompletedProcess:
    cmd = [sys.executable, "-m", "fairgate.cli", *map(str, args)]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=300)


def run_showcase(out: Path, *extra: str, scenario: Path = SHOWCASE) -> subprocess.CompletedProcess:
    done = fairgate("run", scenario, "--out", out, "--set", "simulation.duration=12s", *extra)
    assert done.returncode == 0, done.stderr
    return done


def test_run_prints_tables_and_writes_outputs(tmp_path: Path):
    done = run_showcase(tmp_path / "o", "--plot")
    assert "flows" in done.stdout and "left->right" in done.stdout and "tcp-40ms" in done.stdout
    for name in [*OUTPUTS, "plot.png", "queue.png"]:
        assert (tmp_path / "o" / name).stat().st_size > 0, name
    summary = json.loads((tmp_path / "o" / "summary.json").read_text())
    assert summary["conservation"]["ok"] and summary["time_s"] == 12.0


def test_same_seed_is_byte_identical_and_another_seed_differs(tmp_path: Path):
    for name, seed in [("a", "1"), ("b", "1"), ("c", "2")]:
        run_showcase(tmp_path / name, "--seed", seed, "--quiet", scenario=RANDOM_MIX)
    for name in OUTPUTS:
        a, b, c = ((tmp_path / d / name).read_bytes() for d in "abc")
        assert a == b, name
        # The mix has no transport, no workload and no drop log: those tables stay empty.
        empty = ("traces.parquet", "qdisc_state.parquet", "transfers.parquet", "drops.parquet")
        if name not in empty:
            assert a != c, name
    stored = sorted(p.relative_to(tmp_path / "a") for p in (tmp_path / "a").glob("*/point=*/*"))
    assert len(stored) == 3  # the one-point store: summary, flows, ports
    for part in stored:
        assert (tmp_path / "a" / part).read_bytes() == (tmp_path / "b" / part).read_bytes(), part


BAD = [
    (["--set", "flows[0].source.rate=-5Mbps"], "flows[0].source.rate"),
    (["--set", "flows[0].dst=nowhere"], "flows[0].dst"),
    (["--set", "topology.bottleneck.rate=0"], "topology.bottleneck.rate"),
    (["--set", "flows[1].start=100s"], "flows[1].start"),
    (["--set", "flows[0].sourse.rate=1"], "flows[0]"),
    (["--set", "simulation.duration=fast"], "simulation.duration"),
    (["--set", "topology.bottleneck.queue.limit=-3"], "topology.bottleneck.queue.limit"),
]


@pytest.mark.parametrize(("extra", "field"), BAD, ids=[b[1] for b in BAD])
def test_bad_input_names_the_field_exits_2_and_writes_nothing(tmp_path, extra, field):
    out = tmp_path / "never"
    for command in (["validate", SHOWCASE], ["run", SHOWCASE, "--out", out]):
        done = fairgate(*command, *extra)
        assert done.returncode == 2, done.stderr
        assert f"`{field}" in done.stderr, done.stderr
        assert "Traceback" not in done.stderr
        assert len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert not out.exists()
    assert not any(tmp_path.iterdir())


def test_unreachable_destination_and_bad_toml(tmp_path: Path):
    text = """
[simulation]
duration = 1
[[nodes]]
name = "a"
[[nodes]]
name = "b"
[[links]]
from = "a"
to = "b"
rate = "1Mbps"
duplex = false
[[flows]]
src = "b"
dst = "a"
source = { kind = "cbr", rate = "1Mbps" }
"""
    path = tmp_path / "s.toml"
    path.write_text(text)
    done = fairgate("validate", path)
    assert done.returncode == 2 and "no route" in done.stderr, done.stderr
    path.write_text("[simulation\nduration = 1")
    done = fairgate("validate", path)
    assert done.returncode == 2 and "line 1" in done.stderr, done.stderr
    done = fairgate("run", tmp_path / "missing.toml")
    assert done.returncode == 2 and "does not exist" in done.stderr


def test_help_everywhere():
    for args in ([], ["run"], ["validate"]):
        done = fairgate(*args, "--help")
        assert done.returncode == 0 and "usage: fairgate" in done.stdout


def test_validate_says_what_it_read(capsys) -> None:
    assert main(["validate", str(SHOWCASE)]) == 0
    assert capsys.readouterr().out.endswith("valid (4 flow entries)\n")
    assert main(["validate", str(SHOWCASE.parent / "dfba_e3.toml")]) == 0
    assert capsys.readouterr().out.endswith("valid (cell network: 5 VCs, 100 TCPs)\n")


@pytest.mark.parametrize("command", ["validate", "run", "run --seeds 2 --workers 1", "sweep"])
def test_a_scenario_or_sweep_read_from_a_pipe_is_read_once(tmp_path: Path, command: str):
    """Each command reads its file several times (a sweep file? then validate, run, store):
    from /dev/stdin or a shell's <(...) the second read found nothing ("missing field
    `simulation`")."""
    text = SHOWCASE.read_text(encoding="utf-8").replace('duration = "40s"', 'duration = "12s"')
    if command == "sweep":  # its scenario relative to the current directory, not to /dev
        (tmp_path / "s.toml").write_text(text, encoding="utf-8")
        text = 'scenario = "s.toml"\nseeds = 2\n'
    words = command.split()
    cmd = [sys.executable, "-m", "fairgate.cli", words[0], "/dev/stdin", *words[1:]]
    if command != "validate":
        cmd += ["--out", str(tmp_path / "o"), "--quiet"]
    done = subprocess.run(
        cmd, input=text, capture_output=True, text=True, timeout=300, cwd=tmp_path
    )
    assert done.returncode == 0, done.stderr
    if command != "validate":  # the scenario's flows ran, not an empty text's
        flows = query(tmp_path / "o", "SELECT count(*) AS n FROM flows")
        assert flows["n"][0] >= 7
    dash = fairgate("validate", "-")
    assert dash.stderr.startswith(  # not "error: -: scenario file '-' ...", the file twice
        "error: scenario file '-' does not exist (standard input is read as /dev/stdin)"
    )

"""Property-based command lines (hypothesis): every command with random options and values,
good and bad (empty, `-`, NaN, huge numbers, control characters, long text, URLs, devices,
missing files). Each must end with exit status 0, 1 or 2, a line on stderr when it is not 0,
and never a traceback. The ``@example`` lines are the corpus of failures found so far."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

import fairgate as fg
from conftest import SCENARIOS

VALUES = [
    "", "-", "--", "nan", "inf", "-1", "0", "1", "1e400", "9" * 40, "x", "s.toml", "res", "/",
    "/dev/null", "/dev/zero", "nosuch", "a=b", "simulation.duration=11s", "simulation.duration=0",
    "ü", "\x07", "a" * 5000, "simulation.seed=-1", "queue.limit=1,2", "links[0].rate=1",
    "--help", "1.5", "10Mbps", "~", "s3://x",
]  # fmt: skip
OPTIONS = {
    "run": ["--seed", "--set", "--out", "--plot", "--quiet", "--seeds", "--workers"],
    "validate": ["--set"],
    "sweep": ["--grid", "--zip", "--seeds", "--set", "--out", "--quiet", "--workers"],
    "query": ["--csv", "--parquet"],
    "study": ["--list", "--quick", "--out", "--trace", "--trace-format", "--rate"],
    "reproduce": ["--list", "--quick", "--out", "--scenario"],
}
FLAGS = {"--plot", "--quiet", "--list", "--quick"}
NAMES = ["keshav-buffers", "fq-cost", "trace-fq", "two-server", "keshav", "nosuch"]


@st.composite
def command_lines(draw: st.DrawFn) -> list[str]:
    command = draw(st.sampled_from(sorted(OPTIONS)))
    value = st.sampled_from(VALUES)
    args = [command]
    if command in ("run", "validate", "sweep"):
        args.append(draw(st.one_of(st.just("s.toml"), value)))
    if command == "query":
        args += [draw(st.one_of(st.just("res"), value))]
        args += [draw(st.one_of(st.just("SELECT * FROM flows"), value))]
    if command in ("study", "reproduce"):
        args.append(draw(st.one_of(st.sampled_from(NAMES), value)))
    for option in draw(st.lists(st.sampled_from(OPTIONS[command]), max_size=3)):
        args += [option] if option in FLAGS else [option, draw(value)]
    return args


def bounded(args: list[str]) -> list[str]:
    """``args`` made short to run: every run of 11 s simulated, studies and reproductions
    quick, every output in the case's folder."""
    if args[0] in ("run", "sweep", "study", "reproduce") and "--out" not in args:
        args = [*args, "--out", "o"]
    if args[0] == "run":
        args = [*args, "--set", "simulation.duration=11s"]
    if args[0] == "sweep":
        args = [*args, "--workers", "1"]
    if args[0] in ("study", "reproduce") and "--list" not in args:
        args = [*args, "--quick"]
    return args


def check_command_line(args: list[str], folder: Path, results: Path) -> None:
    """Runs ``args`` in ``folder``, beside a scenario ``s.toml`` and saved results ``res``."""
    event(args[0])
    (folder / "s.toml").write_text(SHOWCASE, encoding="utf-8")
    (folder / "res").symlink_to(results)
    cmd = [sys.executable, "-m", "fairgate.cli", *bounded(args)]
    done = subprocess.run(
        cmd, cwd=folder, capture_output=True, text=True, errors="replace", timeout=300
    )
    assert "Traceback" not in done.stderr, done.stderr
    assert done.returncode in (0, 1, 2), (done.returncode, done.stderr[-2000:])
    assert done.returncode == 0 or done.stderr.strip(), "a failure says why"


SHOWCASE = (SCENARIOS / "showcase.toml").read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def saved_results(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("results") / "res"
    fg.run_file(SCENARIOS / "showcase.toml", ["simulation.duration=11s"]).save(out)
    return out


PROPERTY = settings(
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)


@settings(PROPERTY, max_examples=40)
@given(args=command_lines())
def test_random_command_lines_end_in_a_status_and_a_sentence(
    args: list[str], tmp_path_factory: pytest.TempPathFactory, saved_results: Path
) -> None:
    check_command_line(args, tmp_path_factory.mktemp("case"), saved_results)


@pytest.mark.slow
@settings(PROPERTY, max_examples=1000, derandomize=False)
@given(args=command_lines())
def test_random_command_lines_at_length(
    args: list[str], tmp_path_factory: pytest.TempPathFactory, saved_results: Path
) -> None:
    check_command_line(args, tmp_path_factory.mktemp("case"), saved_results)

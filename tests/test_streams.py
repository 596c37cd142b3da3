"""The standard streams and output files a command writes to: a full or closed standard
output, a reader that leaves early (a pipe's `| head`, of stdout or of stderr), `-` as an
output file, and errors that `--quiet` keeps on stderr. Each ends in one line and a status,
never a traceback, lost rows or a command stopped for a progress bar."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import fairgate as fg
from test_cli import fairgate
from test_hardening import LEAKY, NO_FLOWS, write


def test_a_full_stdout_or_output_file_is_a_clear_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
):
    from fairgate.cli import main
    from fairgate.sweeps import cli as sweep_cli

    def disk_full(*args: object, **kwargs: object) -> None:
        raise OSError(28, "No space left on device")

    out = tmp_path / "o"
    assert main(["run", str(write(tmp_path, NO_FLOWS)), "--out", str(out), "--quiet"]) == 0
    with monkeypatch.context() as patch:
        patch.setattr(sys, "stdout", type("Full", (), {"write": disk_full, "flush": disk_full})())
        assert main(["query", str(out), "SELECT * FROM range(10)"]) == 1
    assert capsys.readouterr().err == (
        "error: `fairgate query`: cannot write to standard output: No space left on device\n"
    )
    monkeypatch.setattr(sweep_cli.pa_csv, "CSVWriter", disk_full)
    csv = tmp_path / "rows.csv"
    assert main(["query", str(out), "SELECT 1", "--csv", str(csv)]) == 1  # as on stdout: it was 2
    assert capsys.readouterr().err == (
        f"error: `fairgate query` stopped: cannot write {csv}: [Errno 28] No space left on device\n"
    )
    assert not csv.exists()
    # What was there before and is not a regular file (/dev/stdout, a pipe) is never removed.
    pipe, link = tmp_path / "pipe", tmp_path / "link"
    os.mkfifo(pipe)
    (tmp_path / "elsewhere.csv").write_text("kept", encoding="utf-8")
    link.symlink_to(tmp_path / "elsewhere.csv")  # (a link into the store is refused first)
    for kept in (pipe, link):
        assert main(["query", str(out), "SELECT 1", "--csv", str(kept)]) == 1
        assert f"stopped: cannot write {kept}" in capsys.readouterr().err
        assert kept.is_symlink() or kept.is_fifo()


def test_query_rows_can_go_to_a_pipe(tmp_path: Path):
    """The check of --csv must not open a pipe: its reader would see the end of the rows."""
    out = tmp_path / "o"
    assert fairgate("run", write(tmp_path, NO_FLOWS), "--out", out, "--quiet").returncode == 0
    pipe = tmp_path / "pipe"
    os.mkfifo(pipe)
    cmd = [sys.executable, "-m", "fairgate.cli", "query", str(out), "SELECT * FROM range(3)"]
    writer = subprocess.Popen([*cmd, "--csv", str(pipe)], stderr=subprocess.PIPE, text=True)
    rows = pipe.read_text(encoding="utf-8")
    assert writer.wait(timeout=60) == 0, writer.stderr.read() if writer.stderr else ""
    assert rows.split() == ['"range"', "0", "1", "2"]


def test_a_reader_that_leaves_query_rows_early_ends_nothing_in_error(tmp_path: Path):
    """`fairgate query DIR SQL --csv /dev/stdout | head -1` (standard output as the docs name
    it): the reader leaving ended in "error: query: cannot write /dev/stdout: Broken pipe",
    exit 2, as if the command line were wrong; without --csv it ended quietly, exit 0."""
    out = tmp_path / "o"
    assert fairgate("run", write(tmp_path, NO_FLOWS), "--out", out, "--quiet").returncode == 0
    cmd = [sys.executable, "-m", "fairgate.cli", "query", str(out), "SELECT * FROM range(1000000)"]
    for extra in ([], ["--csv", "/dev/stdout"]):
        process = subprocess.Popen([*cmd, *extra], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        assert process.stdout is not None and process.stdout.read(16)
        process.stdout.close()
        assert process.wait(timeout=120) == 0
        assert process.stderr is not None and b"error" not in process.stderr.read()


def test_a_reader_of_stderr_that_leaves_does_not_stop_the_run(tmp_path: Path):
    """`fairgate run ... 2>&1 | head`: the progress bar's pipe closing once ended the run with
    exit status 0 and nothing written."""
    out = tmp_path / "o"
    soak = Path(__file__).resolve().parents[1] / "scenarios" / "soak.toml"
    cmd = [sys.executable, "-m", "fairgate.cli", "run", str(soak), "--out", str(out)]
    cmd += ["--set", "simulation.duration=900s"]
    process = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    seen = b""
    while b"simulated" not in seen:  # the bar is drawn: its reader leaves
        chunk = process.stderr.read(16)
        assert chunk, seen.decode(errors="replace")
        seen += chunk
    process.stderr.close()
    assert process.wait(timeout=300) == 0
    assert json.loads((out / "summary.json").read_text())["conservation"]["ok"]


@pytest.mark.parametrize("option", ["--csv", "--parquet"])
def test_a_dash_as_a_query_output_is_named_not_written_as_a_file(tmp_path: Path, option: str):
    """`--csv -` wrote a file named `-` in the current folder, where many tools write to
    standard output."""
    store = fg.run_text(NO_FLOWS).save(tmp_path / "run")
    done = subprocess.run(
        [sys.executable, "-m", "fairgate.cli", "query", str(store), "SELECT 1", option, "-"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 2 and "standard output is written as /dev/stdout" in done.stderr
    assert not (tmp_path / "-").exists()


@pytest.mark.parametrize("quiet", [[], ["--quiet"]])
def test_a_sweeps_failed_points_are_named_on_stderr_even_when_quiet(tmp_path: Path, quiet):
    """`--quiet` prints "nothing but errors", yet a quiet sweep whose points failed (a full
    disk, a run that broke conservation) ended with status 1 and no word; without it the
    failures went to stdout, among the tables."""
    done = fairgate(
        "sweep", write(tmp_path, LEAKY), "--seeds", "7", "--out", tmp_path / "o", *quiet
    )
    assert done.returncode == 1, done.stderr
    failures = [line for line in done.stderr.splitlines() if line.startswith("failed: point")]
    assert len(failures) == 5 and "conservation violated" in failures[0], done.stderr
    assert "... and 2 more failed points (the summary's error column)" in done.stderr
    assert "failed: point" not in done.stdout


def test_a_query_to_a_closed_standard_output_is_refused(tmp_path: Path):
    """With standard output closed (`>&-`) Python's print() drops what it is given: the query
    printed nothing and ended with status 0."""
    fg.run_text(NO_FLOWS).save(tmp_path / "o")
    cmd = [sys.executable, "-m", "fairgate.cli", "query", str(tmp_path / "o"), "SELECT 1 AS n"]

    def closed_stdout() -> None:
        os.close(1)

    done = subprocess.run(cmd, preexec_fn=closed_stdout, stderr=subprocess.PIPE, text=True)
    assert done.returncode == 2
    assert done.stderr == (
        "error: standard output is closed; expected it open, or the rows written with --csv "
        "FILE or --parquet FILE\n"
    )
    done = subprocess.run(
        [*cmd, "--csv", str(tmp_path / "n.csv")], preexec_fn=closed_stdout, timeout=120
    )
    assert done.returncode == 0 and (tmp_path / "n.csv").read_text() == '"n"\n1\n'


@pytest.mark.parametrize(
    ("args", "command"),
    [(["--help"], "fairgate"), (["--version"], "fairgate"), (["run", "S", "--out", "O"], "run")],
)
def test_a_full_standard_output_is_named_whatever_printed_to_it(
    tmp_path: Path, args: list[str], command: str
):
    """`fairgate --help > /dev/full` ended with status 0 and nothing written (argparse drops
    the error), and a run whose tables could not be printed said it had "stopped" although
    its files were complete."""
    scenario = write(tmp_path, NO_FLOWS)
    args = [str(scenario) if a == "S" else str(tmp_path / "o") if a == "O" else a for a in args]
    with open("/dev/full", "w") as full:
        cmd = [sys.executable, "-m", "fairgate.cli", *args]
        done = subprocess.run(cmd, stdout=full, stderr=subprocess.PIPE, text=True, timeout=300)
    name = "fairgate" if command == "fairgate" else f"fairgate {command}"
    said = f"error: `{name}`: cannot write to standard output: No space left on device\n"
    assert (done.returncode, done.stderr) == (1, said)
    if command == "run":
        assert (tmp_path / "o" / "summary.json").is_file()

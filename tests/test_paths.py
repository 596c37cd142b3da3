"""Paths that a library reads differently from the file system, each taken one way everywhere:
a leading `~` is the home directory, a URL is refused, and so is a results folder whose path
has a backslash (DuckDB cannot read under it)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

import fairgate as fg
from conftest import SCENARIOS
from test_cli import fairgate
from test_hardening import NO_FLOWS, write


def test_a_leading_tilde_is_the_home_directory_everywhere(tmp_path: Path, monkeypatch):
    """The shell leaves `~` in `--out=~/x` and in quoted paths: fairgate made a folder named
    `~` in the current directory, pandas wrote to the home directory, and the run failed after
    simulating ("Cannot save file into a non-existent directory")."""
    home, work = tmp_path / "home", tmp_path / "work"
    home.mkdir()
    work.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.chdir(work)
    write(home, NO_FLOWS)
    done = fairgate("run", "~/s.toml", "--out=~/o", "--quiet")
    assert done.returncode == 0, done.stderr
    assert (home / "o" / "summary.json").is_file() and list(work.iterdir()) == []
    write(home, 'scenario = "~/s.toml"\nseeds = 2\n', "w.toml")
    done = fairgate("validate", "~/w.toml")
    assert done.returncode == 0 and "valid sweep of 2 points" in done.stdout, done.stderr
    results = fg.run_file("~/s.toml")
    results.save("~/saved")
    assert fg.Results.load(home / "saved").summary == results.summary
    assert fg.Results.load("~/saved").summary == results.summary
    assert list(work.iterdir()) == []


@pytest.mark.parametrize("url", ["s3://bucket/x", "file:///srv/x", "https://example.com/x"])
def test_a_url_is_refused_as_a_path_before_anything_runs(tmp_path: Path, monkeypatch, url: str):
    """pandas and Arrow take `s3://...` as a URL: fairgate made folders named `s3:` in the
    current directory, ran, then failed with Arrow's traceback ("Missing bucket name")."""
    from fairgate.sweeps import prepare, query

    monkeypatch.chdir(tmp_path)
    said = f"got '{url}', a URL; expected a local path"
    done = fairgate("run", SCENARIOS / "showcase.toml", "--out", url)
    assert done.returncode == 2 and f"argument --out: {said}" in done.stderr, done.stderr
    for call in [
        lambda: fg.run_file(url),
        lambda: fg.Results.load(url),
        lambda: query(url, "SELECT 1"),
        lambda: prepare(SCENARIOS / "showcase.toml", out=url),
    ]:
        with pytest.raises(fg.ScenarioError, match=re.escape(said)):
            call()
    assert list(tmp_path.iterdir()) == []


def test_a_results_folder_with_a_backslash_is_refused_as_duckdb_cannot_read_it(tmp_path: Path):
    """DuckDB finds no file under a folder whose path has a backslash: `--out 'o\\b'` was
    written, then `fairgate query` said "No files found ... a damaged point's folder can be
    removed"."""
    from fairgate.sweeps import query

    said = "has a backslash, which DuckDB (that reads results back) takes as a separator"
    done = fairgate("run", write(tmp_path, NO_FLOWS), "--out", tmp_path / "o\\b")
    assert done.returncode == 2 and f"--out: '{tmp_path}/o\\b' {said}" in done.stderr
    assert not (tmp_path / "o\\b").exists()
    results = fg.run_file(tmp_path / "s.toml")
    with pytest.raises(fg.ScenarioError, match=re.escape(said)):
        results.save(tmp_path / "r\\s")
    results.save(tmp_path / "o")
    (tmp_path / "o").rename(tmp_path / "o\\b")
    done = fairgate("query", tmp_path / "o\\b", "SELECT 1")
    assert done.returncode == 2 and "rename the folder to read it" in done.stderr, done.stderr
    with pytest.raises(fg.ScenarioError, match=re.escape(said)):
        query(tmp_path / "o\\b", "SELECT 1")


@pytest.mark.parametrize("command", ["run", "validate", "sweep"])
def test_a_closed_standard_input_is_named_not_called_missing(tmp_path: Path, command: str):
    """With standard input closed (`<&-`), /dev/stdin links to nothing: the scenario file
    "did not exist", which sent the user looking for a file."""
    cmd = [sys.executable, "-m", "fairgate.cli", command, "/dev/stdin"]
    cmd += [] if command == "validate" else ["--out", str(tmp_path / "o")]
    done = subprocess.run(cmd, stdin=subprocess.DEVNULL, capture_output=True, text=True)
    assert "closed" not in done.stderr  # an open, empty standard input is read as usual
    closed = subprocess.run(
        cmd, capture_output=True, text=True, timeout=300, preexec_fn=lambda: os.close(0)
    )
    assert closed.returncode == 2, closed.stderr
    assert "'/dev/stdin': standard input is closed; expected a scenario piped" in closed.stderr
    assert not (tmp_path / "o").exists()


def test_a_closed_descriptor_is_named_in_python_too():
    with pytest.raises(fg.ScenarioError, match="file descriptor 987 is closed"):
        fg.run_file("/dev/fd/987")

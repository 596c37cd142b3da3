"""An output directory is new, empty, or one fairgate wrote: never a directory of a user's files.

``--out .`` in a project, ``--out ~`` or ``Results.save("/")`` as root wrote twelve Parquet
files and three folders among the user's files (and replaced any of the same names); the
Python ``save`` also raised a bare ``FileExistsError`` for a file and took ``""`` for the
current directory.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import fairgate as fg
from conftest import SCENARIOS
from fairgate import atm
from fairgate.sweeps import query
from fairgate.sweeps.store import writing
from test_cli import fairgate
from test_hardening import LEAKY, write

SCENARIO = LEAKY.replace('kind = "test_leak", every = 3', 'kind = "fifo"')
NOT_OURS = "a directory holding entries fairgate did not write ('notes.txt')"


def _results() -> fg.Results:
    return fg.run_text(SCENARIO)


def _user_directory(tmp_path: Path) -> Path:
    folder = tmp_path / "project"
    folder.mkdir()
    (folder / "notes.txt").write_text("mine", encoding="utf-8")
    return folder


@pytest.mark.parametrize(
    "command",
    [
        ["run", "SCENARIO"],
        ["run", "SCENARIO", "--seeds", "2", "--workers", "1"],
        ["reproduce", "queueing", "--quick"],
        ["study", "keshav-buffers", "--quick"],
        ["sweep", "SWEEP"],
    ],
    ids=["run", "seeds", "reproduce", "study", "sweep"],
)
def test_a_directory_of_other_files_is_refused_and_left_as_it_was(
    tmp_path: Path, command: list[str]
):
    scenario = write(tmp_path, SCENARIO)
    sweep = write(tmp_path, 'scenario = "s.toml"\nseeds = 2\n', "w.toml")
    folder = _user_directory(tmp_path)
    given = [{"SCENARIO": str(scenario), "SWEEP": str(sweep)}.get(a, a) for a in command]
    done = fairgate(*given, "--out", folder)
    assert done.returncode == 2, done.stderr
    assert done.stderr.startswith("error: --out: got '"), done.stderr  # long paths are clipped
    assert NOT_OURS in done.stderr
    assert "expected a new or empty directory, or one a fairgate command wrote" in done.stderr
    assert sorted(p.name for p in folder.iterdir()) == ["notes.txt"]


def test_save_refuses_a_directory_of_other_files_a_file_and_an_empty_path(tmp_path: Path):
    results = _results()
    folder = _user_directory(tmp_path)
    with pytest.raises(fg.ScenarioError, match="^out_dir: got '.*', " + re.escape(NOT_OURS)):
        results.save(folder)
    assert sorted(p.name for p in folder.iterdir()) == ["notes.txt"]
    with pytest.raises(
        fg.ScenarioError, match="out_dir: got '.*, an existing file; expected a directory"
    ):
        results.save(folder / "notes.txt")
    with pytest.raises(fg.ScenarioError, match="^out_dir: got an empty path, expected a file"):
        results.save("")


def test_the_listing_of_other_entries_is_short(tmp_path: Path):
    folder = tmp_path / "many"
    folder.mkdir()
    for index in range(10):
        (folder / f"file{index}").write_text("x", encoding="utf-8")
    with pytest.raises(fg.ScenarioError, match=r"\('file0', 'file1', 'file2' and 7 more\)"):
        _results().save(folder)


def test_what_fairgate_wrote_is_written_again(tmp_path: Path):
    results = _results()
    saved = results.save(tmp_path / "saved")
    assert results.save(saved) == saved  # its own output, again
    ran = tmp_path / "ran"
    assert fairgate("run", write(tmp_path, SCENARIO), "--out", ran).returncode == 0
    results.save(ran)  # a run's output (a one-point store)
    assert fg.Results.load(ran).flows.equals(results.flows)
    reproduced = tmp_path / "reproduced"
    assert fairgate("reproduce", "queueing", "--quick", "--out", reproduced).returncode == 0
    done = fairgate("study", "keshav-buffers", "--quick", "--out", reproduced)
    assert done.returncode == 0, done.stderr  # another command's output: fairgate's too


def test_an_empty_directory_and_placeholders_count_as_empty(tmp_path: Path):
    results = _results()
    empty = tmp_path / "empty"
    empty.mkdir()
    results.save(empty)
    kept = tmp_path / "kept"
    kept.mkdir()
    (kept / ".gitkeep").write_text("", encoding="utf-8")
    results.save(kept)
    assert (kept / ".gitkeep").exists() and (kept / "summary.json").exists()


def test_results_saved_before_the_lock_was_taken_are_still_fairgates(tmp_path: Path):
    """``Results.save`` of earlier versions wrote no ``.lock``: its summary and flow table mark
    the directory."""
    results = _results()
    old = results.save(tmp_path / "old")
    (old / ".lock").unlink()
    results.save(old)


def test_save_is_refused_while_a_command_writes_the_directory(tmp_path: Path):
    out = tmp_path / "busy"
    with writing(out), pytest.raises(fg.ScenarioError, match="^out_dir: .* is in use by"):
        _results().save(out)


@pytest.mark.parametrize(
    ("manifest", "problem"), [("not json", "cannot be read"), ("[]", "got list")]
)
def test_a_damaged_store_manifest_is_put_on_the_output_option(
    tmp_path: Path, manifest: str, problem: str
):
    """It was put on the scenario file: `error: s.toml: o/sweep.json: cannot be read`."""
    scenario = write(tmp_path, SCENARIO)
    out = tmp_path / "o"
    assert fairgate("run", scenario, "--out", out).returncode == 0
    (out / "sweep.json").write_text(manifest, encoding="utf-8")
    for command in (["run", scenario], ["run", scenario, "--seeds", "2", "--workers", "1"]):
        done = fairgate(*command, "--out", out)
        assert done.returncode == 2
        assert done.stderr.startswith("error: --out: ") and problem in done.stderr, done.stderr
    with pytest.raises(fg.ScenarioError, match=f"^out_dir: .*sweep.json.*{problem}"):
        _results().save(out)


def test_a_run_replaces_the_run_before_it_whole_whatever_its_kind(tmp_path: Path):
    """A cell network's run over a packet run left that run's tables and one-point store, and
    `fairgate query` answered with them; a run without `--plot` left the figures before."""
    out, scenario = tmp_path / "o", write(tmp_path, SCENARIO)
    cell = ["simulation.duration=1s", "simulation.warmup=0.2s"]
    packet_files = {"flows.parquet", "summary", "sweep.json", "plot.png", ".staging"}
    runs = [
        (["run", scenario, "--plot"], {"plot.png", "flows.parquet", "summary"}, {"vcs.parquet"}),
        (
            ["run", SCENARIOS / "dfba_e3.toml", *(f"--set={o}" for o in cell)],
            {"vcs.parquet", "summary.json"},
            packet_files,
        ),
        (["run", scenario], {"flows.parquet", "summary"}, {"vcs.parquet", "plot.png"}),
    ]
    for args, expected, gone in runs:
        done = fairgate(*args, "--out", out, "--quiet")
        assert done.returncode == 0, done.stderr
        (out / "notes.txt").write_text("mine", encoding="utf-8")  # not a run's: kept
        entries = {entry.name for entry in out.iterdir()}
        assert expected <= entries and not gone & entries, entries
    assert query(out, "SELECT count(*) AS n FROM summary")["n"][0] == 1
    cell_run = atm.run_atm((SCENARIOS / "dfba_e3.toml").read_text(encoding="utf-8"), cell)
    written = {path.name for path in cell_run.save(out)}
    assert written == {"vcs.parquet", "refused.parquet", "occupancy.parquet", "summary.json"}
    assert not (out / "flows.parquet").exists() and (out / "notes.txt").exists()
    fg.run_text(SCENARIO).save(out)
    assert not (out / "vcs.parquet").exists() and (out / "flows.parquet").exists()


def test_a_sweep_into_a_single_runs_folder_names_it_as_a_run(tmp_path: Path):
    """It was refused as "holds another sweep (its `axes` differs: [])"."""
    out = tmp_path / "o"
    done = fairgate("run", write(tmp_path, SCENARIO), "--out", out, "--quiet")
    assert done.returncode == 0, done.stderr
    with pytest.raises(fg.ScenarioError, match=r"holds a single run \(`fairgate run`\)"):
        fg.sweep(SCENARIO, grid={"links[0].queue.limit": [5, 6]}, out=out)
    saved = fg.run_text(SCENARIO).save(tmp_path / "saved")  # no store beside its tables
    with pytest.raises(fg.ScenarioError, match="holds a single run's results"):
        fg.sweep(SCENARIO, grid={"links[0].queue.limit": [5, 6]}, out=saved)
    assert not (saved / "summary").exists()

"""A reproduction or study stopped halfway leaves its --out as it was; one that finishes
replaces the files it wrote and keeps the others."""

from __future__ import annotations

import os
import signal
import types
from pathlib import Path

import pytest

from fairgate import repro, studies
from fairgate.cli import main
from fairgate.repro.report import Report
from fairgate.staging import (
    Terminated,
    ctrl_c_held,
    exit_status,
    final_path,
    staged_output,
    termination_like_ctrl_c,
)


def previous_output(out: Path) -> None:
    """An earlier command's output, with the lock file it leaves (an output directory holds
    only fairgate's entries: ``tests/test_out_ownership.py``)."""
    (out / "figures").mkdir(parents=True)
    (out / ".lock").write_text("", encoding="utf-8")
    (out / "table.csv").write_text("old", encoding="utf-8")
    (out / "other.csv").write_text("kept", encoding="utf-8")
    (out / "figures" / "old.png").write_text("kept", encoding="utf-8")


def test_a_finished_block_replaces_what_it_wrote_and_keeps_the_rest(tmp_path: Path):
    out = tmp_path / "out"
    previous_output(out)
    with staged_output(out) as staging:
        # Inside --out, which was checked writable (its parent need not be: --out /tmp).
        assert staging.parent == out and not any(staging.iterdir())
        (staging / "table.csv").write_text("new", encoding="utf-8")
        (staging / "figures").mkdir()
        (staging / "figures" / "new.png").write_text("new", encoding="utf-8")
        written = final_path(staging / "figures" / "new.png", staging, out)
    assert written == out / "figures" / "new.png" and written.read_text() == "new"
    assert (out / "table.csv").read_text() == "new"
    assert (out / "other.csv").read_text() == "kept"
    assert (out / "figures" / "old.png").read_text() == "kept"
    assert sorted(p.name for p in out.iterdir()) == [".lock", "figures", "other.csv", "table.csv"]


@pytest.mark.parametrize("stop", [KeyboardInterrupt, RuntimeError])
def test_a_stopped_block_leaves_the_output_as_it_was(tmp_path: Path, stop: type[BaseException]):
    out = tmp_path / "out"
    previous_output(out)
    with pytest.raises(stop), staged_output(out) as staging:
        (staging / "table.csv").write_text("half", encoding="utf-8")
        raise stop
    assert (out / "table.csv").read_text() == "old"
    assert sorted(p.name for p in out.iterdir()) == [".lock", "figures", "other.csv", "table.csv"]


def test_a_stopped_block_removes_the_output_folder_it_created(tmp_path: Path):
    out = tmp_path / "new" / "out"
    with pytest.raises(KeyboardInterrupt), staged_output(out):
        raise KeyboardInterrupt
    assert not out.exists()


def interrupted_after_one_file(out_dir: Path, **_: object) -> Report:
    (out_dir / "table.csv").write_text("half", encoding="utf-8")
    raise KeyboardInterrupt


@pytest.mark.parametrize("command", ["reproduce", "study"])
def test_ctrl_c_in_a_reproduction_or_study_keeps_the_previous_output(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    command: str,
):
    out = tmp_path / "out"
    previous_output(out)
    fake = types.SimpleNamespace(TITLE="t", EXPERIMENTS=["e"], run=interrupted_after_one_file)
    monkeypatch.setattr(repro if command == "reproduce" else studies, "load", lambda name: fake)
    assert main([command, "fake", "--out", str(out)]) == 130
    assert "its results were not written" in capsys.readouterr().err
    assert (out / "table.csv").read_text() == "old"
    # The command held the folder's lock (docs/results.md); its empty file stays.
    kept = sorted(p.name for p in out.iterdir())
    assert kept == [".lock", "figures", "other.csv", "table.csv"]


def test_a_finished_reproduction_names_the_files_where_they_end_up(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
):
    out = tmp_path / "out"
    previous_output(out)
    assert main(["reproduce", "queueing", "--quick", "--scenario", "mm1", "--out", str(out)]) == 0
    assert f"wrote {out / 'queueing.md'}, {out / 'queueing.csv'}" in capsys.readouterr().out
    assert (out / "queueing.csv").is_file() and (out / "other.csv").read_text() == "kept"
    assert not list(out.glob(".partial-*"))


def test_a_termination_inside_a_held_block_arrives_after_it():
    """Under the CLI, SIGTERM is held through a block of renames as Ctrl-C is, then stops
    the command as Ctrl-C does; outside the CLI its handler is left alone."""
    with termination_like_ctrl_c():
        done = []
        with pytest.raises(Terminated, match="SIGTERM") as stop:
            with ctrl_c_held():
                os.kill(os.getpid(), signal.SIGTERM)
                done.append("the block ran to its end")
        assert done and exit_status(stop.value) == 143
    assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL


def test_an_ignored_ctrl_c_stays_ignored_through_a_held_block():
    """A background job ignores SIGINT; holding it would deliver it after the block."""
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        with ctrl_c_held():
            os.kill(os.getpid(), signal.SIGINT)
        assert signal.getsignal(signal.SIGINT) is signal.SIG_IGN
    finally:
        signal.signal(signal.SIGINT, previous)

"""What an error shows of the user's text: long keys, values, names and paths clipped,
characters a terminal would act on escaped, names it cannot encode printed escaped, and paths
and files that are not UTF-8 named for what they are (split from ``test_hardening.py``).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

import fairgate as fg
from conftest import SCENARIOS
from test_cli import fairgate
from test_hardening import LEAKY, NO_FLOWS, write


@pytest.mark.parametrize(
    ("args", "file_text"),
    [
        (["validate", "s.toml"], '"key\\u001b[2J" = 1\n'),
        (["validate", "s.toml"], '[simulation]\n"x\\u001b]0;title\\u0007" = 1\n'),
        (["validate", "s\x1b[2J.toml"], None),
        (["sweep", "w.toml"], 'scenario = "s.toml"\n[grid]\n"a\\u202e\\u001b[31m" = [1, 2]\n'),
        (["sweep", "w.toml"], 'scenario = "s.toml"\nset = ["x\\u001b[31m=1"]\n'),
    ],
)
def test_errors_escape_what_a_terminal_would_act_on(tmp_path: Path, args, file_text):
    """Keys, names and paths are echoed in errors: an escape sequence in a scenario's key
    reached the terminal raw (``"\\u001b[2J" = 1`` cleared the screen)."""
    write(tmp_path, NO_FLOWS)
    if file_text is not None:
        write(tmp_path, file_text, args[1])
    done = subprocess.run(
        [sys.executable, "-m", "fairgate.cli", *args], cwd=tmp_path, capture_output=True
    )
    assert done.returncode == 2, done.stderr
    assert b"\x1b" not in done.stderr and b"\x07" not in done.stderr, done.stderr
    assert "\u202e" not in done.stderr.decode() and b"Traceback" not in done.stderr
    assert b"1b" in done.stderr, done.stderr  # the escape, written out


LONG = "a" * 100_000
"""A user's text far longer than a screen: a key, a value, a name or a path."""


def test_duckdb_s_list_of_candidates_is_indented_with_spaces(tmp_path: Path):
    """DuckDB indents the functions it would take with tabs, which the error line wrote as
    `\\t` (every tab escaped as a terminal would act on it)."""
    store = fg.run_text(NO_FLOWS).save(tmp_path / "run")
    with pytest.raises(fg.ScenarioError) as caught:
        fg.sweeps.query(store, "SELECT * FROM range(10**6)")
    assert "\n  Candidate functions:" in str(caught.value) and "\t" not in str(caught.value)


def assert_short_error(done: subprocess.CompletedProcess, *needles: str) -> None:
    """Bad input, told in a few lines that name the field, with the long text clipped."""
    assert done.returncode == 2, done.stderr[:500]
    assert "Traceback" not in done.stderr
    assert len(done.stderr) < 1_000, done.stderr[:500]
    assert "(1000" in done.stderr and "characters)" in done.stderr, done.stderr
    for needle in needles:
        assert needle in done.stderr, done.stderr


@pytest.mark.parametrize(
    ("edit", "needle"),
    [
        ('[simulation]\nduration = "1s"', f'[simulation]\nduration = "1s"\n{LONG} = 1'),
        ('rate = "10Mbps"', f'rate = "10Mbps"\n{LONG} = 1'),
        ('rate = "10Mbps"', f'rate = "10{LONG}"'),
        ('rate = "10Mbps"', f'rate = "10Mbps"\nqueue = {{ kind = "{LONG}" }}'),
        (
            'name = "b"',
            f'name = "b"\n[[flows]]\nsrc = "a"\ndst = "{LONG}"\n'
            'source = { kind = "cbr", rate = "1Mbps" }',
        ),
    ],
    ids=["top-key", "nested-key", "unit", "name-field", "node-name"],
)
def test_a_long_key_or_value_is_clipped_in_the_error(tmp_path: Path, edit: str, needle: str):
    scenario = write(tmp_path, NO_FLOWS.replace(edit, needle, 1))
    assert_short_error(fairgate("run", scenario, "--out", tmp_path / "o"), "`")
    assert not (tmp_path / "o").exists()


def test_long_names_and_paths_on_the_command_line_are_clipped(tmp_path: Path):
    long_path = tmp_path / LONG
    scenario = write(tmp_path, LEAKY)
    assert_short_error(fairgate("study", LONG), "expected one of:")
    assert_short_error(fairgate("reproduce", LONG), "expected one of:")
    assert_short_error(fairgate("run", long_path), "File name too long")
    assert_short_error(fairgate("run", scenario, "--out", long_path), "--out", "File name too long")
    assert_short_error(fairgate("query", long_path, "SELECT 1"), "File name too long")
    sweep = write(tmp_path, f'scenario = "{LONG}"\nseeds = 1\n', "sweep.toml")
    assert_short_error(fairgate("sweep", sweep, "--out", tmp_path / "sw"), "`scenario`")
    done = fairgate("run", scenario, "--set", f"simulation.duration={LONG[:60_000]}")
    assert done.returncode == 2 and len(done.stderr) < 1_000, done.stderr[:500]


NOT_UTF8 = os.fsdecode(b"results-\xff")
"""A file name of bytes that are not UTF-8 (Linux allows any); Python holds it as a surrogate."""


@pytest.mark.parametrize(
    "command",
    [
        ["run", "{scenario}", "--out", "{bad}"],
        ["run", "{bad}.toml"],
        ["validate", "{bad}.toml"],
        ["sweep", "{scenario}", "--seeds", "1", "--out", "{bad}"],
        ["study", "keshav-buffers", "--quick", "--out", "{bad}"],
        ["query", "{bad}", "SELECT 1"],
    ],
    ids=["run-out", "run-scenario", "validate", "sweep-out", "study-out", "query-dir"],
)
def test_a_path_that_is_not_utf8_is_refused_before_any_work(tmp_path: Path, command: list[str]):
    # Arrow and DuckDB take UTF-8 paths only: the results would fail once they were written.
    scenario = write(tmp_path, LEAKY)
    (tmp_path / f"{NOT_UTF8}.toml").write_text(LEAKY)
    args = [a.format(scenario=scenario, bad=tmp_path / NOT_UTF8) for a in command]
    done = fairgate(*args)
    assert done.returncode == 2, done.stderr
    assert "which is not UTF-8 text; expected a path in UTF-8" in done.stderr
    assert "Traceback" not in done.stderr and "conservation" not in done.stderr
    assert not (tmp_path / NOT_UTF8).exists()


def test_results_save_refuses_a_path_that_is_not_utf8(tmp_path: Path, two_hosts: fg.Scenario):
    results = two_hosts.run()
    with pytest.raises(fg.ScenarioError, match="out_dir: got .*, which is not UTF-8 text"):
        results.save(tmp_path / NOT_UTF8)
    assert not (tmp_path / NOT_UTF8).exists()


def test_names_the_terminal_cannot_encode_are_printed_escaped(tmp_path: Path):
    scenario = write(tmp_path, LEAKY.replace("[[flows]]\n", '[[flows]]\nname = "débit-π"\n'))
    scenario = write(tmp_path, scenario.read_text().replace('"test_leak", every = 3', '"fifo"'))
    env = {**os.environ, "PYTHONIOENCODING": "ascii"}
    done = subprocess.run(
        [sys.executable, "-m", "fairgate.cli", "run", str(scenario), "--out", str(tmp_path / "o")],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    assert "d\\xe9bit-\\u03c0" in done.stdout
    assert (tmp_path / "o" / "summary.json").exists()


def test_a_long_value_from_python_is_clipped_in_the_error():
    with pytest.raises(fg.ScenarioError) as err:
        fg.sweep(SCENARIOS / "dumbbell_rtt.toml", grid={"simulation.seed": LONG}, seeds=1)
    assert len(str(err.value)) < 300 and "(100002 characters)" in str(err.value)


@pytest.mark.parametrize(
    ("content", "hint"),
    [
        ("x = 1".encode("utf-16"), "UTF-16, by its byte-order mark"),
        (b"\x1f\x8b\x08\x00", "a compressed or binary file"),
        (b'name = "\xe9t\xe9"', ""),
    ],
)
def test_a_file_that_is_not_utf8_is_named_with_what_it_looks_like(
    tmp_path: Path, content: bytes, hint: str
):
    path = tmp_path / "s.toml"
    path.write_bytes(content)
    with pytest.raises(fg.ScenarioError, match="not UTF-8 text") as caught:
        fg.run_file(path)
    assert hint in str(caught.value)
    assert str(caught.value).endswith("expected a TOML file in UTF-8")

"""Bad and extreme input: every class of failure ends in a clear error, never a traceback.

Covers the command line's own crashes (no flows, unknown study, unusable --out checked before
the run), conservation failures made errors everywhere (with the deliberately broken
``test_leak`` discipline), unit strings with their real meaning, NaN and infinities, files,
paths and numbers that are not what they seem, errors across processes and stops by signal.
The property-based scenarios from the builders are in ``test_random_scenarios.py``; what an
error shows of the user's text (clipping, escapes, UTF-8) is in ``test_error_text.py``.
"""

from __future__ import annotations

import json
import math
import multiprocessing
import os
import re
import signal
import socket
import subprocess
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import pandas as pd
import pytest

import fairgate as fg
from conftest import SCENARIOS
from fairgate import _core
from fairgate.runner import check_out_dir
from fairgate.scenario import link_params
from test_cli import fairgate

NO_FLOWS = """
[simulation]
duration = "1s"
[[nodes]]
name = "a"
[[nodes]]
name = "b"
[[links]]
from = "a"
to = "b"
rate = "10Mbps"
"""

LEAKY = (
    NO_FLOWS.replace(
        'rate = "10Mbps"', 'rate = "10Mbps"\nqueue = { kind = "test_leak", every = 3 }'
    )
    + '[[flows]]\nsrc = "a"\ndst = "b"\nsource = { kind = "cbr", rate = "5Mbps" }\n'
)


def write(tmp_path: Path, text: str, name: str = "s.toml") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_a_scenario_without_flows_runs_and_prints_its_tables(tmp_path: Path):
    done = fairgate("run", write(tmp_path, NO_FLOWS), "--out", tmp_path / "o")
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    summary = json.loads((tmp_path / "o" / "summary.json").read_text(encoding="utf-8"))
    assert summary["fairness"]["jain_goodput_data_flows"] is None  # 0/0, not a fair 1
    assert "flows\n(none)\n" in done.stdout and "Empty DataFrame" not in done.stdout


def test_gateways_without_flows_run_and_trace_nothing_for_a_flow_that_does_not_exist():
    """The gateways' totals are traced under flow 0; without flows their rows named a flow the
    flows table does not hold, and building the results failed (found by the mutation fuzz)."""
    text = (SCENARIOS / "spoofing_gateway.toml").read_text(encoding="utf-8")
    text = text[: text.index("[[flows]]")].replace('duration = "60s"', 'duration = "1s"')
    results = fg.run_text(text)
    assert results.flows.empty and results.traces.empty and results.conserved


@pytest.mark.parametrize(("command", "known"), [("study", "keshav-buffers"), ("reproduce", "sfg")])
def test_an_unknown_study_or_reproduction_is_bad_input_naming_the_argument(command, known):
    done = fairgate(command, "no-such-name")
    assert done.returncode == 2
    assert "`name`: got 'no-such-name', expected one of:" in done.stderr
    assert known in done.stderr and "Traceback" not in done.stderr


@pytest.mark.parametrize("command", ["run", "validate", "sweep"])
def test_an_endless_scenario_file_is_refused_not_read_whole(command: str):
    done = fairgate(command, "/dev/zero")
    assert done.returncode == 2, done.stderr
    assert "larger than 64 MiB, expected a TOML file" in done.stderr
    assert "Traceback" not in done.stderr


@pytest.mark.parametrize(
    "where", ["file", "under-file", "dangling-link", "link-loop", "under-loop"]
)
def test_an_unusable_out_is_refused_before_the_run(tmp_path: Path, where: str):
    blocker = write(tmp_path, "not a directory", "blocker")
    (tmp_path / "dangling-link").symlink_to(tmp_path / "missing" / "x")
    (tmp_path / "link-loop").symlink_to("link-loop")
    out = {
        "file": blocker,
        "under-file": blocker / "sub",
        "dangling-link": tmp_path / "dangling-link",
        "link-loop": tmp_path / "link-loop",
        "under-loop": tmp_path / "link-loop" / "sub",
    }[where]
    done = fairgate("run", write(tmp_path, LEAKY), "--out", out)
    assert done.returncode == 2, done.stderr
    assert "--out" in done.stderr and "conservation" not in done.stderr
    assert "Traceback" not in done.stderr


@pytest.mark.parametrize(
    ("option", "where"),
    [
        ("DIR", "link-loop"),
        ("--csv", "link-loop"),
        ("--parquet", "link-loop"),
        ("--csv", "socket"),
        ("--parquet", "link-to-missing-folder"),
    ],
)
def test_query_paths_that_cannot_be_used_are_bad_input(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, option: str, where: str
):
    """A loop of links reached Python's ``resolve`` (a RuntimeError traceback); a socket and a
    link into a missing folder failed only when the rows were written."""
    monkeypatch.chdir(tmp_path)  # a socket's path must be short
    assert fairgate("run", write(tmp_path, NO_FLOWS), "--out", "store").returncode == 0
    Path("link-loop").symlink_to("link-loop")
    Path("link-to-missing-folder").symlink_to("missing/x")
    with socket.socket(socket.AF_UNIX) as listener:
        listener.bind("socket")
        args = [where, "SELECT 1"] if option == "DIR" else ["store", "SELECT 1", option, where]
        done = fairgate("query", *args)
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    assert f"{where}" in done.stderr and (option == "DIR" or option in done.stderr)


@pytest.mark.parametrize("reader", ["Results.load", "sweep.json", "load_inputs"])
def test_a_json_file_without_end_is_refused_not_read_whole(tmp_path: Path, reader: str):
    """A saved summary, a store's manifest or Fourier inputs that lead to ``/dev/zero`` were
    read whole until the memory ran out."""
    from fairgate.fluid.fourier import load_inputs

    (tmp_path / "o").mkdir()
    endless = tmp_path / "o" / ("sweep.json" if reader == "sweep.json" else "summary.json")
    endless.symlink_to("/dev/zero")
    calls = {
        "Results.load": lambda: fg.Results.load(tmp_path / "o"),
        "sweep.json": lambda: fg.run_text(NO_FLOWS).save(tmp_path / "o"),
        "load_inputs": lambda: load_inputs(endless),
    }
    with pytest.raises(fg.ScenarioError, match="larger than 64 MiB"):
        calls[reader]()


def test_an_unwritable_out_is_refused_before_the_run_even_as_root(tmp_path: Path):
    # Permission bits do not stop root; /proc refuses new entries to everyone.
    out = Path("/proc/fairgate-out/sub")
    done = fairgate("run", write(tmp_path, LEAKY), "--out", out)
    assert done.returncode == 2, done.stderr
    assert "--out" in done.stderr and "is not writable" in done.stderr
    assert "conservation" not in done.stderr and "Traceback" not in done.stderr
    assert not out.parent.exists()


def test_a_full_disk_is_a_clear_error_and_leaves_no_output(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
):
    from fairgate.cli import main

    def disk_full(*args: object, **kwargs: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(pd.DataFrame, "to_parquet", disk_full)
    out = tmp_path / "o"
    assert main(["run", str(write(tmp_path, NO_FLOWS)), "--out", str(out), "--quiet"]) == 1
    assert capsys.readouterr().err == (
        "error: `fairgate run` stopped: [Errno 28] No space left on device\n"
    )
    assert not out.exists()


def test_running_out_of_memory_is_one_line_and_leaves_no_output(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
):
    from fairgate.cli import main

    def no_memory(*args: object, **kwargs: object) -> None:
        raise MemoryError

    monkeypatch.setattr(pd.DataFrame, "to_parquet", no_memory)
    out = tmp_path / "o"
    assert main(["run", str(write(tmp_path, NO_FLOWS)), "--out", str(out), "--quiet"]) == 1
    assert capsys.readouterr().err == "error: `fairgate run` stopped: out of memory\n"
    assert not out.exists()


def test_an_override_of_the_wrong_form_is_not_blamed_on_the_file(tmp_path: Path):
    """ "error: s.toml: `--set nokey`: expected key.path=value" named the scenario file for a
    mistake on the command line."""
    done = fairgate("run", write(tmp_path, NO_FLOWS), "--set", "nokey")
    assert done.returncode == 2
    assert done.stderr.startswith("error: `--set nokey`: expected key.path=value"), done.stderr


def test_seeds_of_a_cell_network_are_refused_naming_the_option(tmp_path: Path):
    """`fairgate run dfba_e3.toml --seeds 2` said "sweeps run packet networks (run cell
    networks with `fairgate run` ...)" to a user who had run `fairgate run`."""
    done = fairgate("run", SCENARIOS / "dfba_e3.toml", "--seeds", "2", "--out", tmp_path / "o")
    assert done.returncode == 2
    assert done.stderr.startswith("error: --seeds: repeats packet scenarios"), done.stderr
    assert "--seed N" in done.stderr and not (tmp_path / "o").exists()


def test_the_out_probe_leaves_nothing_behind(tmp_path: Path):
    check_out_dir(tmp_path / "new" / "dir")
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    "override",
    ["simulation.duration=0", "flows[0].source.rate=zz", "flows[0].count=0", "links[0].delay=-1ms"],
)
def test_errors_name_the_field_path_once(tmp_path: Path, override: str):
    path = override.split("=")[0]
    with pytest.raises(fg.ScenarioError) as caught:
        _core.validate(LEAKY, [override])
    assert str(caught.value).count(path) == 1, str(caught.value)
    assert caught.value.path == path
    assert caught.value.message in str(caught.value)
    done = fairgate("validate", write(tmp_path, LEAKY), "--set", override)
    assert done.returncode == 2
    assert done.stderr.count(path) == 1, done.stderr


def test_an_option_error_is_not_put_on_the_scenario_file(tmp_path: Path):
    """``error: s.toml: --workers: ...`` read as if the file were at fault."""
    scenario = write(tmp_path, LEAKY)
    bad_option = fairgate("run", scenario, "--seeds", "2", "--workers", "0")
    assert bad_option.returncode == 2
    assert bad_option.stderr.startswith("error: --workers: got 0"), bad_option.stderr
    bad_field = fairgate("run", scenario, "--set", "simulation.duration=0")
    assert bad_field.stderr.startswith(f"error: {scenario}: `simulation.duration`")
    # A cluster option without --seeds would be silently ignored by a single run.
    for option in (["--workers", "2"], ["--scheduler", "tcp://127.0.0.1:9"]):
        ignored = fairgate("run", scenario, *option, "--out", tmp_path / "o")
        assert ignored.returncode == 2
        assert ignored.stderr.startswith(f"error: {option[0]}: sends the runs of --seeds N")
        assert not (tmp_path / "o").exists()


def test_study_and_reproduce_check_out_too(tmp_path: Path):
    blocker = write(tmp_path, "x", "blocker")
    for command in ("study", "reproduce"):
        name = "keshav-buffers" if command == "study" else "keshav"
        done = fairgate(command, name, "--quick", "--out", blocker)
        assert done.returncode == 2, done.stderr
        assert "--out" in done.stderr


def test_a_conservation_failure_is_an_error_on_stderr_even_when_quiet(tmp_path: Path):
    out = tmp_path / "o"
    done = fairgate("run", write(tmp_path, LEAKY), "--out", out, "--quiet")
    assert done.returncode == 1
    assert re.search(r"conservation violated \(.*\d+ flows?\): .*flow f0: offered", done.stderr)
    assert done.stdout == ""
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    assert summary["valid"] is False


def test_a_conservation_failure_raises_in_python_with_the_invalid_results():
    with pytest.raises(fg.ConservationError) as caught:
        fg.run_text(LEAKY)
    assert isinstance(caught.value, fg.SimulationError)
    assert caught.value.results.summary["valid"] is False
    assert "port a->b" in str(caught.value)


def test_errors_cross_a_process_boundary_whole():
    """A worker's error reaches the caller as itself (Dask and multiprocessing pickle it):
    the core's errors were named after a module `_core` pickle could not import."""
    context = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(max_workers=1, mp_context=context) as pool:
        with pytest.raises(fg.ScenarioError) as bad:
            pool.submit(fg.validate_text, "x = 1").result()
        assert bad.value.path == "x"
        with pytest.raises(fg.ConservationError) as leaked:
            pool.submit(fg.run_text, LEAKY).result()
    assert leaked.value.results.summary["valid"] is False
    assert "port a->b" in str(leaked.value)


def test_valid_runs_are_marked_valid(two_hosts: fg.Scenario):
    two_hosts.flow("a", "b", fg.source("cbr", rate="1Mbps"))
    assert two_hosts.run().summary["valid"] is True


@pytest.mark.parametrize("t", [math.nan, math.inf, -math.inf])
def test_run_until_refuses_non_finite_times(t: float):
    sim = _core.load(NO_FLOWS)
    with pytest.raises(fg.ScenarioError, match="run_until.t"):
        sim.run_until(t)


def test_run_until_refuses_a_time_before_now_and_accepts_now():
    sim = _core.load(NO_FLOWS)
    with pytest.raises(fg.ScenarioError, match="run_until.t") as caught:
        sim.run_until(-1.0)
    assert caught.value.path == "run_until.t"
    assert str(caught.value).startswith("`run_until.t`: got -1")
    sim.run_until(0.25)
    sim.run_until(sim.now_s)
    with pytest.raises(fg.ScenarioError, match=r"at or after now_s \(0\.25\)"):
        sim.run_until(0.1)
    sim.run_until(0.5)
    assert sim.now_s == 0.5


@pytest.mark.parametrize(
    ("field", "value", "path"),
    [
        ("duration", math.nan, "simulation.duration"),
        ("sample_interval", math.inf, "simulation.sample_interval"),
    ],
)
def test_builders_refuse_nan_and_infinity(field: str, value: float, path: str):
    sc = fg.Scenario("x", **{field: value})
    with pytest.raises(fg.ScenarioError, match=path.replace(".", r"\.")):
        sc.validate()


@pytest.mark.parametrize(
    ("edit", "field"),
    [
        ('name = "b"', "`nodes[1].name`: got date-time `2024-01-01`"),
        ('rate = "10Mbps"', "`links[0].rate`: got date-time `2024-01-01`"),
        ('kind = "cbr"', "`flows[0].source.kind`: got date-time `2024-01-01`"),
        ('rate = "5Mbps"', "`flows[0].source.rate`: got date-time `2024-01-01`"),
    ],
)
def test_a_toml_date_is_refused_not_taken_as_text(edit: str, field: str):
    """toml hands a date on as its text: ``name = 2024-01-01`` named a node "2024-01-01"
    while ``name = 5`` is refused."""
    cbr = '[[flows]]\nsrc = "a"\ndst = "b"\nsource = { kind = "cbr", rate = "5Mbps" }\n'
    text = (NO_FLOWS + cbr).replace(edit, edit.split("=")[0] + "= 2024-01-01")
    with pytest.raises(fg.ScenarioError, match=re.escape(field)):
        fg.validate_text(text)


def test_builders_refuse_integers_past_64_bits_and_tables_inside_themselves():
    """Both reached the core's TOML parser as "got integer as i128, expected any valid TOML
    value", or recursed until Python's RecursionError."""
    big = fg.Scenario("x", seed=2**64)
    with pytest.raises(fg.ScenarioError, match=r"`simulation.seed`: got 18446744073709551616, "):
        big.validate()
    looped: dict = {"kind": "red"}
    looped["self"] = looped
    with pytest.raises(fg.ScenarioError, match="nested deeper than 64 levels"):
        access = link_params("10Mbps", "1ms")
        fg.Scenario("x").dumbbell(2, link_params("1Mbps", "1ms", looped), access).validate()
    with pytest.raises(fg.ScenarioError, match="expected a whole number from -9223372036854775808"):
        fg.validate_text("[simulation]\nseed = 99999999999999999999\n")


@pytest.mark.parametrize(
    ("rate", "bps"),
    [("10Mbps", 10_000_000), ("10MBps", 80_000_000), ("10 MB/s", 80_000_000), ("3Mbit", 3e6)],
)
def test_rate_units_keep_their_meaning(rate: str, bps: float):
    sc = fg.Scenario("units").node("a").node("b").link("a", "b", rate)
    assert sc.validate()["links"][0]["rate"] == bps


@pytest.mark.parametrize("rate", ["10mbps", "10MBPS", "10 megabits"])
def test_ambiguous_rate_units_are_refused_with_the_accepted_list(rate: str):
    sc = fg.Scenario("units").node("a").node("b").link("a", "b", rate)
    with pytest.raises(fg.ScenarioError, match="Mbps, Mb/s, Mbit/s"):
        sc.validate()


@pytest.mark.parametrize("seed", ["-3", "9" * 23, str(2**63)])
def test_a_seed_outside_what_a_scenario_holds_names_the_option(tmp_path: Path, seed: str):
    scenario = write(tmp_path, NO_FLOWS)
    done = fairgate("run", scenario, "--seed", seed, "--out", tmp_path / "o")
    assert done.returncode == 2
    expected = f"expected a whole number from 0 to {2**63 - 1}"
    assert done.stderr == f"error: --seed: got {seed}, {expected}\n"


@pytest.mark.parametrize(
    ("seed", "got"),
    [(True, "bool True"), (2.0, "float 2.0"), (-1, "-1"), (2**63, str(2**63)), ("3", "str '3'")],
)
def test_a_python_seed_is_checked_as_a_seed_naming_the_argument(seed: object, got: str):
    """``Scenario.run(seed=True)`` was refused as `simulation.seed`: got string "True", and
    2**63 as an error about ``--set``, an option the program never used."""
    scenario = fg.Scenario("s", duration=1).node("a")
    expected = f"seed: got {got}, expected a whole number from 0 to {2**63 - 1}"
    with pytest.raises(fg.ScenarioError, match=f"^{re.escape(expected)}$"):
        scenario.run(seed=seed)


def test_a_whole_number_too_large_for_toml_is_refused_not_read_as_a_word():
    """An override's bare word is a string, but 23 digits were a string too (a seed of
    10^23 was refused as `got string "1e23"`)."""
    with pytest.raises(fg.ScenarioError, match=r"got 9\.9+e22, expected a whole number"):
        fg.validate_text(NO_FLOWS, [f"simulation.seed={'9' * 23}"])


def test_an_empty_path_argument_is_refused_not_read_as_the_current_directory(tmp_path: Path):
    scenario = write(tmp_path, LEAKY)
    for args in [("run", scenario, "--out", ""), ("run", ""), ("query", "", "SELECT 1")]:
        done = fairgate(*args)
        assert done.returncode == 2, (args, done.stderr)
        assert "got an empty path" in done.stderr and "Traceback" not in done.stderr
    done = fairgate("query", tmp_path, "SELECT 1", "--csv", "/proc/fairgate.csv")
    assert done.returncode == 2 and "--csv" in done.stderr and "is not writable" in done.stderr


def test_loading_results_from_a_directory_without_them_names_the_directory(tmp_path: Path):
    (tmp_path / "bad").mkdir()
    (tmp_path / "bad" / "summary.json").write_text("{not json", encoding="utf-8")
    (tmp_path / "half").mkdir()
    (tmp_path / "half" / "summary.json").write_text("{}", encoding="utf-8")
    for where, reason in [
        ("missing", "no such directory"),
        ("bad", "summary.json: Expecting property name"),
        ("half", "no flows.parquet"),
    ]:
        with pytest.raises(fg.ScenarioError, match=rf"cannot read saved results \({reason}"):
            fg.Results.load(tmp_path / where)
    done = fairgate(
        "run",
        SCENARIOS / "dfba_e3.toml",
        "--out",
        tmp_path / "atm",
        "--quiet",
        "--set",
        "simulation.duration=1s",
        "--set",
        "simulation.warmup=0.2s",
    )
    assert done.returncode == 0, done.stderr
    with pytest.raises(fg.ScenarioError, match=r"it holds a cell network's run \(vcs, "):
        fg.Results.load(tmp_path / "atm")
    (tmp_path / "store").mkdir()
    (tmp_path / "store" / "sweep.json").write_text("{}", encoding="utf-8")
    with pytest.raises(fg.ScenarioError, match=r"sweep's store: read it with fairgate\.sweeps"):
        fg.Results.load(tmp_path / "store")


def test_a_damaged_table_of_a_run_is_named_not_taken_for_a_sweep(tmp_path: Path):
    """`fairgate run --out` writes a one-point store beside the run's tables: a damaged
    `flows.parquet` was reported without its name and with "it holds a sweep's store: read
    it with fairgate.sweeps.query", which answers from the store, not from the damaged file."""
    out = tmp_path / "o"
    assert fairgate("run", write(tmp_path, NO_FLOWS), "--out", out, "--quiet").returncode == 0
    (out / "flows.parquet").write_bytes((out / "flows.parquet").read_bytes()[:100])
    with pytest.raises(fg.ScenarioError) as caught:
        fg.Results.load(out)
    assert "(flows.parquet: " in str(caught.value) and "sweep" not in str(caught.value)


@pytest.mark.parametrize(
    ("damage", "named"),
    [
        ("summary {}", "summary.json: expected a JSON object with a `conservation` entry"),
        ("summary schema 7", "summary.json: `schema_version`: got 7, expected 2"),
        ("summary without causes", "summary.json: `schema_version`: got 2, expected 2"),
        ("ports as flows", "flows.parquet: missing column(s) flow, role"),
        ("flows without goodput", "flows.parquet: missing column(s) goodput_bps"),
        ("goodput as text", "flows.parquet: column `goodput_bps` holds text (str), expected"),
        ("flow names as numbers", "flows.parquet: column `flow` holds number (int64), expected"),
    ],
)
def test_saved_results_without_what_results_reads_are_refused_naming_the_file(
    tmp_path: Path, damage: str, named: str
):
    """Tables or a summary of another shape were loaded, and a method failed later with a
    KeyError (``conserved`` of a summary ``{}``, ``throughput`` of a flows table that held
    the ports)."""
    out = fg.run_text(LEAKY.replace('kind = "test_leak", every = 3', 'kind = "fifo"')).save(
        tmp_path / "o"
    )
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    if damage == "summary {}":
        summary = {}
    elif damage == "summary schema 7":
        summary["schema_version"] = 7
    elif damage == "summary without causes":
        del summary["drop_causes"]
    elif damage == "ports as flows":
        (out / "flows.parquet").write_bytes((out / "ports.parquet").read_bytes())
    elif damage == "flows without goodput":
        flows = fg.Results.load(out).flows.drop(columns="goodput_bps")
        flows.to_parquet(out / "flows.parquet")
    else:  # a table rewritten by another program: plots and methods computed with it silently
        flows = fg.Results.load(out).flows
        if damage == "goodput as text":
            flows["goodput_bps"] = flows["goodput_bps"].astype(str)
        else:
            flows["flow"] = range(len(flows))
        flows.to_parquet(out / "flows.parquet")
    (out / "summary.json").write_text(json.dumps(summary), encoding="utf-8")
    with pytest.raises(fg.ScenarioError, match=re.escape(named)):
        fg.Results.load(out)


@pytest.mark.parametrize(
    "signum, status, said",
    [
        (signal.SIGINT, 130, "interrupted"),
        (signal.SIGTERM, 143, "stopped by SIGTERM"),
        (signal.SIGHUP, 129, "stopped by SIGHUP"),
    ],
)
def test_a_run_stopped_by_a_signal_says_so_and_leaves_no_output(
    tmp_path: Path, signum: int, status: int, said: str
):
    """Ctrl-C, a batch system's SIGTERM and a closed terminal's SIGHUP stop a run the same
    way: the exit status of the signal, a line on stderr, no traceback, no output."""
    out = tmp_path / "o"
    showcase = Path(__file__).resolve().parents[1] / "scenarios" / "showcase.toml"
    cmd = [sys.executable, "-m", "fairgate.cli", "run", str(showcase), "--out", str(out)]
    cmd += ["--set", "simulation.duration=100000s", "--set", "simulation.sample_interval=10s"]
    process = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    seen = b""
    while b"simulated" not in seen:  # the run has started: stop it
        chunk = process.stderr.read(64)
        assert chunk, seen.decode(errors="replace")
        seen += chunk
    process.send_signal(signum)
    stderr = (seen + process.stderr.read()).decode(errors="replace")
    assert process.wait(timeout=60) == status
    assert f"{said}: `fairgate run` stopped before it finished" in stderr
    assert "Traceback" not in stderr and not out.exists()


@pytest.mark.parametrize("signum, status", [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_a_cell_network_run_stops_on_a_signal(tmp_path: Path, signum: int, status: int):
    """A cell network ran in one call of the core: Ctrl-C waited for its end (a run at 10^11
    cells/s was still going 40 s later). It now runs in pieces of a quarter second."""
    out = tmp_path / "o"
    dfba = Path(__file__).resolve().parents[1] / "scenarios" / "dfba_e3.toml"
    cmd = [sys.executable, "-m", "fairgate.cli", "run", str(dfba), "--out", str(out)]
    cmd += ["--set", "atm.links.cell_rate=1e11", "--set", "simulation.duration=20s"]
    process = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    time.sleep(3)  # imported, validated and running
    process.send_signal(signum)
    assert process.wait(timeout=60) == status
    stderr = process.stderr.read().decode(errors="replace")
    assert "stopped before it finished" in stderr and "Traceback" not in stderr
    assert not out.exists()


def test_a_log_outgrowing_the_memory_limit_is_bad_input_naming_its_field(tmp_path: Path):
    scenario = write(
        tmp_path,
        NO_FLOWS.replace('duration = "1s"', 'duration = "60s"\nmemory_limit_mib = 2')
        + '[[flows]]\nsrc = "a"\ndst = "b"\nsource = { kind = "tcp" }\n',
    )
    done = fairgate(
        "run", scenario, "--out", tmp_path / "o", "--set", "simulation.trace_every_change=true"
    )
    assert done.returncode == 2, done.stderr
    assert "`simulation.trace_every_change`: the window-change trace reached" in done.stderr
    assert "MiB the scenario leaves of the memory limit of 2 MiB;" in done.stderr
    assert done.stderr.rstrip().endswith("or raise simulation.memory_limit_mib on purpose")
    assert "Traceback" not in done.stderr and not (tmp_path / "o").exists()
    with pytest.raises(fg.ScenarioError) as caught:
        fg.run_file(scenario, ["simulation.trace_every_change=true"])
    assert caught.value.path == "simulation.trace_every_change"


@pytest.mark.parametrize("command", [["study", "two-server", "--quick"], ["run", "--plot"]])
def test_an_unknown_matplotlib_backend_is_named_before_a_command_draws(tmp_path, command):
    showcase = Path(__file__).resolve().parents[1] / "scenarios" / "showcase.toml"
    args = [*command, "--out", str(tmp_path / "o")]
    if command[0] == "run":
        args[1:1] = [str(showcase)]
    done = subprocess.run(
        [sys.executable, "-m", "fairgate.cli", *args],
        capture_output=True, text=True, timeout=120,
        env={**os.environ, "MPLBACKEND": "bogus"},
    )  # fmt: skip
    assert done.returncode == 2, done.stderr
    assert done.stderr == (
        "error: MPLBACKEND: got 'bogus', expected a Matplotlib backend such as agg, or none "
        "(fairgate's figures need none)\n"
    )
    assert not (tmp_path / "o").exists()


def _some_results() -> fg.Results:
    return fg.run_text(NO_FLOWS)


@pytest.mark.parametrize(
    "call, named",
    [
        (lambda: fg.run_text(b"[simulation]"), "text: got bytes b'[simulation]', expected TOML"),
        (lambda: fg.validate_text(None), "text: got None, expected TOML text (str)"),
        # A number would be opened as a file descriptor (and closed after reading it).
        (lambda: fg.run_file(3), "scenario file: got int 3, expected a path"),
        (lambda: fg.validate_file(None), "scenario file: got None, expected a path"),
        (lambda: fg.Results.load(5), "out_dir: got int 5, expected a path"),
        (lambda: _some_results().save(["o"]), "out_dir: got list ['o'], expected a path"),
        (lambda: fg.sweep(fg.Scenario("x", duration=1), out=3), "out: got int 3, expected a"),
        (lambda: fg.atm.run_atm(3), "scenario: got int 3, expected TOML text or its dict"),
    ],
)
def test_a_value_of_the_wrong_type_is_a_scenario_error_naming_the_parameter(call, named):
    with pytest.raises(fg.ScenarioError, match=re.escape(named)):
        call()


def test_a_run_started_under_nohup_survives_a_hangup(tmp_path: Path):
    """A signal the process was started ignoring stays ignored: `nohup` is how a run is kept
    alive past its terminal."""
    out = tmp_path / "o"
    soak = Path(__file__).resolve().parents[1] / "scenarios" / "soak.toml"
    cmd = [sys.executable, "-m", "fairgate.cli", "run", str(soak), "--out", str(out), "--quiet"]
    cmd += ["--set", "simulation.duration=300s"]
    process = subprocess.Popen(
        cmd,
        stderr=subprocess.PIPE,
        preexec_fn=lambda: signal.signal(signal.SIGHUP, signal.SIG_IGN),  # as nohup does
    )
    time.sleep(1.0)  # inside the run (about 1.5 s)
    process.send_signal(signal.SIGHUP)
    assert process.wait(timeout=120) == 0, process.stderr.read()
    assert (out / "summary.json").exists()


def test_a_short_override_path_is_told_its_full_path():
    """A sweep axis takes `bottleneck.queue.limit` for `topology.bottleneck.queue.limit`;
    `--set` and a sweep file's `set` take full paths, and said only "unknown field"."""
    showcase = (SCENARIOS / "showcase.toml").read_text(encoding="utf-8")
    with pytest.raises(fg.ScenarioError, match=r"takes a full path: `topology\.bottleneck\.rate`"):
        fg.validate_text(showcase, ["bottleneck.rate=5Mbps"])


def test_a_cell_network_run_reports_its_progress():
    """A cell network ran without a progress bar (200 s of the DFBA network take 14 s)."""
    text = (SCENARIOS / "dfba_e3.toml").read_text(encoding="utf-8")
    reported: list[tuple[float, float]] = []
    _core.atm_run(text, ["simulation.duration=10s"], lambda now, end: reported.append((now, end)))
    assert reported, "a run of about a second reports after each quarter second"
    assert all(end == 10.0 for _, end in reported)
    assert [now for now, _ in reported] == sorted(now for now, _ in reported)
    assert 0 < reported[-1][0] < 10.0
    with pytest.raises(fg.ScenarioError, match="progress: got 'yes', expected True or False"):
        fg.atm.run_atm(text, progress="yes")

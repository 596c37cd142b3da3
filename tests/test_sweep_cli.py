"""`fairgate sweep`, `fairgate query` and `fairgate run --seeds N`."""

from __future__ import annotations

import json
import os
import resource
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest

from fairgate.checks import clipped
from fairgate.cli import main
from fairgate.sweeps import query, store

ROOT = Path(__file__).resolve().parent.parent
SHOWCASE = ROOT / "scenarios" / "showcase.toml"
SHORT = ["--set", "simulation.duration=12s", "--workers", "2"]


def test_sweep_from_cli_axes_then_resume_then_query(tmp_path: Path, capsys):
    out = tmp_path / "store"
    args = ["sweep", str(SHOWCASE), "--grid", "bottleneck.queue.limit=5,60", "--out", str(out)]
    assert main([*args, "--zip", "flows[3].source.rate=1Mbps,3Mbps", *SHORT]) == 0
    text = capsys.readouterr().out
    assert "4 points: 4 ran, 0 already finished, 0 failed" in text
    assert "bottleneck.queue.limit" in text and "flows[3].source.rate" in text
    assert main([*args, "--zip", "flows[3].source.rate=1Mbps,3Mbps", *SHORT]) == 0
    assert "4 points: 0 ran, 4 already finished" in capsys.readouterr().out

    sql = (
        'SELECT "bottleneck.queue.limit" AS buffer, sum(dropped_pkts) AS drops '
        "FROM summary GROUP BY 1 ORDER BY 1"
    )
    assert main(["query", str(out), sql]) == 0
    printed = capsys.readouterr().out
    assert printed.splitlines()[0].split() == ["buffer", "drops"]
    csv = tmp_path / "q.csv"
    assert main(["query", str(out), sql, "--csv", str(csv)]) == 0
    frame = pd.read_csv(csv)
    assert frame["buffer"].tolist() == [5, 60]
    assert (frame["drops"] > 0).all() and frame["drops"].nunique() == 2


def test_sweep_file_with_named_axes_and_seeds(tmp_path: Path, capsys):
    sweep = tmp_path / "sweep.toml"
    sweep.write_text(
        f'scenario = "{SHOWCASE}"\nseeds = 2\nset = ["simulation.duration=12s"]\n'
        '[grid]\nbuffer = { path = "bottleneck.queue.limit", values = [5, 60] }\n',
        encoding="utf-8",
    )
    out = tmp_path / "store"
    assert main(["sweep", str(sweep), "--out", str(out), "--workers", "2"]) == 0
    assert "4 points: 4 ran" in capsys.readouterr().out
    summary = pd.read_parquet(out / "summary")
    assert sorted(zip(summary["buffer"], summary["seed"], strict=True)) == [
        (5, 1),
        (5, 2),
        (60, 1),
        (60, 2),
    ]


def test_validate_checks_a_sweep_file_and_run_names_it(tmp_path: Path, capsys):
    """`fairgate validate` checks every point of a sweep file without running one; `fairgate
    run` names a sweep file for what it is (its `scenario` key was read as a scenario's)."""
    sweep = tmp_path / "sweep.toml"
    sweep.write_text(
        f'scenario = "{SHOWCASE}"\nseeds = 3\n'
        '[grid]\nbuffer = { path = "bottleneck.queue.limit", values = [5, 60] }\n',
        encoding="utf-8",
    )
    assert main(["validate", str(sweep)]) == 0
    said = capsys.readouterr().out
    assert said == f"{sweep}: valid sweep of 6 points (buffer; 3 seeds) over {SHOWCASE}\n"
    one = tmp_path / "one.toml"
    one.write_text(f'scenario = "{SHOWCASE}"\n', encoding="utf-8")
    assert main(["validate", str(one)]) == 0
    said = capsys.readouterr().out  # it said "1 points"
    assert said == f"{one}: valid sweep of 1 point (no axes; 1 seed) over {SHOWCASE}\n"
    sweep.write_text(sweep.read_text().replace("60]", "-1]"), encoding="utf-8")
    assert main(["validate", str(sweep)]) == 2
    assert "axis `buffer` = -1" in capsys.readouterr().err
    for extra in ([], ["--seeds", "2"]):
        assert main(["run", str(sweep), "--out", str(tmp_path / "o"), *extra]) == 2
        error = capsys.readouterr().err
        assert "got a sweep file (it has a `scenario` key), expected a scenario file" in error
        assert f"run a sweep file with `fairgate sweep {sweep}`" in error
    assert not (tmp_path / "o").exists()


def test_bad_axes_exit_2_naming_the_axis_and_write_nothing(tmp_path: Path, capsys):
    out = tmp_path / "store"
    cases = [
        (["--grid", "bottleneck.queue.limt=5"], "axis `bottleneck.queue.limt` = 5"),
        (["--grid", "bottleneck.queue.limit="], "axis `bottleneck.queue.limit`: empty"),
        (["--grid", "queue.limit=5"], "`queue.limit` is ambiguous"),
        (["--grid", "bottleneck.rate=fast"], 'axis `bottleneck.rate` = "fast"'),
        (["--zip", "bottleneck.rate=1Mbps,2Mbps", "--zip", "bottleneck.delay=1ms"], "equal"),
        (["--scheduler", "tcp://127.0.0.1:9"], "--scheduler: cannot reach tcp://127.0.0.1:9"),
        (["--scheduler", "tcp://[::1"], "--scheduler: got 'tcp://[::1', expected an address"),
        (["--seeds", "1000000000"], "--seeds: got 1000000000, expected at most 1,000,000"),
        (["--seeds", "0"], "--seeds: got 0, expected at least 1"),
        (
            ["--grid", "bottleneck.rate=1e400"],
            "axis `bottleneck.rate`: got 1e400, expected a number a float holds",
        ),
        (
            ["--grid", "bottleneck.queue.limit=10," + "9" * 23],
            f"axis `bottleneck.queue.limit`: got {'9' * 23}, expected a whole number from",
        ),
        (["--workers", "1000000"], "--workers: got 1000000, expected at most"),
        (  # a typo in an inline table: a syntax error, not a word refused as "expected a table"
            ["--grid", 'bottleneck.queue={kind="red", limit='],
            'axis `bottleneck.queue`: got {kind="red", limit=, which is not a TOML table',
        ),
        # Each point's seed comes from the seeds, after the axes: each seed would run twice.
        (
            ["--grid", "simulation.seed=1,2", "--seeds", "2"],
            "axis `simulation.seed`: sets `simulation.seed`, which each point takes from the seeds",
        ),
        (["--grid", "name=a,b"], "axis `name`: sets the scenario's `name`, a label"),
        (  # the axis is applied after the fixed override: each point lost it without a word
            ["--grid", "bottleneck.rate=1Mbps,2Mbps", "--set", "topology.bottleneck.rate=5Mbps"],
            "axis `bottleneck.rate`: sets `topology.bottleneck.rate`, which the fixed override "
            "`topology.bottleneck.rate=5Mbps` (--set, overrides= or a sweep file's `set`) sets too",
        ),
        (  # a date inside a table: its place named, not "not a TOML table" (and no `v`)
            ["--grid", 'bottleneck.queue={kind="fifo", limit=2020-01-01},{kind="red"}'],
            'axis `bottleneck.queue`: `limit` of {kind="fifo", limit=2020-01-01}: got date-',
        ),
        (
            ["--grid", "bottleneck.rate=2Mbps,2000kbps"],
            "value 2 gives the same scenario as value 1",
        ),
        (
            ["--grid", "bottleneck.queue.limit=" + ",".join(map(str, range(1, 1002)))]
            + ["--seeds", "1000"],
            "axis `bottleneck.queue.limit`: the sweep has 1,001,000 points",
        ),
    ]
    for extra, message in cases:
        code = main(["sweep", str(SHOWCASE), "--out", str(out), *extra])
        err = capsys.readouterr().err
        assert code == 2, (extra, err)
        assert message in err, (extra, err)
        assert not (out / "summary").exists()
    bad = tmp_path / "bad.toml"
    bad.write_text(f'scenario = "{SHOWCASE}"\ngird = {{}}\n', encoding="utf-8")
    assert main(["sweep", str(bad)]) == 2
    assert "`gird`: unknown key" in capsys.readouterr().err
    bad_files = [
        ("scenario = 1\n", "`scenario`: got 1, expected the path of a scenario file"),
        ('scenario = "bad.toml"\n', "`scenario`: got 'bad.toml', which is a sweep file"),
        ('scenario = "."\n', f"`scenario`: got '.' ({tmp_path}), which is not a regular file"),
        (
            'scenario = "no.toml"\n',
            f"`scenario`: got 'no.toml' ({tmp_path / 'no.toml'}), which does not exist",
        ),
        (f'scenario = "{SHOWCASE}"\nseeds = 0\n', "seeds: got 0, expected at least 1"),
        (f'scenario = "{SHOWCASE}"\nseeds = []\n', "seeds: empty"),
        (f'scenario = "{SHOWCASE}"\n[[zip]]\n', "zip: a group with no axes"),
        (f'scenario = "{SHOWCASE}"\nseeds = [18446744073709551615]\n', "value was too large"),
        # a date reached Python as toml's private table {"$__toml_private_datetime": ...}
        ("scenario = 2020-01-01\n", "`scenario`: got date-time `2020-01-01` (no field takes"),
        (
            f'scenario = "{SHOWCASE}"\n[grid]\n"bottleneck.queue.limit" = [20, 07:00:00]\n',
            "`grid.bottleneck.queue.limit[1]`: got date-time `07:00:00`",
        ),
        (
            f'scenario = "{SHOWCASE}"\nset = ["topology.bottleneck.queue.limit = 9"]\n'
            '[grid]\n"bottleneck.queue.limit" = [20, 30]\n',
            "which the fixed override `topology.bottleneck.queue.limit = 9` (--set,",
        ),
    ]
    for text, message in bad_files:
        bad.write_text(text, encoding="utf-8")
        assert main(["sweep", str(bad), "--out", str(out)]) == 2, text
        err = capsys.readouterr().err
        assert err.startswith(f"error: {clipped(str(bad))}: ") and message in err, text
    unknown_field = tmp_path / "unknown_field.toml"
    unknown_field.write_text("x = 1\n" + SHOWCASE.read_text(encoding="utf-8"), encoding="utf-8")
    bad.write_text(f'scenario = "{unknown_field.name}"\n', encoding="utf-8")
    for command in (["sweep", str(bad), "--out", str(out)], ["validate", str(bad)]):
        assert main(command) == 2
        err = capsys.readouterr().err
        scenario = clipped(str(unknown_field))  # long temporary paths are clipped
        assert err.startswith(f"error: {clipped(str(bad))}: its scenario {scenario}: `x`: "), err
    assert main(["query", str(tmp_path), "SELECT 1"]) == 2
    assert "no results here" in capsys.readouterr().err


def test_run_with_seeds_prints_intervals_and_writes_a_store(tmp_path: Path, capsys):
    out = tmp_path / "run"
    code = main(["run", str(SHOWCASE), "--seeds", "3", "--seed", "4", "--out", str(out), *SHORT])
    assert code == 0
    text = capsys.readouterr().out
    assert "3 points: 3 ran" in text and "goodput Mb/s" in text and "tcp-40ms" in text
    # The showcase draws no random number: its intervals of 0 are explained.
    assert "note: every seed gave the same run at every point" in text
    summary = pd.read_parquet(out / "summary")
    assert sorted(summary["seed"]) == [4, 5, 6]


@pytest.mark.parametrize(
    "signum, status", [(signal.SIGINT, 130), (signal.SIGTERM, 143), (signal.SIGHUP, 129)]
)
def test_a_stopped_sweep_keeps_only_whole_points_and_a_rerun_finishes(
    tmp_path: Path, signum: int, status: int
):
    """Ctrl-C in a terminal, a batch system's SIGTERM and a closed terminal's SIGHUP reach
    the whole process group: the client handles each, the workers ignore them."""
    out = tmp_path / "store"
    command = [
        sys.executable, "-m", "fairgate.cli", "sweep", str(SHOWCASE), "--out", str(out),
        "--grid", "bottleneck.queue.limit=" + ",".join(str(n) for n in range(5, 17)),
        "--set", "simulation.duration=100s", "--workers", "2", "--quiet",
    ]  # fmt: skip
    proc = subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True
    )
    deadline = time.monotonic() + 120
    while not list(out.glob("summary/point=*")) and time.monotonic() < deadline:
        time.sleep(0.05)
    os.killpg(proc.pid, signum)  # as a terminal's Ctrl-C: the workers get it too
    stdout, stderr = proc.communicate(timeout=120)
    assert proc.returncode == status, stdout
    # The workers leave the signal to the client; the resource tracker cleans up silently.
    assert "Traceback" not in stderr and "Warning" not in stderr, stderr
    assert "run the same command to resume" in stderr
    done = {p.name for p in out.glob("summary/point=*")}
    assert 0 < len(done) < 12
    for table in ("flows", "ports"):
        assert {p.name for p in out.glob(f"{table}/point=*")} >= done
    assert not list(out.glob(".staging/*"))
    rerun = subprocess.run(command[:-1], capture_output=True, text=True, timeout=600)
    assert rerun.returncode == 0, rerun.stderr
    assert f"{len(done)} already finished" in rerun.stdout


def spawned_children(pid: int) -> list[int]:
    """The processes `pid` spawned through multiprocessing (workers, the resource tracker)."""
    found = []
    for entry in Path("/proc").iterdir():
        try:
            ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            spawned = b"multiprocessing" in (entry / "cmdline").read_bytes()
        except (OSError, ValueError, IndexError):
            continue
        if ppid == pid and spawned:
            found.append(int(entry.name))
    return found


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGHUP])
@pytest.mark.parametrize("when", ["as the workers start", "mid-point"])
def test_a_stopped_sweep_says_one_line_whenever_it_is_stopped(
    tmp_path: Path, signum: int, when: str
):
    """Workers starting (importing fairgate) once stopped with a traceback each and Dask's
    cluster, closed half-started, with an AssertionError; workers stopped mid-point leave
    semaphores to multiprocessing's resource tracker, which removes them without a warning,
    and a hangup of the whole group does not kill it (a new one printed a traceback for each
    name it never saw). Either way: one line, and the status of the signal."""
    soak = SHOWCASE.parent / "soak.toml"
    command = [
        sys.executable, "-m", "fairgate.cli", "sweep", str(soak), "--out", str(tmp_path / "s"),
        "--set", "simulation.duration=5000s", "--seeds", "2", "--workers", "2", "--quiet",
    ]  # fmt: skip
    proc = subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True
    )
    deadline = time.monotonic() + 60
    while not spawned_children(proc.pid) and time.monotonic() < deadline:
        time.sleep(0.01)
    if when == "mid-point":
        time.sleep(6)  # the cluster is up and each worker is in a point of about 20 s
    os.killpg(proc.pid, signum)
    stdout, stderr = proc.communicate(timeout=120)
    assert proc.returncode == 128 + signum, stdout
    said = "interrupted" if signum == signal.SIGINT else "stopped by SIGHUP"
    line = f"{said}: finished points are kept; run the same command to resume"
    assert stderr.strip().splitlines()[-1] == line, stderr
    assert not any(word in stderr for word in ("Traceback", "Error", "Warning")), stderr


def test_results_saved_over_a_run_replace_its_store_and_never_mix_into_a_sweep(tmp_path: Path):
    """`Results.save` over `fairgate run`'s output replaces the run, its one-point store with
    it (which `fairgate query` would otherwise still read as the run); a sweep is refused."""
    import fairgate as fg

    out = tmp_path / "one"
    run = ["run", str(SHOWCASE), "--out", str(out), "--quiet", "--seed", "1", *SHORT[:2]]
    assert main(run) == 0
    assert query(out, "SELECT seed FROM summary")["seed"].tolist() == [1]
    fg.run_file(SHOWCASE, ["simulation.duration=12s", "simulation.seed=2"]).save(out)
    assert not (out / "summary").exists() and not (out / "sweep.json").exists()
    assert fg.Results.load(out).summary["seed"] == 2
    sweep = tmp_path / "sweep"
    assert main(["run", str(SHOWCASE), "--seeds", "2", "--out", str(sweep), "--quiet", *SHORT]) == 0
    before = sorted(p.name for p in sweep.iterdir())
    with pytest.raises(fg.ScenarioError, match="out_dir: .* holds a sweep of 2 points"):
        fg.run_file(SHOWCASE, ["simulation.duration=12s"]).save(sweep)
    assert sorted(p.name for p in sweep.iterdir()) == before


def test_a_plain_run_writes_a_one_point_store_that_query_reads(tmp_path: Path, capsys):
    out = tmp_path / "one"
    plain = ["run", str(SHOWCASE), "--out", str(out), "--quiet", "--set", "simulation.duration=12s"]
    assert main(plain) == 0
    assert (out / "sweep.json").exists() and (out / "flows.parquet").exists()
    assert len(list((out / "summary").glob("point=*/part-0.parquet"))) == 1
    seed = json.loads((out / "summary.json").read_text())["seed"]
    summary = query(out, "SELECT seed, status, scenario FROM summary")
    assert summary.to_dict("records") == [{"seed": seed, "status": "ok", "scenario": "showcase"}]
    flows = query(out, "SELECT flow, goodput_bps FROM flows ORDER BY flow")
    flat = pd.read_parquet(out / "flows.parquet").sort_values("flow")
    assert list(flows["goodput_bps"]) == list(flat["goodput_bps"])
    assert len(query(out, "SELECT * FROM queue_series")) > 0  # the flat series stay queryable
    assert main([*plain, "--seed", str(seed + 1)]) == 0  # a rerun replaces the point
    assert list(query(out, "SELECT seed FROM summary")["seed"]) == [seed + 1]
    swept = tmp_path / "swept"
    assert main(["run", str(SHOWCASE), "--seeds", "2", "--out", str(swept), *SHORT]) == 0
    capsys.readouterr()
    assert main(["run", str(SHOWCASE), "--out", str(swept), "--quiet"]) == 2
    assert "holds a sweep of 2 points" in capsys.readouterr().err


def test_query_keeps_keys_as_text_and_refuses_a_finished_point_without_its_files(
    tmp_path: Path, capsys
):
    out = tmp_path / "one"
    assert (
        main(
            ["run", str(SHOWCASE), "--out", str(out), "--quiet", "--set", "simulation.duration=12s"]
        )
        == 0
    )
    digits = "point=1000000000000042"  # DuckDB would read a key of digits only as a number
    for table in ("summary", "flows", "ports"):
        next((out / table).glob("point=*")).rename(out / table / digits)
    keys = query(out, "SELECT DISTINCT point, typeof(point) AS type FROM flows")
    assert keys.to_dict("records") == [{"point": digits.removeprefix("point="), "type": "VARCHAR"}]
    lost = out / "ports" / digits / "part-0.parquet"
    lost.unlink()
    assert main(["query", str(out), "SELECT count(*) FROM flows"]) == 2
    assert f"{lost}: cannot be read (missing)" in capsys.readouterr().err


SMALL = """name = "small"
[simulation]
duration = "0.2s"
[topology]
kind = "dumbbell"
senders = 1
bottleneck = { rate = "10Mbps", delay = "1ms" }
access = { rate = "100Mbps", delay = "1ms" }
[[flows]]
src = "s0"
dst = "d0"
source = { kind = "cbr", rate = "1Mbps" }
"""


def test_query_outputs_are_checked_first_streamed_and_never_left_partial(tmp_path: Path, capsys):
    scenario = tmp_path / "small.toml"
    scenario.write_text(SMALL, encoding="utf-8")
    out = tmp_path / "run"
    assert main(["run", str(scenario), "--out", str(out), "--quiet"]) == 0
    flows = "SELECT flow FROM flows"
    bad_outputs = [
        (["--csv", str(tmp_path / "missing" / "x.csv")], "--csv: got"),
        (["--parquet", str(tmp_path)], "a directory; expected a file path"),
        (["--csv", str(scenario / "x.csv")], "is not a directory"),
        (
            ["--csv", str(tmp_path / "q.x"), "--parquet", str(tmp_path / "run" / ".." / "q.x")],
            "the file --csv names",
        ),
        # Inside the store's tables: the result would become rows of the store.
        (["--parquet", str(out / "flows.parquet")], "among the tables of the results store"),
        (["--parquet", str(out / "flows" / "x.parquet")], "among the tables of the results"),
        (["--csv", str(out / "summary.json")], "among the tables of the results store"),
    ]
    for extra, message in bad_outputs:
        assert main(["query", str(out), flows, *extra]) == 2
        assert message in capsys.readouterr().err
    for sql in ["", "  "]:
        assert main(["query", str(out), sql]) == 2
        assert "returns no rows" in capsys.readouterr().err
    assert main(["query", str(out), flows, "--csv", str(out / "beside.csv")]) == 0
    (tmp_path / "into_ports").symlink_to(out / "ports")
    for command in (["run", str(scenario)], ["sweep", str(scenario)]):
        for inside in (out / "ports" / "x", tmp_path / "into_ports" / "x"):
            assert main([*command, "--out", str(inside), "--quiet"]) == 2
            assert "--out: got" in capsys.readouterr().err
    (tmp_path / "into_ports").unlink()

    failing = (
        "SELECT CAST(CASE WHEN range > 100000 THEN 'x' ELSE '1' END AS INT) FROM range(300000)"
    )
    csv, parquet = tmp_path / "q.csv", tmp_path / "q.parquet"
    assert main(["query", str(out), failing, "--csv", str(csv), "--parquet", str(parquet)]) == 2
    assert "Conversion Error" in capsys.readouterr().err
    assert not csv.exists() and not parquet.exists()
    # A failed query keeps the file that was there, through a link too, and leaves nothing.
    csv.write_text("previous", encoding="utf-8")
    (tmp_path / "link.csv").symlink_to(csv)
    for target in (csv, tmp_path / "link.csv"):
        assert main(["query", str(out), failing, "--csv", str(target)]) == 2
        assert "Conversion Error" in capsys.readouterr().err
        assert csv.read_text(encoding="utf-8") == "previous"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["link.csv", "q.csv", "run", "small.toml"]
    (tmp_path / "link.csv").unlink()
    csv.unlink()

    many = "SELECT range AS n FROM range(25000)"
    assert main(["query", str(out), many, "--csv", str(csv), "--parquet", str(parquet)]) == 0
    assert pd.read_csv(csv)["n"].tolist() == list(range(25000))
    assert pd.read_parquet(parquet)["n"].tolist() == list(range(25000))
    assert oct(csv.stat().st_mode & 0o777) == oct(0o666 & ~_umask())
    capsys.readouterr()
    assert main(["query", str(out), many]) == 0
    printed = capsys.readouterr()
    assert printed.out.split() == ["n", *map(str, range(10000))]
    assert "25,000 rows; the first 10,000 shown" in printed.err


def test_an_empty_axis_value_is_refused_and_brackets_keep_their_commas(tmp_path: Path, capsys):
    from fairgate.sweeps.axes import parse_cli_axis

    for spec in ["bottleneck.queue.limit=5,,60", "bottleneck.queue.limit=5,60,"]:
        assert main(["sweep", str(SHOWCASE), "--grid", spec, "--out", str(tmp_path / "s")]) == 2
        assert "axis `bottleneck.queue.limit`: value" in capsys.readouterr().err
    axis = parse_cli_axis('rtt=[0.02,0.1],[0.05,0.2],"a,b"', "--grid")
    assert axis.values == ([0.02, 0.1], [0.05, 0.2], "a,b")


def test_a_damaged_store_is_named_with_its_repair_not_a_traceback(tmp_path: Path, capsys):
    scenario = tmp_path / "small.toml"
    scenario.write_text(SMALL, encoding="utf-8")
    sweep = ["sweep", str(scenario), "--grid", "flows[0].source.rate=1Mbps,2Mbps", "--workers", "1"]
    clean = tmp_path / "clean"
    assert main([*sweep, "--out", str(clean)]) == 0
    capsys.readouterr()

    def damaged(name: str, table: str) -> tuple[Path, Path]:
        store = tmp_path / name
        shutil.copytree(clean, store)
        part = next((store / table).glob("point=*/part-0.parquet"))
        part.write_bytes(part.read_bytes()[:100])
        return store, part

    store, part = damaged("summary", "summary")
    assert main([*sweep, "--out", str(store)]) == 2
    err = capsys.readouterr().err
    assert f"{part}: cannot be read" in err and f"Remove {part.parent.name} from" in err
    assert main(["query", str(store), "SELECT count(*) FROM summary"]) == 2
    assert str(part) in capsys.readouterr().err

    store, part = damaged("flows", "flows")
    assert main(["query", str(store), "SELECT count(*) FROM flows"]) == 2
    assert str(part) in capsys.readouterr().err
    # A resume refuses a finished point's damaged or missing file before it runs anything.
    other = next(p for p in (store / "summary").glob("point=*") if p.name != part.parent.name)
    shutil.rmtree(other)
    missing_ports = store / "ports" / part.parent.name / "part-0.parquet"
    for broken in (part, missing_ports):
        if broken == missing_ports:
            shutil.copy(clean / "flows" / part.parent.name / "part-0.parquet", part)
            missing_ports.unlink()
        assert main([*sweep, "--out", str(store)]) == 2
        err = capsys.readouterr().err
        assert f"{broken}: cannot be read" in err and f"Remove {part.parent.name} from" in err
        assert not other.exists()

    manifest = tmp_path / "clean" / "sweep.json"
    for text in ["{", "[1, 2]"]:
        manifest.write_text(text, encoding="utf-8")
        assert main([*sweep, "--out", str(clean)]) == 2
        assert f"{manifest}:" in capsys.readouterr().err


def test_a_store_another_process_writes_is_refused_not_shared(tmp_path: Path, capsys):
    """A second writer would tidy away the first one's half-written points."""
    scenario = tmp_path / "small.toml"
    scenario.write_text(SMALL, encoding="utf-8")
    out = tmp_path / "store"
    sweep = ["sweep", str(scenario), "--grid", "flows[0].source.rate=1Mbps,2Mbps"]
    with store.writing(out):
        assert main([*sweep, "--out", str(out), "--workers", "1"]) == 2
        in_use = f"error: --out: {out} is in use by another fairgate command"
        assert capsys.readouterr().err.startswith(f"{in_use} (process {os.getpid()})")
        assert main(["run", str(scenario), "--out", str(out), "--quiet"]) == 2
        assert capsys.readouterr().err.startswith(in_use)
        # Two studies or reproductions in one folder would leave a mix of their files.
        assert main(["study", "keshav-buffers", "--quick", "--out", str(out)]) == 2
        assert capsys.readouterr().err.startswith(in_use)
        assert main(["reproduce", "queueing", "--quick", "--out", str(out)]) == 2
        assert capsys.readouterr().err.startswith(in_use)
    assert not (out / "summary").exists() and not list(out.glob("*.md"))
    assert main([*sweep, "--out", str(out), "--workers", "1"]) == 0
    assert "2 points: 2 ran" in capsys.readouterr().out


def test_a_local_cluster_the_system_will_not_start_is_one_line(tmp_path: Path):
    """With 20 file descriptors Dask's worker processes cannot start: the command says why in
    one line and exits 1 (a failure of the machine, not of the input), without a traceback."""
    scenario = tmp_path / "small.toml"
    scenario.write_text(SMALL, encoding="utf-8")
    command = [sys.executable, "-m", "fairgate.cli", "sweep", str(scenario), "--seeds", "2"]
    done = subprocess.run(
        [*command, "--out", str(tmp_path / "o")],
        capture_output=True,
        text=True,
        timeout=300,
        preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_NOFILE, (20, 20)),
    )
    assert done.returncode == 1, done.stderr
    (line,) = done.stderr.strip().splitlines()
    assert line.startswith("error: `fairgate sweep` stopped: ") and "Too many open files" in line
    assert not (tmp_path / "o").exists()


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def test_a_file_in_a_folder_that_takes_no_new_file_is_written_in_place(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    """The staged copy needs a new file beside the target; a user who may write the file but
    not its folder gets the rows written in place."""
    from fairgate.sweeps import cli as sweep_cli

    def refused(*args: object, **kwargs: object) -> None:
        raise PermissionError(13, "Permission denied")

    target = tmp_path / "q.csv"
    target.write_text("old", encoding="utf-8")
    monkeypatch.setattr(sweep_cli.tempfile, "mkstemp", refused)
    assert sweep_cli._staged_file(target) == target


def test_the_note_on_identical_seeds_needs_every_point_identical():
    from fairgate.sweeps.cli import _seeds_changed_nothing

    rows = pd.DataFrame(
        {
            "buffer": [5, 5, 60, 60],
            "status": ["ok"] * 4,
            "events": [10, 10, 20, 21],
            "delivered_pkts": [1, 1, 2, 2],
            "dropped_pkts": [0, 0, 0, 0],
        }
    )
    assert not _seeds_changed_nothing(rows, ["buffer"])
    assert _seeds_changed_nothing(rows.iloc[:2], ["buffer"])
    assert _seeds_changed_nothing(rows.iloc[:2].drop(columns="buffer"), [])
    assert not _seeds_changed_nothing(rows.iloc[[0, 2]], ["buffer"])  # one seed a point

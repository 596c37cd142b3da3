"""Sweeps: axes checked before any point runs, product and zip combinations, the results
store (atomic, resumable, readable by pandas and DuckDB) and repetition statistics."""

from __future__ import annotations

import json
import math
import os
import signal
import sys
import tomllib
from pathlib import Path

import cloudpickle
import duckdb
import numpy as np
import pandas as pd
import pytest
from scipy import stats

import fairgate as fg
from fairgate.sweeps import prepare, repetitions, store
from fairgate.sweeps.axes import Axis, parse_cli_axis, toml_literal
from fairgate.sweeps.execute import local_client

cloudpickle.register_pickle_by_value(sys.modules[__name__])  # workers need not import tests

LIMIT = "queue.limit"


def poisson_queue(duration: float = 2.0) -> fg.Scenario:
    """a -> b at 10 Mb/s, fed by Poisson packets at 9 Mb/s: drops depend on seed and buffer."""
    sc = fg.Scenario("poisson-queue", duration=duration, seed=5)
    sc.node("a").node("b")
    sc.link("a", "b", "10Mbps", "1ms", fg.queue("fifo", limit=20), duplex=False)
    sc.flow("a", "b", fg.source("poisson", rate="9Mbps", size=1000), name="p")
    return sc


@pytest.fixture(scope="module")
def client():
    return local_client(2)


def test_a_sweep_of_too_many_points_is_refused_before_its_values_are_checked(monkeypatch):
    """The core checks each value (about 0.1 ms each): 20,000 values of one axis took 2.5 s
    to check before the count refused them, and 100,000 took 12 s."""
    from fairgate.sweeps import axes

    checked = []
    monkeypatch.setattr(axes, "validate_text", lambda *args: checked.append(args))
    limits = list(range(1, 2001))
    with pytest.raises(fg.ScenarioError, match="the sweep has 2,000,000 points"):
        prepare(poisson_queue(), grid={"links[0].queue.limit": limits}, seeds=1000)
    assert checked == []


def test_a_fixed_override_of_an_axis_field_is_refused_not_lost():
    """The axis is applied after the fixed overrides: every point ran the axis's value, and
    `overrides=["links[0].queue.limit=9"]` was lost without a word."""
    with pytest.raises(fg.ScenarioError, match=r"axis `queue.limit`: sets `links\[0\]"):
        prepare(poisson_queue(), grid={LIMIT: [2, 3]}, overrides=["links[0].queue.limit=9"])
    inside = prepare(poisson_queue(), grid={LIMIT: [2, 3]}, overrides=["links[0].rate=9Mbps"])
    assert len(inside.points) == 2


def test_a_sweep_keeps_of_each_point_only_the_tables_it_returns(client, monkeypatch, tmp_path):
    """Every point's summary, flows and ports tables were kept until the sweep ended, whatever
    it returned: about 130 kB a point of a small scenario for a summary of one row."""
    from fairgate.sweeps import SweepRun

    kept: list[set[str]] = []
    tables = SweepRun._tables

    def spy(self, collected, names):
        kept.extend(set(parts) for parts in collected.values())
        return tables(self, collected, names)

    monkeypatch.setattr(SweepRun, "_tables", spy)
    fg.sweep(poisson_queue(), grid={LIMIT: [2, 3]}, client=client)
    fg.sweep(poisson_queue(), grid={LIMIT: [2, 3]}, client=client, table="flows")
    fg.sweep(poisson_queue(), grid={LIMIT: [2]}, client=client, table="flows", out=tmp_path)
    assert kept == [{"summary"}] * 2 + [{"flows"}] * 2 + [{"summary"}]


def test_checking_the_values_shows_a_bar_after_two_seconds(monkeypatch):
    from fairgate.display import progress_bar
    from fairgate.sweeps import axes

    bars = []

    def recorded(progress, **options):
        bars.append((progress, options["total"], options["delay"]))
        return progress_bar(False)

    monkeypatch.setattr(axes, "progress_bar", recorded)
    grid = {"links[0].queue.limit": [5, 50]}
    zipped = [{"links[0].rate": ["5Mbps", "20Mbps"], "links[0].delay": ["1ms", "2ms"]}]
    prepare(poisson_queue(), grid=grid, zip=zipped, progress=True)
    prepare(poisson_queue(), grid=grid)
    assert bars == [(True, 4, 2.0), (False, 2, 2.0)]


def test_product_and_zip_make_every_combination_once_per_seed():
    run = prepare(
        poisson_queue(),
        grid={"links[0].queue.limit": [5, 50]},
        zip=[{"links[0].rate": ["5Mbps", "20Mbps"], "links[0].delay": ["1ms", "2ms"]}],
        seeds=[1, 2, 3],
    )
    points = run.points
    assert len(points) == 2 * 2 * 3
    combos = {(p.params, p.seed) for p in points}
    assert len(combos) == len(points)
    rates_and_delays = {
        (dict(p.params)["links[0].rate"], dict(p.params)["links[0].delay"]) for p in points
    }
    assert rates_and_delays == {("5Mbps", "1ms"), ("20Mbps", "2ms")}
    assert points[0].overrides == (
        "links[0].queue.limit=5",
        'links[0].rate="5Mbps"',
        'links[0].delay="1ms"',
    )
    assert len({p.key for p in points}) == len(points)


def test_seed_count_starts_at_the_scenario_seed_and_a_path_may_be_its_unique_ending():
    run = prepare(poisson_queue(), grid={LIMIT: [10]}, seeds=3)
    assert [p.seed for p in run.points] == [5, 6, 7]
    assert run.grid.axes[0].path == "links[0].queue.limit"
    assert run.grid.axes[0].name == LIMIT


@pytest.mark.parametrize(
    ("grid", "message"),
    [
        ({"queue.limt": [5]}, "axis `queue.limt` = 5: `links[0].queue.limt`: unknown field `limt`"),
        ({"buffer": [5]}, "axis `buffer` = 5: `buffer`: unknown field"),
        ({LIMIT: []}, f"axis `{LIMIT}`: empty"),
        ({LIMIT: ["big"]}, f'axis `{LIMIT}` = "big": `links[0].queue.limit`: got string'),
        ({LIMIT: [5, "big"]}, f"axis `{LIMIT}`: values mix number and string"),
        ({"seed": [1]}, "axis `seed`: the name is reserved"),
        ({LIMIT: 5}, f"axis `{LIMIT}`: got 5, expected a list"),
    ],
)
def test_bad_axes_are_named_before_anything_runs(grid, message):
    with pytest.raises(fg.ScenarioError) as err:
        prepare(poisson_queue(), grid=grid)
    assert message in str(err.value.args[0])


def test_ambiguous_endings_zip_lengths_and_seeds_are_rejected():
    sc = fg.Scenario("two", duration=1)
    sc.dumbbell(
        2,
        fg.link_params("10Mbps", "1ms", fg.queue("fifo", limit=5)),
        fg.link_params("100Mbps", "1ms", fg.queue("fifo", limit=50)),
    )
    with pytest.raises(fg.ScenarioError, match="ambiguous, it ends topology.bottleneck.queue"):
        prepare(sc, grid={"queue.limit": [1]})
    with pytest.raises(fg.ScenarioError, match="zipped axes need equal lengths"):
        prepare(sc, zip=[{"bottleneck.queue.limit": [1, 2], "access.queue.limit": [3]}])
    with pytest.raises(fg.ScenarioError, match=r"seeds\[0\]: got -1"):
        prepare(sc, seeds=[-1])
    with pytest.raises(fg.ScenarioError, match="seeds: got 0, expected at least 1"):
        prepare(sc, seeds=0)


def test_cli_axis_values_are_toml_with_bare_words_as_strings():
    axis = parse_cli_axis("queue.kind=red, fifo ,10,2.5,true", "--grid")
    assert axis == Axis("queue.kind", "queue.kind", ("red", "fifo", 10, 2.5, True))
    with pytest.raises(fg.ScenarioError, match="expected PATH=VALUE1"):
        parse_cli_axis("queue.kind", "--grid")
    assert toml_literal({"kind": "red", "min_th": 5}) == '{ "kind" = "red", "min_th" = 5 }'


def test_sweep_returns_one_row_per_point_matching_single_runs(client):
    sc = poisson_queue()
    frame = fg.sweep(sc, grid={LIMIT: [2, 50]}, seeds=2, client=client)
    assert list(frame.columns[:3]) == ["point", LIMIT, "scenario"]
    assert frame[[LIMIT, "seed"]].values.tolist() == [[2, 5], [2, 6], [50, 5], [50, 6]]
    assert (frame["status"] == "ok").all() and frame["conserved"].all()
    small = fg.run_text(sc.to_toml(), ["links[0].queue.limit=2", "simulation.seed=6"])
    large = fg.run_text(sc.to_toml(), ["links[0].queue.limit=50", "simulation.seed=6"])
    assert frame.loc[1, "dropped_pkts"] == small.summary["totals"]["dropped_pkts"]
    assert frame.loc[3, "delivered_pkts"] == large.summary["totals"]["delivered_pkts"]
    assert frame.loc[0, "dropped_pkts"] > frame.loc[2, "dropped_pkts"]
    flows = fg.sweep(sc, grid={LIMIT: [2]}, seeds=1, client=client, table="flows")
    assert flows[[LIMIT, "seed", "flow"]].values.tolist() == [[2, 5, "p"]]


def test_store_is_resumable_byte_identical_and_rerun_failed_points(tmp_path: Path, client):
    sc = poisson_queue()
    out = tmp_path / "store"
    first = fg.sweep(sc, grid={LIMIT: [2, 50]}, seeds=2, client=client, out=out)
    files = sorted(out.glob("*/point=*/part-0.parquet"))
    assert len(files) == 3 * 4
    before = {p: p.read_bytes() for p in files}
    # A failed point (as a worker would record it) is run again; finished ones are skipped.
    failed_key = first.loc[0, "point"]
    store.commit(
        out,
        failed_key,
        {
            "summary": store.summary_table(
                {LIMIT: 2}, {"seed": 5, "status": "failed", "error": "boom", "attempts": 2}
            )
        },
    )
    assert not (out / "flows" / f"point={failed_key}").exists()
    rerun = prepare(sc, grid={LIMIT: [2, 50]}, seeds=2, out=out)
    again = rerun.run(client)
    assert rerun.skipped == 3
    assert {p: p.read_bytes() for p in files} == before  # re-run point byte-identical
    pd.testing.assert_frame_equal(again["summary"], first)
    assert not list(out.glob(".staging/*"))


def test_store_refuses_another_sweep_in_the_same_directory(tmp_path: Path, client):
    out = tmp_path / "store"
    fg.sweep(poisson_queue(), grid={LIMIT: [2]}, client=client, out=out)
    with pytest.raises(fg.ScenarioError, match=f"^out: {out} holds another sweep"):
        fg.sweep(poisson_queue(duration=1.0), grid={LIMIT: [2]}, client=client, out=out)
    manifest = json.loads((out / "sweep.json").read_text(encoding="utf-8"))
    (out / "sweep.json").write_text(json.dumps({**manifest, "fairgate_version": "0.0.1"}))
    with pytest.raises(fg.ScenarioError, match="`fairgate_version` differs: '0.0.1'"):
        fg.sweep(poisson_queue(), grid={LIMIT: [2, 50]}, client=client, out=out)


def test_store_reads_with_pandas_and_duckdb(tmp_path: Path, client):
    out = tmp_path / "store"
    fg.sweep(poisson_queue(), grid={LIMIT: [2, 50]}, seeds=2, client=client, out=out)
    flows = pd.read_parquet(out / "flows")
    assert len(flows) == 4 and set(flows[LIMIT]) == {2, 50}
    con = duckdb.connect()
    direct = con.execute(
        f"SELECT count(*) FROM read_parquet('{out}/summary/*/*.parquet', hive_partitioning=true)"
    ).fetchone()
    assert direct == (4,)
    frame = fg.sweeps.query(
        out,
        f'SELECT flows."{LIMIT}" AS limit, avg(loss_rate) AS loss FROM flows '
        f"JOIN summary USING (point) WHERE status = 'ok' GROUP BY 1 ORDER BY 1",
    )
    assert frame["limit"].tolist() == [2, 50]
    assert frame["loss"].iloc[0] > frame["loss"].iloc[1]
    with pytest.raises(fg.ScenarioError, match="query: "):
        fg.sweeps.query(out, "SELECT nonsense FROM flows")


def test_repetitions_give_mean_std_and_student_t_interval():
    frame = pd.DataFrame(
        {"buffer": [1, 1, 1, 2, 2], "x": [1.0, 2.0, 4.0, 5.0, np.nan], "seed": [1, 2, 3, 1, 2]}
    )
    out = repetitions(frame, ["buffer"])
    assert list(out.columns) == ["buffer", "runs", "x_mean", "x_std", "x_ci_low", "x_ci_high"]
    row = out.iloc[0]
    sd = np.std([1.0, 2.0, 4.0], ddof=1)
    half = stats.t.ppf(0.975, 2) * sd / math.sqrt(3)
    assert row["runs"] == 3 and row["x_mean"] == pytest.approx(7 / 3)
    assert row["x_std"] == pytest.approx(sd)
    assert (row["x_ci_low"], row["x_ci_high"]) == pytest.approx((7 / 3 - half, 7 / 3 + half))
    one = out.iloc[1]  # one value with a number: no interval
    assert one["x_mean"] == 5.0 and math.isnan(one["x_ci_low"])
    overall = repetitions(frame, [], ["x"])
    assert overall["runs"].tolist() == [5] and overall["x_mean"].iloc[0] == pytest.approx(3.0)


def _square_or_fail(x: int) -> int:
    if x < 0:
        raise ValueError(f"negative: {x}")
    return x * x


def test_reproduction_cases_come_back_in_case_order_with_errors_apart(client):
    from fairgate.repro.cases import Case, run_cases

    cases = [Case(f"c{x}", _square_or_fail, (x,)) for x in (3, -1, 2, 1)]
    values, errors = run_cases(cases, client)
    assert list(values) == ["c3", "c2", "c1"] and list(values.values()) == [9, 4, 1]
    assert list(errors) == ["c-1"] and errors["c-1"].startswith("ValueError: negative: -1")


def test_ctrl_c_during_a_commit_is_delivered_after_the_whole_point(tmp_path: Path, monkeypatch):
    real_replace = os.replace

    def replace_then_interrupt(src, dst):
        real_replace(src, dst)
        os.kill(os.getpid(), signal.SIGINT)

    monkeypatch.setattr(store.os, "replace", replace_then_interrupt)
    tables = {
        "flows": pd.DataFrame({"flow": ["f"]}),
        "ports": pd.DataFrame({"port": ["a->b"]}),
        "summary": store.summary_table({}, {"seed": 1, "status": "ok"}),
    }
    with pytest.raises(KeyboardInterrupt):
        store.commit(tmp_path, "k", tables)
    for table in store.TABLES:
        assert (tmp_path / table / "point=k" / "part-0.parquet").is_file()
    assert store.finished_keys(tmp_path) == {"k"}


def test_numpy_axes_seeds_and_values_are_taken_as_plain_values():
    run = prepare(
        poisson_queue(),
        grid={"links[0].queue.limit": np.arange(10, 30, 10)},
        zip=[{"links[0].rate": np.linspace(5e6, 6e6, 2)}],
        seeds=np.int64(2),
        overrides="simulation.duration=1s",
    )
    assert [p.overrides[:2] for p in run.points[::2]] == [
        ("links[0].queue.limit=10", "links[0].rate=5000000.0"),
        ("links[0].queue.limit=10", "links[0].rate=6000000.0"),
        ("links[0].queue.limit=20", "links[0].rate=5000000.0"),
        ("links[0].queue.limit=20", "links[0].rate=6000000.0"),
    ]
    assert [p.seed for p in run.points[:2]] == [5, 6]
    assert run.overrides == ["simulation.duration=1s"]
    assert [p.seed for p in prepare(poisson_queue(), seeds=np.arange(7, 9)).points] == [7, 8]
    sc = fg.Scenario("np", duration=np.float32(0.5), seed=np.int64(3))
    sc.node("a").node("b").link("a", "b", np.float64(1e7), "1ms", fg.queue(limit=np.int64(5)))
    assert sc.validate()["simulation"]["seed"] == 3
    sc.flow("a", "b", fg.source("cbr", rate={1, 2}))
    with pytest.raises(fg.ScenarioError, match=r"`flows\[0\].source.rate`: got set"):
        sc.to_toml()


def test_a_sweep_that_would_run_a_point_twice_or_not_at_all_is_refused():
    cases = [
        ({"grid": {LIMIT: [5, 6, 5]}}, "axis `queue.limit`: values 1 and 3 are both 5, expected"),
        (
            {"zip": [{LIMIT: [5, 5, 6], "links[0].delay": ["1ms", "1ms", "1ms"]}]},
            'values 1 and 2 are both 5, "1ms"',
        ),
        ({"zip": [{}]}, "zip: a group with no axes"),
        ({"seeds": [3, 4, 3]}, "seeds: 3 is given twice"),
        ({"seeds": [-1]}, r"seeds\[0\]: got -1, expected a whole number from 0 to"),
        ({"seeds": [2**63]}, r"seeds\[0\]: got 9223372036854775808, expected a whole number"),
        ({"seeds": [True]}, r"seeds\[0\]: got bool True, expected a whole number from 0"),
        ({"seeds": "12"}, r"seeds: got '12', expected a count or a list of seeds"),
        ({"seeds": []}, "seeds: empty"),
        # An axis is a column beside the store's own, whose names SQL reads without case.
        ({"grid": [Axis("goodput_bps", LIMIT, (5, 6))]}, "`goodput_bps`: the name is a column"),
        ({"grid": [Axis("Seed", LIMIT, (5, 6))]}, r"axis `Seed`: the name is reserved \(attempts"),
        ({"grid": [Axis("Loss_Rate", LIMIT, (5, 6))]}, "`Loss_Rate`: the name is a column"),
        (
            {"grid": [Axis("limit", LIMIT, (5, 6)), Axis("Limit", "links[0].delay", (1, 2))]},
            "axis `Limit`: named as axis `limit` but for the case of its letters",
        ),
        ({"seeds": 3, "overrides": [f"simulation.seed={2**63 - 2}"]}, r"expected at most 2, or a"),
        (
            {"grid": {LIMIT: [5, 6], "links[0].queue.limit": [7, 8]}},
            r"sets `links\[0\].queue.limit`, as axis `queue.limit` does",
        ),
        ({"grid": {"links[0].rate": ["1Mbps", 2e6]}}, r"^axis `links\[0\].rate`: values mix"),
        # A table holding the seed: each point set its own over it, and the column lied.
        (
            {"grid": {"simulation": [{"duration": 2, "seed": 5}, {"duration": 2, "seed": 6}]}},
            "axis `simulation`: sets `simulation.seed`, which each point takes from the seeds",
        ),
    ]
    for kwargs, message in cases:
        with pytest.raises(fg.ScenarioError, match=message):
            prepare(poisson_queue(), **kwargs)
    zipped = prepare(poisson_queue(), zip=[{LIMIT: [5, 5], "links[0].delay": ["1ms", "2ms"]}])
    assert len(zipped.points) == 2


def test_an_axis_inside_another_refines_it_in_either_order_and_a_clash_is_refused():
    """An inner axis given first was replaced by the outer axis's table at every point: its
    points ran with the default limit under a column showing 1 and 2."""
    queues = [{"kind": "fifo"}, {"kind": "red"}]
    for grid in (
        {LIMIT: [3, 4], "links[0].queue": queues},
        {"links[0].queue": queues, LIMIT: [3, 4]},
    ):
        run = prepare(poisson_queue(), grid=grid)
        for point in run.points:
            limit = dict(point.params)[LIMIT]
            assert point.overrides[-1] == f"links[0].queue.limit={limit}", point.overrides
    results = fg.sweep(
        poisson_queue(), grid={LIMIT: [3, 4], "links[0].queue": queues}, table="ports"
    )
    held = results[results["port"] == "a->b"].groupby(LIMIT)["max_queue_pkts"].max()
    assert list(held) == [3, 4]
    clash = [{"kind": "fifo", "limit": 9}, {"kind": "red"}]
    with pytest.raises(fg.ScenarioError, match=r"which value 1 of axis `links\[0\].queue` \("):
        prepare(poisson_queue(), grid={LIMIT: [3, 4], "links[0].queue": clash})
    with pytest.raises(fg.ScenarioError, match=r"an earlier override, `--set links\[0\].queue.li"):
        prepare(
            poisson_queue(), grid={"links[0].queue": queues}, overrides=["links[0].queue.limit=5"]
        )


def test_a_scenario_the_core_reads_also_sweeps_in_its_document_order(tmp_path: Path):
    table = '[links.queue]\nkind = "fifo"\nlimit = 20\n'
    over_lines = 'queue = {\n  kind = "fifo",\n  limit = 20,\n}\n'  # TOML 1.1
    text = "\ufeff" + poisson_queue().to_toml().replace(table, over_lines)  # and a BOM
    assert "limit = 20,\n}" in text
    with pytest.raises(tomllib.TOMLDecodeError):  # what sweeps parsed scenarios with before
        tomllib.loads(text)
    assert fg.validate_text(text)["links"][0]["queue"]["limit"] == 20
    run = prepare(text, grid={"queue.limit": [5, 6], "links[0].delay": ["1ms", "2ms"]})
    assert [a.name for g in run.grid.groups for a in g] == ["queue.limit", "links[0].delay"]
    sweep_file = tmp_path / "sweep.toml"
    scenario = tmp_path / "s.toml"
    scenario.write_text(text, encoding="utf-8")
    sweep_file.write_text(
        'scenario = "s.toml"\n[grid]\n"links[0].rate" = ["1Mbps", "2Mbps"]\n'
        '"queue.limit" = [5, 6]\n',
        encoding="utf-8",
    )
    from fairgate.sweeps import sweepfile

    assert [a.name for a in sweepfile.load(sweep_file).grid] == ["links[0].rate", "queue.limit"]


def test_sweep_arguments_of_the_wrong_kind_are_named(tmp_path: Path):
    blocker = tmp_path / "file"
    blocker.write_text("x", encoding="utf-8")
    cases = [
        ({"grid": [1, 2]}, "grid: got \\[1, 2\\], expected a mapping"),
        ({"grid": {1: [1]}}, "grid: got the axis name 1, expected a path string"),
        ({"zip": {LIMIT: [1]}}, "zip: got a single group, expected a list of groups"),
        ({"out": blocker}, "an existing file; expected a directory"),
    ]
    for kwargs, message in cases:
        with pytest.raises(fg.ScenarioError, match=message):
            prepare(poisson_queue(), **kwargs)
    with pytest.raises(fg.ScenarioError, match="client: got str, expected a dask"):
        fg.sweep(poisson_queue(), client="tcp://somewhere")
    with pytest.raises(fg.ScenarioError, match="scenario: got int"):
        prepare(7)
    assert len(prepare(poisson_queue().to_dict(), grid={LIMIT: [1, 2]}).points) == 2


def test_a_closed_client_is_named_not_an_attribute_error():
    """A Client closed by its `with` block failed deep inside Dask: "'NoneType' object has no
    attribute 'ncores'"."""
    from distributed import Client

    with Client(processes=False, n_workers=1, dashboard_address=None) as closed:
        pass
    with pytest.raises(fg.ScenarioError, match="client: got a Client that is closed"):
        fg.sweep(poisson_queue(), grid={LIMIT: [5, 6]}, client=closed)
    shared = local_client(1)
    shared.close()  # the local cluster fairgate keeps, closed by its caller: made anew
    assert local_client(1).status == "running"

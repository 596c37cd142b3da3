"""Arguments of the documented Python functions: a wrong kind or size is a ScenarioError naming
the argument, never a TypeError, KeyError or OverflowError from deep inside pandas, numpy or
DuckDB (found by calling each with None, bools, NaN, 1e308, strings, bytes, lists and arrays).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import fairgate as fg
from fairgate import atm, fluid
from fairgate.analysis import sfg
from fairgate.sweeps import query, repetitions, sweep
from test_hardening import NO_FLOWS as SMALL

FRAME = pd.DataFrame({"limit": [5, 5, 9, 9], "label": list("aabb"), "goodput": [1.0, 2, 3, 4]})


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"by": None}, "by: got None, expected a column name or a list of them"),
        ({"by": 3}, "by: got 3, expected a column name or a list of them"),
        ({"by": "x"}, r"by: got 'x', expected a column of the frame \('limit', 'label', "),
        ({"by": ["limit", 1]}, "by: got 1, expected a column of the frame"),
        ({"by": ["limit"], "metrics": "label"}, "metrics: column 'label' is not numeric"),
        ({"by": ["limit"], "metrics": ["nope"]}, "metrics: got 'nope', expected a column"),
        ({"by": ["limit"], "confidence": 1.0}, r"`confidence`: got 1.0, expected .* in \(0, 1\)"),
        ({"by": ["limit"], "confidence": "95%"}, "`confidence`: got '95%'"),
    ],
)
def test_repetitions_names_a_bad_argument(kwargs: dict, message: str):
    with pytest.raises(fg.ScenarioError, match=message):
        repetitions(FRAME, **kwargs)


def test_repetitions_takes_one_column_name_as_a_list_of_one():
    one = repetitions(FRAME, by="limit", metrics="goodput")
    assert one.equals(repetitions(FRAME, by=["limit"], metrics=["goodput"]))
    assert list(one["runs"]) == [2, 2]
    with pytest.raises(fg.ScenarioError, match="frame: got"):
        repetitions(FRAME.to_dict(), by="limit")  # type: ignore[arg-type]


@pytest.mark.parametrize("sql", [None, 3, b"SELECT 1", ["SELECT 1"]])
def test_query_names_sql_that_is_not_text(tmp_path, sql: object):
    store = fg.run_text(SMALL).save(tmp_path / "run")
    with pytest.raises(fg.ScenarioError, match="^sql: got .*, expected SQL text"):
        query(store, sql)  # type: ignore[arg-type]
    with pytest.raises(fg.ScenarioError, match="^root: got .*, expected a path"):
        query(sql, "SELECT 1")  # type: ignore[arg-type]


def test_a_huge_exact_false_positive_request_is_refused_not_an_overflow():
    """`{work:.3g}` of an integer past a float's range raised OverflowError in the message."""
    with pytest.raises(fg.ScenarioError, match=r"bins\^2 x flows = 1\.00e\+616, expected at most"):
        sfg.expected_polluted_bins(10**308, 1)


def test_a_fluid_scheme_that_is_not_a_name_is_refused():
    with pytest.raises(fg.ScenarioError, match="`fluid.scheme`: got .*, expected one of"):
        fluid.solve(np.array(["red", "avq"]))  # type: ignore[arg-type]


def test_a_figure_of_something_the_run_does_not_have_is_refused():
    """``gateway_figure(results, "nope")`` drew three empty panels; ``ports="a->b"`` was read
    letter by letter."""
    from fairgate.plot import queue_over_time
    from fairgate.plot_gateway import gateway_figure

    results = fg.run_text(SMALL)
    with pytest.raises(fg.ScenarioError, match="`gateway`: got 'a', expected a gateway of the"):
        gateway_figure(results, "a")
    assert queue_over_time(results, ports="a->b").axes[0].get_legend_handles_labels()[1] == ["a->b"]
    with pytest.raises(fg.ScenarioError, match="`ports`: got 3, expected a port's name or a"):
        queue_over_time(results, ports=3)  # type: ignore[arg-type]
    alone = fg.run_text('[simulation]\nduration = "1s"\n[[nodes]]\nname = "a"\n')
    with pytest.raises(fg.ScenarioError, match=r"expected a port of the run: \(it has none\)"):
        queue_over_time(alone, ports=["a->b"])


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"grid": 3}, "grid: got 3, expected a mapping of a path to its values"),
        ({"zip": 3}, r"zip: got 3, expected a list of groups"),
        ({"zip": [3]}, r"zip\[0\]: got 3, expected a mapping of a path to its values"),
        ({"overrides": 3}, "overrides: got 3, expected a list of key.path=value strings"),
        ({"overrides": None}, "overrides: got None, expected a list of key.path=value"),
        ({"overrides": b"x=1"}, "overrides: got b'x=1', expected a list of key.path=value"),
    ],
)
def test_sweep_arguments_of_the_wrong_kind_are_named(kwargs: dict, message: str):
    """Each was a TypeError ('int' object is not iterable); bytes were read as numbers."""
    from fairgate.sweeps import prepare

    with pytest.raises(fg.ScenarioError, match=f"^{message}"):
        prepare(SMALL, **kwargs)
    if "overrides" in kwargs:
        with pytest.raises(fg.ScenarioError, match=f"^{message}"):
            fg.run_text(SMALL, kwargs["overrides"])


def test_vc_names_that_print_alike_are_refused_as_one():
    """Two VCs, or flows, named "café" (precomposed é, and e + U+0301) were two rows that
    looked the same in every table; a repeated VC name had no test."""
    from conftest import SCENARIOS

    text = (SCENARIOS / "dfba_e3.toml").read_text(encoding="utf-8")
    lookalike = text.replace('name = "vc1"', 'name = "caf\\u00e9"').replace(
        'name = "vc2"', 'name = "cafe\\u0301"'
    )
    with pytest.raises(fg.ScenarioError, match=r"prints as another VC's name") as caught:
        fg.validate_text(lookalike)
    assert caught.value.path == "atm.vcs[1].name"
    repeated = text.replace('name = "vc2"', 'name = "vc1"')
    with pytest.raises(fg.ScenarioError, match="which names another VC already"):
        fg.validate_text(repeated)


@pytest.mark.parametrize(
    ("inputs", "where", "message"),
    [
        ({}, "missing/x.json", "path: got .*, but .* is not a directory; expected a file in an"),
        ({}, ".", "path: got '.', a directory; expected a file path"),
        ({"omega": 1.0}, "x.json", "inputs: got {'omega': 1.0}, expected a dict of FourierSeries"),
        (None, "x.json", "inputs: got None, expected a dict of FourierSeries"),
    ],
)
def test_save_inputs_names_a_path_or_inputs_it_cannot_write(
    tmp_path, monkeypatch, inputs: object, where: str, message: str
):
    """A path in a missing folder was a FileNotFoundError traceback (the fluid page's own
    example wrote into `out/`, which nothing had made)."""
    monkeypatch.chdir(tmp_path)
    with pytest.raises(fg.ScenarioError, match=message):
        fluid.save_inputs(inputs, where)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "call",
    [
        lambda path: fg.run_text(path),
        lambda path: fg.validate_text(path),
        lambda path: atm.run_atm(path),
    ],
    ids=["run_text", "validate_text", "run_atm"],
)
def test_a_files_path_given_as_toml_text_is_named_as_one(call):
    """TOML reads `scenarios/x.toml` as a key without a value: "TOML syntax error: key with
    no value, expected `=` (line 1)" said nothing of the mix-up."""
    with pytest.raises(fg.ScenarioError, match=r"got 'scenarios/x\.toml', a file's path; expected"):
        call("scenarios/x.toml")


def test_the_cell_network_helpers_name_an_argument_of_the_wrong_kind():
    with pytest.raises(fg.ScenarioError, match="run: got None, expected an AtmRun"):
        atm.summary(None)  # type: ignore[arg-type]
    with pytest.raises(fg.ScenarioError, match="scenario: got None, expected a validated"):
        atm.is_atm(None)  # type: ignore[arg-type]


def test_pandas_columns_and_0d_arrays_are_taken_as_their_values():
    """A sweep's axis or seeds from a frame's column (a Series) was refused with its
    several-line repr; a 0-d array (``np.array(5)``, a number) was a TypeError ("iteration
    over a 0-d array") as seeds and as a builder's value."""
    from fairgate.sweeps import prepare

    column = pd.Series([5e6, 9e6], name="rate")
    prepared = prepare(SMALL, grid={"links[0].rate": column}, seeds=pd.Series([3, 4]))
    points = prepared.grid.points()
    assert [(dict(p.params)["links[0].rate"], p.seed) for p in points] == [
        (5e6, 3), (5e6, 4), (9e6, 3), (9e6, 4)
    ]  # fmt: skip
    assert [p.seed for p in prepare(SMALL, seeds=np.array(2)).grid.points()] == [1, 2]
    sc = fg.Scenario("zero-d", duration=np.array(1.0)).node("a").node("b")
    assert sc.link("a", "b", np.array(1e6)).validate()["links"][0]["rate"] == 1e6


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"grid": {"links[0].rate": pd.DataFrame({"a": [1, 2]})}}, "DataFrame of shape"),
        ({"seeds": pd.DataFrame({"a": [1, 2]})}, r"a DataFrame of shape \(2, 1\), expected a"),
        ({"grid": {"links[0].rate": np.array(5)}}, r"got array\(5\), expected a list"),
    ],
)
def test_a_value_of_several_lines_is_named_on_one(kwargs: dict, message: str):
    from fairgate.sweeps import prepare

    with pytest.raises(fg.ScenarioError, match=message) as caught:
        prepare(SMALL, **kwargs)
    assert "\n" not in str(caught.value)


@pytest.mark.parametrize(
    "call",
    [
        lambda: fg.plot.overview(None),
        lambda: fg.plot.queue_over_time("out"),
        lambda: fg.plot.class_throughput(5),
        lambda: fg.plot.transfer_time_cdf({}),
        lambda: fg.plot.busiest_ports(None),
        lambda: fluid.measure_inputs(None),
        lambda: fluid.offered_load_ratio(pd.DataFrame()),
        lambda: fluid.pep_delay(None, "g"),
        lambda: fluid.new_connection_fraction("results"),
    ],
)
def test_figures_and_measurements_name_what_is_not_a_run(call):
    """Each was an AttributeError from inside the figure or the measurement."""
    with pytest.raises(fg.ScenarioError, match=r"^results: got .*, expected the Results of a run"):
        call()


@pytest.fixture(scope="module")
def small_run() -> fg.Results:
    return fg.run_text(SMALL)


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda r: fg.plot.overview(r, title=5), "`title`: got 5, expected a string or None"),
        (lambda r: fg.plot.busiest_ports(r, "x"), "`count`: got 'x', expected a whole number"),
        (lambda r: fluid.offered_load_ratio(r, "x"), "`start_s`: got 'x'"),
        (lambda r: fluid.offered_load_ratio(r, 0.0, 1.5), "`points`: got 1.5"),
        (lambda r: fluid.new_connection_fraction(r, "x"), "`connections`: got 'x'"),
        (lambda r: fluid.pep_delay(r, 5), "`gateway`: got 5, expected a gateway's name"),
        (lambda r: fluid.solve("red", 5), "params: got 5, expected FluidParams or None"),
        (lambda r: fluid.solve("red", None, 5), "inputs: got 5, expected FluidInputs or None"),
        (lambda r: fluid.solutions_figure(5), "solutions: got 5, expected a mapping"),
        (lambda r: fluid.solutions_figure({"a": 5}), r"solutions\['a'\]: got 5, expected a frame"),
        (lambda r: fluid.improvement_figure(None), "table: got None, expected a frame with"),
        (lambda r: fluid.model_simulation_figure(FRAME), "table: got a DataFrame of shape"),
    ],
)
def test_figure_and_measurement_options_are_named(small_run, call, message: str):
    with pytest.raises(fg.ScenarioError, match=message):
        call(small_run)


def test_the_results_plumbing_names_what_it_was_given(small_run, tmp_path):
    """`from_core(None)` was a TypeError; `write_into("dir")` an AttributeError (a str would
    have skipped the checks and the lock that `save` takes)."""
    with pytest.raises(fg.ScenarioError, match="raw: got None, expected the dict a core"):
        fg.Results.from_core(None)  # type: ignore[arg-type]
    with pytest.raises(
        fg.ScenarioError, match=r"out: got '.*', expected a pathlib.Path the caller"
    ):
        small_run.write_into(str(tmp_path / "o"))  # type: ignore[arg-type]
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize("options", [[], 0, ""])
def test_gateway_options_that_are_not_a_table_are_refused(options):
    """Options that Python reads as false were dropped, and the gateway ran with defaults."""
    sc = fg.Scenario("g", duration=1).node("a").gateway("g", options).node("b")
    sc.link("a", "g", "10Mbps").link("g", "b", "10Mbps")
    with pytest.raises(fg.ScenarioError, match=r"`nodes\[1\]\.gateway`: got .*expected a table"):
        sc.validate()


def test_arguments_python_reads_as_false_are_not_taken_for_the_default(small_run):
    """`inputs=0` ran the default inputs; `phase_summary(port="")` reported the bottleneck."""
    with pytest.raises(fg.ScenarioError, match="inputs: got 0, expected FluidInputs or None"):
        fluid.delay_sweep("red", [1.0], inputs=0)  # type: ignore[arg-type]
    with pytest.raises(fg.ScenarioError, match="inputs: got 0, expected FluidInputs or None"):
        fluid.upsilon_ablation(inputs=0)  # type: ignore[arg-type]
    with pytest.raises(fg.ScenarioError, match="`port`: got '', expected one of"):
        small_run.phase_summary("")


def test_new_connections_of_a_run_without_flows_name_what_is_missing(small_run):
    """It said "connections: expected a positive count, got 0" to a caller who gave none."""
    with pytest.raises(fg.ScenarioError, match=r"^results: no data flows and no population"):
        fluid.new_connection_fraction(small_run)


def test_reading_a_store_table_names_what_is_not_one(tmp_path):
    """`store.read(DIR, "nosuch")` and `store.read("nowhere", "flows")` read as empty tables;
    `store.read(None, ...)` was a TypeError."""
    from fairgate.sweeps import store

    with pytest.raises(fg.ScenarioError, match="table: got 'nosuch', expected one of flows"):
        store.read(tmp_path, "nosuch")
    with pytest.raises(fg.ScenarioError, match="nowhere: no such directory; expected a store"):
        store.read(tmp_path / "nowhere", "flows")
    with pytest.raises(fg.ScenarioError, match="root: got None, expected a path"):
        store.read(None, "flows")  # type: ignore[arg-type]
    assert store.read(tmp_path, "flows").empty  # a store with no point yet


@pytest.mark.parametrize("progress", ["no", 0, None])
def test_progress_is_true_or_false(progress: object) -> None:
    """Python reads any text but "" as true: `progress="no"` drew a bar."""
    with pytest.raises(fg.ScenarioError, match="progress: got .*, expected True or False"):
        fg.run_text(SMALL, progress=progress)
    with pytest.raises(fg.ScenarioError, match="progress: got .*, expected True or False"):
        sweep(SMALL, seeds=1, progress=progress)

"""Plotting leaves matplotlib's backend to the user and returns Figures, saving only on request."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
from matplotlib.figure import Figure

import fairgate as fg
from fairgate.plot import overview, queue_over_time


def test_importing_the_plotting_modules_keeps_the_users_backend() -> None:
    """fairgate.plot, the gateway and fluid figures, and every reproduction and study module
    leave the backend the user chose (none forces Agg at import)."""
    code = (
        "import importlib, pkgutil, matplotlib; matplotlib.use('svg'); "
        "import fairgate, fairgate.repro, fairgate.studies; "
        "names = ['fairgate.plot', 'fairgate.plot_gateway', 'fairgate.fluid.plot']; "
        "names += [m.name for p in (fairgate.repro, fairgate.studies) "
        "for m in pkgutil.iter_modules(p.__path__, p.__name__ + '.')]; "
        "[importlib.import_module(n) for n in names]; "
        "print(len(names), matplotlib.get_backend())"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    count, backend = out.stdout.split()
    assert backend == "svg" and int(count) > 20, out.stdout


def test_overview_returns_a_figure_and_saves_only_when_asked(tmp_path: Path) -> None:
    sc = fg.Scenario("plot", duration=1, seed=1, sample_interval=0.1)
    sc.dumbbell(
        senders=1,
        bottleneck=fg.link_params("10Mbps", "10ms"),
        access=fg.link_params("100Mbps", "1ms"),
    )
    sc.flow("s0", "d0", fg.source("cbr", rate="1Mbps"))
    results = sc.run()
    fig = overview(results)
    assert isinstance(fig, Figure)
    assert list(tmp_path.iterdir()) == []
    saved = overview(results, tmp_path / "plot.png", title="t")
    assert isinstance(saved, Figure)
    assert (tmp_path / "plot.png").stat().st_size > 0


def test_reproduction_figure_functions_return_figures(tmp_path: Path) -> None:
    import pandas as pd

    from fairgate.repro import keshav, queueing

    assert isinstance(queueing.figure([("M/M/1", 0.5, 1.0), ("M/D/1", 0.5, 0.75)]), Figure)
    stats = pd.DataFrame(
        {"source": [1], "throughput_mean": [10.0], "rtt_mean": [0.1]}
        | {"throughput_sd": [1.0], "rtt_sd": [0.01]}
    )
    assert isinstance(keshav.utility_figure(1, {(1, "FCFS/FQ"): stats}), Figure)
    assert keshav.utility_figure(2, {(1, "FCFS/FQ"): stats}) is None
    assert list(tmp_path.iterdir()) == []


def test_a_run_without_ports_plots_without_warnings_and_unknown_ports_are_named(
    recwarn: pytest.WarningsRecorder,
) -> None:
    lone = fg.Scenario("lone", duration=0.1, seed=1)
    lone.node("a")
    alone = lone.run()
    overview(alone)
    assert not [w for w in recwarn if "legend" in str(w.message)]
    with pytest.raises(fg.ScenarioError, match="bottleneck: got a run without ports"):
        alone.bottleneck()

    sc = fg.Scenario("ports", duration=0.1, seed=1)
    sc.node("a")
    sc.node("b")
    sc.link("a", "b", "10Mbps")
    results = sc.run()
    assert isinstance(queue_over_time(results, ports=["a->b"]), Figure)
    with pytest.raises(
        fg.ScenarioError, match=r"`ports`: got 'a-b', expected a port of the run: a->b"
    ):
        queue_over_time(results, ports=["a-b"])


def test_long_names_are_clipped_in_legends_and_titles(
    tmp_path: Path, recwarn: pytest.WarningsRecorder
) -> None:
    """A 5,000-character flow name collapsed the axes (constrained layout gave up)."""
    long_name = "n" * 5000
    sc = fg.Scenario("s" * 500, duration=0.5, seed=1)
    sc.node("a")
    sc.node("b")
    sc.link("a", "b", "10Mbps")
    sc.flow("a", "b", fg.source("cbr", rate="1Mbps"), name=long_name)
    figure = overview(sc.run(), tmp_path / "o.png")
    labels = [t.get_text() for ax in figure.axes for t in ax.get_legend().get_texts()]
    assert max(map(len, labels)) == 40 and f"{'n' * 37}..." in labels
    assert len(figure.get_suptitle()) == 80
    assert not [w for w in recwarn if "constrained_layout" in str(w.message)]


def test_dollar_signs_in_names_are_shown_as_written(tmp_path: Path) -> None:
    """Matplotlib reads text between two `$` as mathematics: a flow named `$\\frac{1}$` (or
    a node `a$\\alpha`) stopped `fairgate run --plot` with a traceback after the run."""
    from fairgate.plot import class_throughput, transfer_time_cdf

    sc = fg.Scenario("$\\nosuch{x}$ run", duration=0.5, seed=1)
    sc.node("a$\\alpha")
    sc.node("b")
    sc.link("a$\\alpha", "b", "10Mbps")
    sc.flow("a$\\alpha", "b", fg.source("cbr", rate="1Mbps"), name="$\\frac{1}$")
    results = sc.run()
    figure = overview(results, tmp_path / "o.png")
    labels = [t.get_text() for ax in figure.axes for t in ax.get_legend().get_texts()]
    assert labels == ["a\\$\\alpha->b", "b->a\\$\\alpha", "\\$\\frac{1}\\$"]
    assert figure.get_suptitle() == "\\$\\nosuch{x}\\$ run"
    queue_over_time(results, path=tmp_path / "q.png")
    class_throughput(results, path=tmp_path / "c.png")
    transfer_time_cdf(results, path=tmp_path / "t.png")


def test_a_name_beginning_with_an_underscore_keeps_its_legend_entry() -> None:
    """A legend leaves out labels that begin with `_`: a flow `_f1` was drawn unnamed."""
    sc = fg.Scenario("u", duration=0.5, seed=1)
    sc.node("a").node("b").link("a", "b", "10Mbps")
    sc.flow("a", "b", fg.source("cbr", rate="1Mbps"), name="_f1")
    figure = overview(sc.run())
    labels = [t.get_text() for ax in figure.axes for t in ax.get_legend().get_texts()]
    assert labels == ["a->b", "b->a", " _f1"]


def test_the_overview_draws_ten_flows_in_ten_colours_and_says_how_many_it_left_out() -> None:
    sc = fg.Scenario("many", duration=0.5, seed=1)
    sc.node("a")
    sc.node("b")
    sc.link("a", "b", "10Mbps")
    sc.flow("a", "b", fg.source("cbr", rate="100kbps"), name="f{i}", count=12)
    figure = overview(sc.run())
    lines = figure.axes[1].get_lines()
    assert len(lines) == 10 and len({line.get_color() for line in lines}) == 10
    assert figure.axes[1].get_legend().get_title().get_text() == "first 10 of 12 flows"


@pytest.mark.parametrize(
    ("where", "message"),
    [
        ("", "an empty path, expected a file or directory"),
        (".", "a directory; expected a file path"),
        ("plot", "expected a file name ending in one of .avif"),
        ("plot.xyz", "expected a file name ending in one of"),
        ("missing/plot.png", "is not a directory; expected a file in an existing directory"),
    ],
    ids=["empty", "folder", "no-suffix", "unknown-suffix", "missing-folder"],
)
def test_a_figure_path_that_cannot_take_a_figure_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, where: str, message: str
) -> None:
    """Matplotlib would add .png to a folder's name or an empty one and write beside it."""
    from fairgate.fluid.plot import solutions_figure
    from fairgate.plot_gateway import gateway_figure

    monkeypatch.chdir(tmp_path)
    sc = fg.Scenario("plot", duration=0.5)
    sc.node("a").node("b")
    sc.link("a", "b", "10Mbps", "10ms", fg.queue("fifo", limit=10))
    results = sc.run()
    for draw in (
        lambda: overview(results, where),
        lambda: queue_over_time(results, where),
        lambda: gateway_figure(results, "a", where),
        lambda: solutions_figure({"a": pd.DataFrame({"time_s": [0], "q": [0], "p": [0]})}, where),
    ):
        with pytest.raises(fg.ScenarioError, match=f"path: got .*{message}"):
            draw()
    assert list(tmp_path.iterdir()) == []

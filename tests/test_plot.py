"""Plotting leaves matplotlib's backend to the user and returns Figures, saving only on request."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from matplotlib.figure import Figure

import fairgate as fg
from fairgate.plot import overview


def test_importing_the_plotting_modules_keeps_the_users_backend() -> None:
    code = (
        "import matplotlib; matplotlib.use('svg'); "
        "import fairgate.plot, fairgate.repro.keshav, fairgate.repro.queueing, "
        "fairgate.studies.keshav_buffers; print(matplotlib.get_backend())"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "svg"


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

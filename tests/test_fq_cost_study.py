"""`fairgate study fq-cost`: Vaidyanathan's per-packet cost model on a simulated bottleneck."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import fairgate
from fairgate import _core
from fairgate.cli import main
from fairgate.studies import fq_cost


@pytest.fixture(scope="module")
def table():
    return fq_cost.cost_table(fq_cost.scenario(flows=20, duration_s=5.0))


def test_table_2_1_orders_the_disciplines_at_every_sample(table) -> None:
    wide = table.pivot_table(index="time_s", columns="discipline", values="total")
    assert set(wide.columns) == {"wfq", "stfq", "drr", "stochastic_fq"}
    assert (wide["wfq"] >= wide["stfq"]).all()
    assert (wide["stfq"] >= wide["drr"]).all()
    c_cls = fq_cost.EFFICIENCY + (1 - fq_cost.EFFICIENCY) * fq_cost.MEAN_COLLIDING
    assert ((wide["drr"] - wide["stochastic_fq"] - (c_cls - 1)).abs() < 1e-9).all()
    assert table["active"].between(0, 20).all()
    assert table["active"].max() > 0


def test_the_study_is_deterministic(table) -> None:
    again = fq_cost.cost_table(fq_cost.scenario(flows=20, duration_s=5.0))
    assert again.equals(table)


def test_bad_input_names_the_field() -> None:
    text = fq_cost.scenario(flows=2, duration_s=1.0)
    ports = '"s0->left", "left->s0", "s1->left", "left->s1", and 6 more'
    with pytest.raises(fairgate.ScenarioError, match=f"study.port.*; it has {ports}$"):
        _core.fq_cost_study(text, "nowhere->else")
    with pytest.raises(fairgate.ScenarioError, match="study.efficiency"):
        _core.fq_cost_study(text, fq_cost.PORT, efficiency=1.5)
    with pytest.raises(fairgate.ScenarioError, match="study.key"):
        _core.fq_cost_study(text, fq_cost.PORT, key="colour")
    with pytest.raises(fairgate.ScenarioError, match="study.interval"):
        _core.fq_cost_study(text, fq_cost.PORT, interval_s=0.0)


@pytest.mark.parametrize(
    "call, said",
    [
        (
            lambda: fq_cost.scenario(flows="x"),
            "`flows`: got 'x', expected a whole number in [1, 100000]",
        ),
        (
            lambda: fq_cost.scenario(flows=10**7),
            "`flows`: got 10000000, expected a whole number in",
        ),
        (lambda: fq_cost.scenario(duration_s=float("nan")), "`duration_s`: got nan, expected"),
        (lambda: fq_cost.cost_table(None), "text: got None, expected TOML text (str)"),
        (lambda: fq_cost.cost_table(fq_cost.scenario(2, 1.0), None), "`port`: got None"),
    ],
)
def test_the_python_helpers_name_their_arguments(call, said) -> None:
    """A string of flows was Python's TypeError from range(), NaN seconds a TOML "nans",
    10^7 flows a text of gigabytes; None as the text or port was PyO3's TypeError."""
    with pytest.raises(fairgate.ScenarioError, match=re.escape(said)):
        call()


def test_a_study_breaking_conservation_is_an_error() -> None:
    """The study's run never checked conservation; a leaking discipline gave numbers."""
    text = fq_cost.scenario(flows=2, duration_s=2.0).replace(
        'kind = "fifo", limit = 200', 'kind = "test_leak", every = 5'
    )
    broken = r"conservation violated \(1 port, 2 flows\): port left->right: arrivals"
    with pytest.raises(fairgate.SimulationError, match=broken):
        fq_cost.cost_table(text)


def test_the_cli_runs_it(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["study", "fq-cost", "--quick", "--out", str(tmp_path)]) == 0
    assert (tmp_path / "fq_cost.csv").is_file()
    assert "wfq" in (tmp_path / "fq_cost.md").read_text()
    assert "wrote" in capsys.readouterr().out

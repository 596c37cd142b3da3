"""`fairgate study fq-cost`: Vaidyanathan's per-packet cost model on a simulated bottleneck."""

from __future__ import annotations

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
    with pytest.raises(fairgate.ScenarioError, match="study.port"):
        _core.fq_cost_study(text, "nowhere->else")
    with pytest.raises(fairgate.ScenarioError, match="study.efficiency"):
        _core.fq_cost_study(text, fq_cost.PORT, efficiency=1.5)
    with pytest.raises(fairgate.ScenarioError, match="study.key"):
        _core.fq_cost_study(text, fq_cost.PORT, key="colour")
    with pytest.raises(fairgate.ScenarioError, match="study.interval"):
        _core.fq_cost_study(text, fq_cost.PORT, interval_s=0.0)


def test_the_cli_runs_it(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["study", "fq-cost", "--quick", "--out", str(tmp_path)]) == 0
    assert (tmp_path / "fq_cost.csv").is_file()
    assert "wfq" in (tmp_path / "fq_cost.md").read_text()
    assert "wrote" in capsys.readouterr().out

"""Fluid models [Byun07, §4.4, §6.4]: hand-checkable cases of the solver, the Fourier fit, the
marking law and the reports."""

from __future__ import annotations

import math
import re

import numpy as np
import pandas as pd
import pytest

import fairgate as fg
from fairgate import fluid
from fairgate.fluid import FluidInputs, FluidParams, FourierSeries, fit_fourier
from fairgate.fluid.model import delayed_clock


def test_fit_recovers_known_coefficients_exactly() -> None:
    truth = FourierSeries(period=500.0, a0=1.0, cos=(0.2, 0.0, -0.05), sin=(0.1, 0.03, 0.0))
    samples = truth(np.arange(500.0))
    fitted = fluid.fit_fourier(pd.Series(samples))
    assert fitted.period == 500.0
    assert fitted.a0 == pytest.approx(1.0, abs=1e-12)
    assert np.allclose(fitted.cos[:3], truth.cos, atol=1e-12)
    assert np.allclose(fitted.sin[:3], truth.sin, atol=1e-12)
    assert np.allclose(fitted.cos[3:] + fitted.sin[3:], 0.0, atol=1e-12)
    assert len(fitted.cos) == fluid.HARMONICS


def test_fit_recovers_coefficients_under_noise() -> None:
    truth = FourierSeries(period=500.0, a0=3.0, cos=(1.0, 0.5), sin=(0.5, 0.2))
    noise = np.random.default_rng(7).normal(0.0, 0.3, 500)
    fitted = fluid.fit_fourier(truth(np.arange(500.0)) + noise)
    assert fitted.a0 == pytest.approx(3.0, abs=0.05)
    assert np.allclose(fitted.cos[:2], truth.cos, atol=0.06)
    assert np.allclose(fitted.sin[:2], truth.sin, atol=0.06)


def test_coefficients_round_trip_through_json(tmp_path) -> None:
    inputs = {
        "omega": fluid.fit_fourier(np.sin(np.arange(500.0) / 9.0) + 1.0),
        "delay": FourierSeries.constant(2.0),
    }
    path = fluid.save_inputs(inputs, tmp_path / "fluid_inputs.json")
    assert fluid.load_inputs(path) == inputs


def test_series_with_unequal_terms_is_refused() -> None:
    with pytest.raises(fg.ScenarioError, match="same number of cosine and sine"):
        FourierSeries(period=10.0, a0=0.0, cos=(1.0,), sin=())


def test_fit_rejects_short_or_broken_series() -> None:
    with pytest.raises(fg.ScenarioError, match="has 10: expected at most 4 harmonics"):
        fluid.fit_fourier(np.ones(10))
    with pytest.raises(fg.ScenarioError, match="NaN"):
        fluid.fit_fourier(np.array([1.0, np.nan] * 20))
    # Each of these ended in a numpy or LinAlgError traceback, or a 300-digit message.
    for args, message in [
        (("x",), "`series`: got 'x', expected a 1-D series of numbers"),
        ((np.ones((4, 4)),), r"`series`: got an array of shape \(4, 4\)"),
        ((np.ones(100), 1e308), r"`harmonics`: got 1e\+308, which needs"),
        ((np.ones(100), 8, 1e308), "`step`: got 1e[+]308, so the span of 100 samples overflows"),
    ]:
        with pytest.raises(fg.ScenarioError, match=message):
            fluid.fit_fourier(*args)


def test_no_aqm_limit_matches_the_closed_form() -> None:
    prm = FluidParams(horizon=2.0)
    sol = fluid.solve("none", prm)
    slope = prm.connections / prm.rtt**2
    assert np.allclose(sol["lam"], prm.service_rate + slope * sol["t"])
    assert (sol["p"] == 0.0).all()
    assert sol["q"].iloc[-1] == pytest.approx(slope * 2.0**2 / 2.0, rel=0.01)


def test_pep_delay_shifts_the_queue_by_the_delay() -> None:
    prm = FluidParams(horizon=5.0)
    plain = fluid.solve("none", prm)
    delayed = fluid.solve("none", prm, FluidInputs(delay=FourierSeries.constant(2.0)))
    first_rise = delayed.loc[delayed["q"] > 0, "t"].iloc[0]
    plain_rise = plain.loc[plain["q"] > 0, "t"].iloc[0]
    assert first_rise == pytest.approx(plain_rise + 2.0, abs=1e-9)
    shift = round(2.0 / prm.step)
    assert np.allclose(delayed["q"].to_numpy()[shift:], plain["q"].to_numpy()[:-shift], atol=1e-6)


def _equilibrium_marking(prm: FluidParams) -> float:
    """p with (1 − p)·λ*(p) = τμ where λ*(p) = m/R·sqrt(2(1 − p)/p) makes (4.1) stationary."""
    low, high = 1e-9, 1.0 - 1e-9
    for _ in range(100):
        p = (low + high) / 2.0
        rate = (1.0 - p) * prm.connections / prm.rtt * math.sqrt(2.0 * (1.0 - p) / p)
        low, high = (p, high) if rate > prm.target_utilisation * prm.service_rate else (low, p)
    return p


def test_avqred_settles_at_the_hand_computed_equilibrium() -> None:
    prm = FluidParams(horizon=100.0, rtt=0.6, start="empty")
    sol = fluid.solve("avqred", prm)
    p_star = _equilibrium_marking(prm)
    lam_star = prm.connections / prm.rtt * math.sqrt(2.0 * (1.0 - p_star) / p_star)
    end = sol.iloc[-1]
    assert end["p"] == pytest.approx(p_star, abs=1e-3)
    assert end["lam"] == pytest.approx(lam_star, rel=1e-3)
    assert prm.min_th <= end["v"] <= prm.max_th


def test_red_settles_at_the_hand_computed_equilibrium() -> None:
    prm = FluidParams(connections=100, horizon=200.0, rtt=0.6, start="empty")
    sol = fluid.solve("red", prm)
    p_star = _equilibrium_marking(prm)
    end = sol.iloc[-1]
    assert end["p"] == pytest.approx(p_star, abs=2e-3)
    assert prm.min_th <= end["w"] <= prm.max_th
    assert end["q"] == pytest.approx(end["w"], abs=0.5)


def test_marking_law_branches() -> None:
    prm = FluidParams()
    assert fluid.marking_rate("red", 0.3, 90.0, 0.0, 6.0, 0.0, prm) == pytest.approx(0.7 / 60 * 6.0)
    assert fluid.marking_rate("avqred", 0.3, 0.0, 90.0, 0.0, 6.0, prm) == pytest.approx(
        1.0 / 60 * 6.0
    )
    assert fluid.marking_rate("red", 0.3, 10.0, 0.0, 6.0, 0.0, prm) == pytest.approx(-0.3)
    assert fluid.marking_rate("red", 0.3, 130.0, 0.0, 6.0, 0.0, prm) == pytest.approx(0.7)
    assert fluid.marking_rate("avq", 0.3, 0.0, 29.0, 0.0, 0.0, prm) == pytest.approx(-0.3)
    assert fluid.marking_rate("avq", 0.3, 0.0, 31.0, 0.0, 0.0, prm) == pytest.approx(0.7)
    assert fluid.marking_rate("none", 0.3, 130.0, 130.0, 6.0, 6.0, prm) == 0.0


def test_chapter6_new_connection_rate_follows_its_first_order_law() -> None:
    prm = FluidParams(connections=500, horizon=5.0)
    sol = fluid.solve("none", prm, FluidInputs(upsilon=FourierSeries.constant(0.2)), chapter=6)
    target = 0.2 * 500 * prm.max_rcv_win
    assert sol["n"].iloc[-1] == pytest.approx(target * (1.0 - math.exp(-5.0)), rel=0.01)
    ablated = fluid.solve("none", prm, FluidInputs(), chapter=6)
    assert (ablated["n"] == 0.0).all()


def test_solutions_are_deterministic() -> None:
    inputs = FluidInputs(
        omega=FourierSeries(50.0, 1.0, (0.2,), (0.1,)),
        delay=FourierSeries(50.0, 2.0, (0.5,), (0.0,)),
    )
    prm = FluidParams(horizon=20.0)
    first = fluid.solve("red", prm, inputs)
    pd.testing.assert_frame_equal(first, fluid.solve("red", prm, inputs))


def test_bad_parameters_name_the_field() -> None:
    with pytest.raises(
        fg.ScenarioError, match=r"`fluid\.scheme`: got 'blue', expected one of red, avqred"
    ):
        fluid.solve("blue")
    with pytest.raises(fg.ScenarioError, match=r"`fluid\.chapter`: got 5, expected 4 or 6"):
        fluid.solve("red", chapter=5)
    with pytest.raises(
        fg.ScenarioError, match=r"`fluid\.rtt`: got 0.0, expected a finite number in \[1e-11, "
    ):
        fluid.solve("red", FluidParams(rtt=0.0))
    with pytest.raises(fg.ScenarioError, match=r"fluid\.max_th"):
        fluid.solve("red", FluidParams(min_th=120.0, max_th=60.0))


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("horizon", math.inf),
        ("horizon", 1e300),
        ("step", 1e-9),
        ("rtt", math.nan),
        ("connections", 0.5),
        ("connections", True),
        ("target_utilisation", 0.0),
        ("red_max_p", 5.0),
        ("avqred_max_p", -1.0),
        ("decrease", 2.0),
        ("min_th", -50.0),
        ("max_th", math.inf),
        ("max_rcv_win", 0.0),
        ("service_rate", "fast"),
        ("rtt", 1e-300),  # m/R² divided by zero
        ("rtt", 1e300),  # R² overflowed
        ("connections", 1e300),
        ("service_rate", 1e300),
    ],
)
def test_every_parameter_out_of_range_is_refused_before_anything_is_allocated(field, value):
    """Each of these ran to a non-finite solution, or died allocating 3.6 TiB or converting
    infinity, before the ranges were checked."""
    with pytest.raises(fg.ScenarioError, match=rf"fluid\.(step|{field})`: got"):
        fluid.solve("avqred", FluidParams(**{field: value}), chapter=6)


def test_a_solution_that_leaves_the_finite_numbers_is_refused(monkeypatch) -> None:
    """Parameters each within its range might still overflow together; the solution is
    checked, not returned with inf or NaN in it as if complete."""
    from fairgate.fluid import model

    real = model._integrate

    def overflowing(*args):
        state = real(*args)
        state["q"][7] = math.inf
        return state

    monkeypatch.setattr(model, "_integrate", overflowing)
    with pytest.raises(fg.ScenarioError, match=r"`q` left the finite numbers at t = 0.07 units"):
        fluid.solve("red", FluidParams(horizon=1.0, connections=7))
    monkeypatch.setattr(model, "_integrate", lambda *args: 1.0 / 0.0)
    with pytest.raises(fg.ScenarioError, match=r"with the parameters connections=7, horizon=1.0"):
        fluid.solve("red", FluidParams(horizon=1.0, connections=7))


def test_a_fourier_series_and_its_fit_refuse_non_finite_and_negative_values() -> None:
    with pytest.raises(fg.ScenarioError, match=r"fourier\.period"):
        FourierSeries(period=math.inf, a0=0.0, cos=(), sin=())
    with pytest.raises(fg.ScenarioError, match=r"fourier\.cos"):
        FourierSeries(period=10.0, a0=0.0, cos=(math.nan,), sin=(0.0,))
    with pytest.raises(fg.ScenarioError, match=r"`harmonics`"):
        fit_fourier(np.ones(50), harmonics=-1)
    with pytest.raises(fg.ScenarioError, match=r"`step`"):
        fit_fourier(np.ones(50), step=0.0)


def test_saved_inputs_that_are_not_series_are_named(tmp_path) -> None:
    for name, text in [("short", '{"omega": {"period": 1}}'), ("text", "nope"), ("list", "[1]")]:
        path = tmp_path / f"{name}.json"
        path.write_text(text, encoding="utf-8")
        with pytest.raises(fg.ScenarioError, match=rf"{name}.json: cannot be read"):
            fluid.load_inputs(path)
    with pytest.raises(fg.ScenarioError, match="missing.json: cannot be read"):
        fluid.load_inputs(tmp_path / "missing.json")


def test_improvement_table_sits_beside_simulation_and_paper() -> None:
    change = fluid.improvement({"mean": 100.0, "std": 20.0}, {"mean": 50.0, "std": 16.0})
    assert change == pytest.approx({"mean": -50.0, "std": -20.0})
    table = fluid.improvement_table(change, simulation={"mean": -40.0, "std": -10.0})
    assert list(table["statistic"]) == ["mean", "std"]
    assert list(table["paper_pct"]) == [-50.6, -17.2]
    assert table["model_same_sign_as_paper"].all()


def _oscillating_inputs() -> FluidInputs:
    return FluidInputs(
        omega=FourierSeries(50.0, 1.0, (0.15,), (0.05,)),
        delay=FourierSeries(50.0, 3.0, (1.0,), (0.5,)),
        upsilon=FourierSeries(50.0, 0.1, (0.05,), (0.0,)),
    )


def test_model_improvement_and_upsilon_ablation_report_every_row() -> None:
    prm = FluidParams(horizon=80.0)
    change = fluid.model_improvement(prm, _oscillating_inputs())
    assert set(change) == {"mean", "std"} and all(np.isfinite(list(change.values())))
    table = fluid.upsilon_ablation(
        FluidParams(connections=500, horizon=80.0), _oscillating_inputs()
    )
    assert set(zip(table["scheme"], table["upsilon"], strict=True)) == {
        ("red", "measured"),
        ("red", "zero"),
        ("avqred", "measured"),
        ("avqred", "zero"),
    }
    assert (table["q_std"] >= 0).all()


def test_figures_are_returned_and_saved_only_when_asked(tmp_path) -> None:
    prm = FluidParams(horizon=5.0)
    sols = {name: fluid.solve(name, prm) for name in ("red", "avqred")}
    fig = fluid.solutions_figure(sols)
    assert len(fig.axes) == 2 and not list(tmp_path.iterdir())
    fluid.solutions_figure(sols, tmp_path / "queue.png")
    table = fluid.improvement_table({"mean": -30.0, "std": -10.0})
    fluid.improvement_figure(table, tmp_path / "bars.png")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bars.png", "queue.png"]


@pytest.mark.parametrize(
    ("scheme", "chapter"), [("red", 4), ("avqred", 4), ("red", 6), ("avqred", 6)]
)
def test_the_equilibrium_start_is_a_rest_point_of_the_equations(scheme: str, chapter: int) -> None:
    prm = FluidParams(connections=400, horizon=20.0)
    inputs = FluidInputs(delay=FourierSeries.constant(5.0), upsilon=FourierSeries.constant(0.1))
    sol = fluid.solve(scheme, prm, inputs, chapter)
    for column in ("lam", "q", "v", "w", "p"):
        values = sol[column].to_numpy()
        assert np.allclose(values, values[0], rtol=1e-9, atol=1e-9), column
    mu, m, rtt = prm.service_rate, prm.connections, prm.rtt
    p, lam = sol["p"].iloc[0], sol["lam"].iloc[0]
    if chapter == 4:
        assert (1.0 - p) * lam == pytest.approx(mu, rel=1e-9)
        assert (1.0 - p) * m / rtt**2 == pytest.approx(p * lam**2 / (2.0 * m), rel=1e-9)
    else:
        old = 0.9 * m
        assert lam == pytest.approx(mu)
        assert (1.0 - p) * old / rtt**2 == pytest.approx(p * prm.decrease * lam**2 / old)
        assert sol["n"].iloc[-1] == pytest.approx(0.1 * m * prm.max_rcv_win)


def test_the_rest_point_drops_about_the_emulations_fraction() -> None:
    """R = 6 units: the chapter-4 rest point drops 16.3 % of arrivals, the emulation 18.5 %
    [Byun07, Table 4.3]; R = 0.6 units would drop 70 %."""
    start = fluid.solve("avqred", FluidParams(horizon=0.01))
    assert start["p"].iloc[0] == pytest.approx(0.163, abs=0.001)
    dimensional = fluid.solve("avqred", FluidParams(horizon=0.01, rtt=0.6))
    assert dimensional["p"].iloc[0] == pytest.approx(0.70, abs=0.01)


def test_a_bad_start_names_the_field() -> None:
    with pytest.raises(fg.ScenarioError, match=r"fluid\.start"):
        fluid.solve("red", FluidParams(start="cold"))


def test_the_delayed_clock_never_runs_backwards() -> None:
    times = np.array([0.0, 1.0, 2.0, 3.0])
    late = delayed_clock(times, np.array([0.0, 2.0, 0.5, -1.0]))
    assert late.tolist() == [0.0, 0.0, 1.5, 3.0]


def test_before_the_delay_has_passed_the_queue_holds_its_rest_point() -> None:
    inputs = FluidInputs(
        omega=FourierSeries(50.0, 1.0, (0.3,), (0.2,)), delay=FourierSeries.constant(5.0)
    )
    sol = fluid.solve("avqred", FluidParams(horizon=8.0), inputs)
    early = sol[sol["t"] <= 5.0]
    assert np.allclose(early["q"], 90.0, atol=1e-9)
    assert not np.allclose(sol["q"].iloc[-1], 90.0, atol=1e-3)


def test_the_delay_sweep_replaces_only_the_delay() -> None:
    inputs = FluidInputs(
        omega=FourierSeries(50.0, 1.0, (0.2,), (0.0,)),
        delay=FourierSeries(50.0, 8.0, (2.0,), (0.0,)),
    )
    prm = FluidParams(horizon=80.0)
    sweep = fluid.delay_sweep("red", [0.0, 3.0], prm, inputs)
    assert sweep["delay_units"].tolist() == [0.0, 3.0]
    fixed = FluidInputs(omega=inputs.omega, delay=FourierSeries.constant(3.0))
    expected = fluid.queue_stats(fluid.solve("red", prm, fixed))
    assert sweep.loc[1, "q_mean"] == expected["mean"] and sweep.loc[1, "q_std"] == expected["std"]


def test_input_percentiles_span_a_fitted_series() -> None:
    series = FourierSeries(50.0, 40.0, (4.0,), (0.0,))
    spread = fluid.input_percentiles(series, (0.0, 50.0, 100.0))
    assert spread[0.0] == pytest.approx(36.0, abs=1e-3)
    assert spread[50.0] == pytest.approx(40.0, abs=1e-2)
    assert spread[100.0] == pytest.approx(44.0, abs=1e-9)
    assert fluid.input_percentiles(FourierSeries.constant(2.5)) == {5.0: 2.5, 50.0: 2.5, 95.0: 2.5}
    with pytest.raises(fg.ScenarioError, match="step"):
        fluid.input_percentiles(series, step=0.0)


@pytest.mark.parametrize(
    "changed, chapter, named",
    [
        ({"red_weight": 0.9}, 4, "`fluid.red_weight`: got 0.9, at which RED's average diverges"),
        ({"step": 0.3}, 4, "`fluid.step`: got 0.3, at which RED's average diverges"),
        ({"step": 2.0, "red_weight": 1e-4}, 6, "`fluid.step`: got 2.0, at which the new-conn"),
    ],
)
def test_a_step_at_which_forward_euler_diverges_is_refused(changed, chapter, named):
    """Such a step gave NaN, or finite garbage of 1e100, as the solution (a 0.999999 weight
    diverged for the schemes that do not read RED's average, unseen in their marking)."""
    with pytest.raises(fg.ScenarioError, match=re.escape(named)):
        fluid.solve("avq", FluidParams(**changed), chapter=chapter)


@pytest.mark.parametrize("scheme", ["red", "avqred", "avq", "none"])
def test_the_largest_stable_red_weight_gives_a_finite_solution(scheme):
    weight = 1.0 - math.exp(-1.99)  # step x ln(1/(1 - weight)) / 0.01 = 1.99 at the 0.01 step
    solution = fluid.solve(scheme, FluidParams(red_weight=weight, horizon=50.0), chapter=4)
    assert np.isfinite(solution.select_dtypes("number").to_numpy()).all()
    assert solution["w"].max() <= 2 * solution["q"].max() + 1e-9


def test_numpy_scalars_become_python_numbers():
    """A numpy integer wraps silently in arithmetic; the parameters hold Python numbers."""
    params = FluidParams(connections=np.int64(400), rtt=np.float32(6.0))
    assert type(params.connections) is int and type(params.rtt) is float


def test_an_improvement_over_a_constant_queue_has_no_value() -> None:
    """With constant inputs RED's queue stays at its rest point (std 0): model_improvement
    ended in a ZeroDivisionError."""
    change = fluid.model_improvement(FluidParams(horizon=100.0))
    assert change["mean"] == 0.0 and math.isnan(change["std"])
    table = fluid.improvement_table(change).set_index("statistic")
    assert table.loc["std", "model_same_sign_as_paper"] is None
    assert not table.loc["mean", "model_same_sign_as_paper"]


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: fluid.queue_stats(None), "solution: got None, expected the frame"),
        (lambda: fluid.queue_stats(pd.DataFrame({"a": [1]})), "solution: got a DataFrame"),
        (lambda: fluid.improvement({}, {}), r"red: got \{\}, expected a mapping with `mean`"),
        (lambda: fluid.improvement({"mean": 1, "std": "x"}, {}), r"`red\['std'\]`: got 'x'"),
        (lambda: fluid.improvement_table({"mean": 1}), "model: got"),
        (lambda: fluid.delay_sweep("red", 5), "delays: got 5, expected a list"),
        (lambda: fluid.delay_sweep("red", [-1.0]), r"`delays\[0\]`: got -1.0"),
        (lambda: fluid.input_percentiles(5), "series: got 5, expected a FourierSeries"),
        (
            lambda: fluid.input_percentiles(FourierSeries.constant(1.0), [101]),
            r"`percentiles\[0\]`: got 101, expected a finite number in \[0, 100\]",
        ),
    ],
)
def test_the_comparisons_name_an_argument_of_the_wrong_kind(call, message: str) -> None:
    """Each was a KeyError, TypeError or AttributeError from inside pandas."""
    with pytest.raises(fg.ScenarioError, match=message):
        call()
    with pytest.raises(fg.ScenarioError, match="`warmup_s`: got 'x', expected a finite number"):
        fluid.queue_stats(fluid.solve("red", FluidParams(horizon=5.0)), "x")  # type: ignore[arg-type]


def test_a_change_without_a_value_draws_no_bar() -> None:
    """The bars drew NaN as 0 % (and the model-simulation figure labelled it "0")."""
    table = fluid.improvement_table({"mean": -20.0, "std": math.nan}, {"mean": -10.0, "std": 5.0})
    figure = fluid.improvement_figure(table)
    heights = [patch.get_height() for patch in figure.axes[0].patches]
    assert len(heights) == 6 and math.isnan(heights[1]) and heights[0] == -20.0

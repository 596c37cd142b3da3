"""Fluid (delay-differential) models of a satellite gateway with a PEP [Byun07, §4.4, §6.4].

``solve`` integrates equations (4.1)-(4.5) or (6.1)-(6.6); ``measure_inputs`` fits the inputs
ω(t), d(t), υ(t) from a fairgate run; ``compare`` reports AVQRED's improvement over RED and the
υ ≡ 0 ablation. The docs page is ``docs/models/fluid.md``.
"""

from fairgate.fluid.compare import (
    PAPER_IMPROVEMENT,
    delay_sweep,
    improvement,
    improvement_table,
    input_percentiles,
    model_improvement,
    queue_stats,
    upsilon_ablation,
)
from fairgate.fluid.fourier import HARMONICS, FourierSeries, fit_fourier, load_inputs, save_inputs
from fairgate.fluid.measure import (
    measure_inputs,
    new_connection_fraction,
    offered_load_ratio,
    pep_delay,
)
from fairgate.fluid.model import SCHEMES, FluidInputs, FluidParams, marking_rate, solve
from fairgate.fluid.plot import improvement_figure, model_simulation_figure, solutions_figure

__all__ = [
    "HARMONICS",
    "PAPER_IMPROVEMENT",
    "SCHEMES",
    "FluidInputs",
    "FluidParams",
    "FourierSeries",
    "delay_sweep",
    "fit_fourier",
    "improvement",
    "improvement_figure",
    "improvement_table",
    "input_percentiles",
    "load_inputs",
    "marking_rate",
    "measure_inputs",
    "model_simulation_figure",
    "model_improvement",
    "new_connection_fraction",
    "offered_load_ratio",
    "pep_delay",
    "queue_stats",
    "save_inputs",
    "solutions_figure",
    "solve",
    "upsilon_ablation",
]

"""fairgate: a fast, faithful toolkit for congestion control at routers and gateways.

Quick start::

    import fairgate as fg

    sc = fg.Scenario("demo", duration=20)
    sc.dumbbell(senders=2, bottleneck=fg.link_params("10Mbps", "10ms", fg.queue("fifo", limit=50)),
                access=fg.link_params("100Mbps", "1ms"))
    sc.flow("s0", "d0", fg.source("cbr", rate="6Mbps"))
    sc.flow("s1", "d1", fg.source("poisson", rate="6Mbps"))
    res = sc.run()
    print(res.flows[["flow", "goodput_bps", "loss_rate"]])

A scenario file runs the same way: ``fg.run_file("scenarios/showcase.toml")``.
"""

from fairgate._core import ScenarioError, SimulationError
from fairgate._core import __version__ as __version__
from fairgate.results import Results
from fairgate.runner import (
    ConservationError,
    registry,
    run_file,
    run_text,
    validate_file,
    validate_text,
)
from fairgate.scenario import Scenario, link_params, queue, source


def __getattr__(name: str) -> object:
    """``fg.sweep`` loads Dask, DuckDB and SciPy only when first used."""
    if name == "sweep":
        from fairgate.sweeps import sweep

        return sweep
    raise AttributeError(f"module 'fairgate' has no attribute {name!r}")


__all__ = [
    "ConservationError",
    "Results",
    "Scenario",
    "ScenarioError",
    "SimulationError",
    "link_params",
    "queue",
    "registry",
    "run_file",
    "run_text",
    "source",
    "sweep",
    "validate_file",
    "validate_text",
]

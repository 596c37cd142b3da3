"""The RED dumbbell measurement script keeps running, and RED's reference options move it."""

import importlib.util
from pathlib import Path

SCRIPT = Path(__file__).parent.parent / "scenarios" / "red_dumbbell" / "measure.py"


def load_measure():
    spec = importlib.util.spec_from_file_location("red_dumbbell_measure", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_measure_reports_the_bottleneck_for_each_rule_set():
    m = load_measure()
    path = SCRIPT.parent / m.SCENARIOS[0]
    short = ('simulation.duration="5s"',)
    ns = m.measure(path, short)
    floyd93 = m.measure(path, short + m.FLOYD93_RULES)
    ns3 = m.measure(path, short + m.NS3_SETUP)
    for row in (ns, floyd93, ns3):
        assert 0.0 < row["utilisation"] <= 1.0
        assert row["drops_early"] > 0
    assert ns != floyd93

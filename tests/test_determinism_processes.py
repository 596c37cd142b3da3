"""Same inputs, same bytes, whichever process computes them: the Keshav measurement (interval
means and SDs, pandas group-bys on floats) and a run's tables, computed in two interpreters
whose string hashing (PYTHONHASHSEED, so set and dict-of-set order) differs."""

from __future__ import annotations

import os
import subprocess
import sys

from conftest import SCENARIOS

SCRIPT = """
import io, sys
from fairgate.repro import keshav
from fairgate.runner import run_file
from fairgate.sweeps.stats import repetitions

out = io.StringIO()
pairs = keshav.load_pairs()
paper = keshav.load_paper()
for scenario in (1, 2, 4, 5, 6):
    for label in keshav.labels_for(scenario, paper):
        stats = keshav.run_case(scenario, label, pairs, True)["stats"]
        out.write(f"S{scenario} {label}\\n" + stats.to_csv(index=False))
results = run_file(sys.argv[1], ["simulation.duration=12s"])
out.write(results.flows.to_csv(index=False) + results.ports.to_csv(index=False))
flows = results.flows.assign(group=results.flows["kind"].astype(str))
out.write(repetitions(flows, ["group"]).to_csv(index=False))
sys.stdout.write(out.getvalue())
"""


def run_in_process(hash_seed: str, scenario: str) -> bytes:
    env = {**os.environ, "PYTHONHASHSEED": hash_seed}
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT, scenario], capture_output=True, env=env, timeout=600
    )
    assert done.returncode == 0, done.stderr.decode()
    return done.stdout


def test_two_processes_with_different_hash_seeds_give_the_same_bytes():
    scenario = str(SCENARIOS / "open_loop_mix.toml")
    a = run_in_process("1", scenario)
    b = run_in_process("4242", scenario)
    assert len(a) > 10_000
    assert a == b

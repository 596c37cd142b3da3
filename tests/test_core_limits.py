"""Work inside the core, bounded: the studies it runs in one call stop on Ctrl-C and name
their own arguments, and a scenario is held to the memory the process may really map
(`ulimit -v`), not only to `simulation.memory_limit_mib`; a CPU-time limit stops a run cleanly."""

from __future__ import annotations

import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import fairgate as fg
from test_cli import SHOWCASE, fairgate
from test_hardening import write


@pytest.mark.parametrize(
    "study",
    [
        "from fairgate.studies import keshav_buffers as m; m.sweep(trace_s=1e6)",
        "from fairgate.studies import fq_cost as m; m.cost_table(m.scenario(duration_s=3e4))",
    ],
)
def test_ctrl_c_stops_a_study_inside_the_core(study: str):
    """The studies ran in one call of the core without the GIL: Ctrl-C in Python waited for
    the end (a 10^6 s Keshav trace ran 9 minutes, then aborted on its memory). They now ask
    Python for a signal between pieces of about 0.2 s."""
    code = (
        "import signal; signal.signal(signal.SIGINT, signal.default_int_handler); "
        f"print('started', flush=True); {study}"
    )
    process = subprocess.Popen(
        [sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    assert process.stdout.readline() == b"started\n"
    time.sleep(2)  # inside the core's run
    process.send_signal(signal.SIGINT)
    assert process.wait(timeout=60) == -signal.SIGINT  # Python's exit on KeyboardInterrupt
    assert process.stderr.read().decode().rstrip().endswith("KeyboardInterrupt")


def test_the_keshav_studys_own_arguments_are_named():
    from fairgate.studies import keshav_buffers

    for window, trace_s, said in [
        ("x", 10, "`window`: got 'x', expected a whole number in [1, 68]"),
        (69, 10, "`window`: got 69, expected a whole number in [1, 68]"),
        (8, "x", "`trace_s`: got 'x', expected a finite number > 0"),
        (8, 1e300, "`trace_s`: got 1e300, expected seconds above 0, at most 1.8e7 s"),
    ]:
        with pytest.raises(fg.ScenarioError, match=re.escape(said)):
            keshav_buffers.sweep(window, trace_s)


WIDE_DUMBBELL = """
[simulation]
duration = "10s"
sample_interval = "3ms"
[topology]
kind = "dumbbell"
senders = 2000
bottleneck = { rate = "100Mbps", delay = "10ms" }
access = { rate = "1Gbps", delay = "1ms" }
[[flows]]
name = "f{i}"
count = 2000
src = "s{i}"
dst = "d{i}"
source = { kind = "tcp" }
"""


def test_an_address_space_limit_is_a_memory_limit_named_before_the_run(tmp_path: Path):
    """Under `ulimit -v` (a batch system's limit), a scenario within the 4 GiB default passed
    validation and aborted the process when an allocation failed (exit 134)."""
    import resource

    scenario = write(tmp_path, WIDE_DUMBBELL)  # about 3,126 MiB of series
    assert fairgate("validate", scenario).returncode == 0

    def two_gib() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))

    cmd = [sys.executable, "-m", "fairgate.cli", "run", str(scenario), "--out", str(tmp_path / "o")]
    done = subprocess.run(cmd, preexec_fn=two_gib, capture_output=True, text=True, timeout=300)
    assert done.returncode == 2, done.stderr
    assert "`simulation.sample_interval`: 3334 samples x 12003 series" in done.stderr
    assert "MiB this process may still map (ulimit -v" in done.stderr
    assert done.stderr.rstrip().endswith("or run with a larger ulimit -v")
    assert not (tmp_path / "o").exists()


def test_a_cpu_time_limit_stops_a_run_as_a_batch_systems_stop_does(tmp_path: Path):
    """Past a soft CPU-time limit (`ulimit -St`, a batch system's soft limit) the kernel sends
    SIGXCPU: the run died at once ("CPU time limit exceeded", exit 152) with no word of its
    own, leaving a folder that held only its lock."""
    import resource

    def two_cpu_seconds() -> None:
        resource.setrlimit(resource.RLIMIT_CPU, (2, resource.RLIM_INFINITY))

    long_run = ["--set", "simulation.duration=200000s", "--set", "simulation.sample_interval=100s"]
    out = tmp_path / "o"
    cmd = [sys.executable, "-m", "fairgate.cli", "run", str(SHOWCASE), *long_run, "--out", str(out)]
    done = subprocess.run(cmd, preexec_fn=two_cpu_seconds, capture_output=True, text=True)
    assert done.returncode == 128 + signal.SIGXCPU, done.stderr
    said = "stopped by SIGXCPU (the CPU-time limit: ulimit -t, or a batch system's): `fairgate run`"
    assert said in done.stderr
    assert not out.exists()

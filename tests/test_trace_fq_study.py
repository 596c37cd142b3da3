"""The trace study [Vaidyanathan99, ch. 2]: the passive gateway over a packet trace, through the
CLI (``fairgate study trace-fq --trace FILE``) and ``_core.trace_study``, on a pcap written
here; bad traces and parameters are refused naming the field. Under ``slow``, every reader is
checked against the CSV copies of the real traces in ``../shared/traces/``."""

from __future__ import annotations

import functools
import gzip
import random
import struct
from pathlib import Path

import pandas as pd
import pytest

import fairgate as fg
from conftest import ROOT
from fairgate import _core
from forked import call_forked
from test_cli import fairgate

SHARED_TRACES = ROOT.parent / "shared" / "traces"


def write_pcap(path: Path, packets: int = 3000, seed: int = 1) -> Path:
    """A raw-IP pcap of TCP and UDP packets among 40 hosts at about 400 packets/s."""
    rng = random.Random(seed)
    out = bytearray(struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 101))
    t = 1_000_000.0
    for _ in range(packets):
        t += rng.expovariate(400.0)
        src, dst = 0x0A000000 + rng.randrange(40), 0xC0A80000 + rng.randrange(40)
        proto = rng.choice([6, 6, 6, 17])
        length = rng.choice([40, 52, 576, 1500])
        ip = struct.pack(">BBHHHBBHII", 0x45, 0, length, 0, 0, 64, proto, 0, src, dst)
        ip += struct.pack(">HH", rng.randrange(1024, 1100), rng.choice([25, 53, 80, 443]))
        secs, micros = int(t), round((t - int(t)) * 1e6) % 1_000_000
        out += struct.pack("<IIII", secs, micros, len(ip), length) + ip
    path.write_bytes(bytes(out))
    return path


def test_the_study_writes_its_tables_figures_and_the_thesis_claims(tmp_path: Path):
    trace = write_pcap(tmp_path / "t.pcap")
    done = fairgate("study", "trace-fq", "--trace", trace, "--quick", "--out", tmp_path / "o")
    assert done.returncode == 0, done.stderr
    out = tmp_path / "o"
    for name in ["timeouts", "keys", "costs", "active"]:
        assert (out / f"trace_fq_{name}.csv").stat().st_size > 0
    for fig in ["2_3", "2_4", "2_5", "2_6"]:
        assert (out / f"trace_fq_fig{fig}.png").stat().st_size > 0
    timeouts = pd.read_csv(out / "trace_fq_timeouts.csv")
    assert list(timeouts["timeout_s"]) == [10, 5, 1, 0]
    assert timeouts["max_flows"].is_monotonic_decreasing
    assert "The thesis's claims on this trace" in done.stdout
    assert "first 3,000 IP packets" in done.stdout
    assert "**The line is overloaded**" in done.stdout, "1.7 Mb/s offered to a T1"
    fast = fairgate("study", "trace-fq", "--trace", trace, "--quick", "--rate", "1e8", "--out", out)
    assert fast.returncode == 0 and "overloaded" not in fast.stdout, fast.stderr
    costs = (out / "trace_fq_costs.csv").read_text()
    again = fairgate(
        "study", "trace-fq", "--trace", trace, "--quick", "--rate", "100Mbps", "--out", out
    )
    assert again.returncode == 0 and "overloaded" not in again.stdout, again.stderr
    assert (out / "trace_fq_costs.csv").read_text() == costs, "100Mbps is 1e8 bit/s"


def test_the_gateway_counts_flows_protocols_and_costs_deterministically(tmp_path: Path):
    trace = write_pcap(tmp_path / "t.pcap")
    runs = [_core.trace_study(str(trace), key="f0", timeout_s=1e5) for _ in range(2)]
    assert runs[0] == runs[1]
    s = runs[0]["summary"]
    assert s["packets"] == 3000 and s["tcp"] + s["udp"] == 3000 and s["reordered"] == 0
    assert s["max_flows"] == s["flow_creations"], "with no expiry a flow is created once"
    costs = pd.DataFrame(runs[0]["costs"])
    assert set(costs["discipline"]) == {"wfq", "stfq", "drr", "stochastic_fq"}
    mean = costs.groupby("discipline")["total"].mean()
    assert mean["wfq"] > mean["stfq"] > mean["drr"] >= mean["stochastic_fq"]


@pytest.mark.parametrize(
    ("options", "field"),
    [
        ({"key": "f7"}, "`key`"),
        ({"timeout_s": -1.0}, "`timeout`"),
        ({"interval_s": float("nan")}, "`interval`"),
        ({"rate_bps": 0.0}, "`rate`"),
        ({"buckets": 0}, "`buckets`"),
        ({"packets": 0}, "`packets`"),
        ({"format": "wav"}, "`format`"),
    ],
)
def test_bad_parameters_name_their_field(tmp_path: Path, options: dict, field: str):
    trace = write_pcap(tmp_path / "t.pcap", packets=10)
    with pytest.raises(fg.ScenarioError, match=field):
        _core.trace_study(str(trace), **options)


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (("gateway", {"timeout_s": -1.0}), "`timeout_s`: got -1"),
        (("gateway", {"timeout_s": 1.0, "rate_bps": 0.0}), "`rate_bps`: got 0"),
        (("gateway", {"timeout_s": 1.0, "rate_bps": 1e20}), "`rate_bps`: got 1000"),
        (("run", {"rate_bps": 0.0}), r"`rate_bps`: got 0.0, expected .* in \[1, 1e13\]"),
        (("run", {"trace_format": "wav"}), '`trace_format`: got "wav"'),
    ],
)
def test_the_python_functions_name_their_own_parameters(tmp_path: Path, call: tuple, message: str):
    """The trace reader's fields are `rate`, `timeout` and `format` (the command line's
    words); `gateway(timeout_s=-1)` and `run(trace_format="wav")` named them so, where the
    caller wrote `timeout_s`, `rate_bps` and `trace_format`."""
    from fairgate.studies import trace_fq

    trace = write_pcap(tmp_path / "t.pcap", packets=10)
    function, options = call
    with pytest.raises(fg.ScenarioError, match=message):
        if function == "gateway":
            trace_fq.gateway(trace, "f1", **options)
        else:
            trace_fq.run(tmp_path / "out", quick=True, trace=trace, **options)


@pytest.mark.parametrize(
    ("args", "options", "message"),
    [
        ((None, "f1", 1.0), {}, "trace: got None, expected a path"),
        (("t.pcap", None, 1.0), {}, "`key`: got None"),
        (("t.pcap", "f1", "x"), {}, "`timeout_s`: got 'x'"),
        (("t.pcap", "f1", 1.0), {"buckets": "x"}, "`buckets`: got 'x'"),
        (("t.pcap", "f1", 1.0), {"format": 5}, "`format`: got 5"),
        (("t.pcap", "f1", 1.0), {"nope": 1}, "`nope`: unknown option, expected one of"),
        (("t.pcap", "f1", 1.0), {"packets": 2**70}, r"in \[1, 50000000\]"),
        (("t.pcap", "f1", 1.0), {"buckets": 2**30}, r"`buckets`: got 1073741824, .* 16777216\]"),
    ],
)
def test_the_documented_gateway_names_an_argument_of_the_wrong_kind(
    tmp_path: Path, args: tuple, options: dict, message: str
):
    """`trace_fq.gateway(None, ...)` opened a file named "None"; a key, timeout or option of
    the wrong kind was the binding's TypeError, and a count past 2^64 PyO3's OverflowError."""
    from fairgate.studies import trace_fq

    write_pcap(tmp_path / "t.pcap", packets=10)
    args = tuple(str(tmp_path / a) if a == "t.pcap" else a for a in args)
    with pytest.raises(fg.ScenarioError, match=message):
        trace_fq.gateway(*args, **options)


def test_a_study_takes_its_folder_and_trace_as_text(tmp_path: Path):
    """`trace_fq.run("out", trace="t.pcap")` ran the study, then failed on `"out".mkdir`
    (AttributeError); a folder the system will not make is named before the work."""
    from fairgate.studies import trace_fq, two_server

    trace = str(write_pcap(tmp_path / "t.pcap", packets=3000))
    trace_fq.run(str(tmp_path / "o"), quick=True, trace=trace)
    assert (tmp_path / "o" / "trace_fq_timeouts.csv").exists()
    (tmp_path / "file").write_text("x", encoding="utf-8")
    with pytest.raises(fg.ScenarioError, match=r"out_dir: cannot make .*file/o \(Not a direct"):
        two_server.run(str(tmp_path / "file" / "o"), quick=True)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["trace-fq"], "--trace: got none, expected a packet trace"),
        (
            ["trace-fq", "--trace", "/nonexistent.pcap"],
            "--trace: /nonexistent.pcap: cannot open it",
        ),
        (["trace-fq", "--trace", "TRACE", "--rate", "0"], "--rate: got 0.0"),
        (
            ["trace-fq", "--trace", "TRACE", "--rate", "10Xbps"],
            '--rate: got "10Xbps": unknown unit',
        ),
        (["trace-fq", "--trace", "TRACE", "--trace-format", "wav"], '--trace-format: got "wav"'),
        (["fq-cost", "--trace", "TRACE"], "--trace: the study fq-cost takes no trace options"),
        # 10 packets at 400/s: no sample of N(t), where the study's tables failed with a
        # KeyError (the shipped 100-packet libtrace traces span 28 ms).
        (["trace-fq", "--trace", "TRACE"], "less than one sample interval; expected a trace of at"),
    ],
)
def test_bad_study_input_exits_2_naming_it(tmp_path: Path, args: list[str], message: str):
    trace = write_pcap(tmp_path / "t.pcap", packets=10)
    args = [str(trace) if a == "TRACE" else a for a in args]
    done = fairgate("study", *args, "--out", tmp_path / "o")
    assert done.returncode == 2, done.stderr
    assert message in done.stderr and "Traceback" not in done.stderr


def mutated(data: bytes, rng: random.Random) -> bytes:
    """``data`` with one to four damages: bytes overwritten, the end cut off, random bytes put
    in, or a 32-bit word set to an extreme."""
    out = bytearray(data)
    for _ in range(rng.randint(1, 4)):
        at = rng.randrange(len(out) + 1)
        roll = rng.random()
        if roll < 0.5:
            for _ in range(rng.randint(1, 20)):
                if out:
                    out[rng.randrange(len(out))] = rng.randrange(256)
        elif roll < 0.7:
            del out[at:]
        elif roll < 0.85:
            out[at:at] = rng.randbytes(rng.randint(1, 64))
        else:
            out[at : at + 4] = rng.choice([b"\xff" * 4, b"\x00" * 4, b"\x7f\xff\xff\xff"])
    return bytes(out)


def check_mutants(traces: dict[str, bytes], count: int, where: Path) -> list[str]:
    """Runs ``count`` mutants of the traces (a third of them gzipped) in forked children; each
    must be read or refused with ScenarioError. Returns what went wrong."""
    failures = []
    for seed in range(count):
        rng = random.Random(seed)
        name = sorted(traces)[seed % len(traces)]
        data = mutated(traces[name], rng)
        if rng.random() < 0.3:
            data, name = gzip.compress(data), name + ".gz"
        path = where / f"m{seed % 4}-{name}"
        path.write_bytes(data)
        key, timeout = rng.choice(["f0", "f1", "f2", "f3"]), rng.choice([0.0, 1.0, 10.0])
        study = functools.partial(_core.trace_study, str(path), key=key, timeout_s=timeout)
        outcome = call_forked(study)
        if outcome not in ("ok", "refused"):
            failures.append(f"{name}, seed {seed}: {outcome}")
    return failures


def test_a_damaged_trace_is_read_or_refused_never_a_crash(tmp_path: Path):
    """Found a time stamp damaged to years ahead aborting on a sample per 0.1 s up to it."""
    pcap = write_pcap(tmp_path / "t.pcap", packets=300).read_bytes()
    text = "ts,src,dst,proto,sport,dport,ip_len\n" + "".join(
        f"{i * 0.01:.6f},10.0.0.{i % 7},10.0.1.{i % 5},6,{1000 + i % 9},80,{40 + i}\n"
        for i in range(300)
    )
    ita = "".join(f"{i * 0.01:.6f} {i % 7} {i % 5} {1000 + i % 9} 80 {i}\n" for i in range(300))
    traces = {"t.pcap": pcap, "t.csv": text.encode(), "t.tcp": ita.encode()}
    assert not check_mutants(traces, 150, tmp_path)


@pytest.mark.slow
def test_five_thousand_damaged_real_traces_are_read_or_refused(tmp_path: Path):
    assert SHARED_TRACES.is_dir(), f"{SHARED_TRACES}: the real traces are not here"
    names = [
        "auckland2-20000125-143640-0.first31249.pcap",
        "auckland-10kp-anon-20140928.pcap.gz",
        "wand-fragtest-20100113.erf.gz",
        "nlanr-pma-sample-1000.tsh",
        "auckland2-20000125-143640-0.first31249.ita.tcp",
        "nlanr-pma-sample-1000.csv.gz",
    ]
    traces = {}
    for name in names:
        raw = (SHARED_TRACES / name).read_bytes()
        traces[name.removesuffix(".gz")] = gzip.decompress(raw) if name.endswith(".gz") else raw
    failures = check_mutants(traces, 5000, tmp_path)
    assert not failures, "\n".join(failures)


@pytest.mark.slow
@pytest.mark.parametrize(
    "name",
    [
        "auckland2-20000125-143640-0.first31249.pcap",
        "auckland-10kp-anon-20140928.pcap.gz",
        "wand-fragtest-20100113.erf.gz",
        "wand-lpi_test-20070115.erf.gz",
        "nlanr-pma-sample-1000.tsh",
    ],
)
def test_each_reader_agrees_with_the_csv_copy_of_a_real_trace(name: str):
    """Needs the real traces beside the repository (``../shared/traces``, see its README)."""
    assert SHARED_TRACES.is_dir(), f"{SHARED_TRACES}: the real traces are not here"
    csv = name.replace(".pcap.gz", ".csv.gz").replace(".erf.gz", ".csv.gz")
    csv = csv.replace(".pcap", ".csv.gz").replace(".tsh", ".csv.gz")
    for key in ["f0", "f1", "f2", "f3"]:
        binary, text = (
            _core.trace_study(str(SHARED_TRACES / f), key=key, timeout_s=1.0) for f in [name, csv]
        )
        for run in [binary, text]:
            run["summary"].pop("non_ip")  # the CSV copies leave non-IP frames out
        # ERF times are finer than the CSV's microseconds: the duration differs below 1 us.
        timing = ["duration_s", "utilisation"]
        for field in timing:
            got, want = binary["summary"].pop(field), text["summary"].pop(field)
            assert got == pytest.approx(want, rel=1e-5), (name, key, field)
        assert binary == text, (name, key)

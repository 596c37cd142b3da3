"""One scenario written two ways gives the same tables: a rate or a delay in another unit, a
dumbbell written out as nodes and links, a flow `count` as separate entries, an override as an
edit, a sweep's point as a lone run, and a per-flow scheduler with one flow as FIFO. A value
that changes meaning between two spellings (or is ignored in one, as an FQ `buffer` without
`drop = "buffer"` was) shows up as a difference."""

from __future__ import annotations

import json

import pandas as pd
import pytest

import fairgate as fg

DUMBBELL = """name = "m"
[simulation]
duration = "3s"
seed = 7
[topology]
kind = "dumbbell"
senders = 3
bottleneck = { rate = RATE, delay = DELAY, queue = { kind = "fifo", limit = 40 } }
access = { rate = "100Mbps", delay = "1ms" }
FLOWS"""
FLOWS = """[[flows]]
name = "t{i}"
count = 2
src = "s{i}"
dst = "d{i}"
start = { dist = "uniform", min = "0s", max = "1s" }
source = { kind = "tcp" }
[[flows]]
name = "p"
src = "s2"
dst = "d2"
source = { kind = "poisson", rate = "3Mbps" }
"""
SPLIT_FLOWS = FLOWS.replace(
    'name = "t{i}"\ncount = 2\nsrc = "s{i}"\ndst = "d{i}"',
    'name = "t0"\nsrc = "s0"\ndst = "d0"',
).replace(
    '[[flows]]\nname = "p"',
    '[[flows]]\nname = "t1"\nsrc = "s1"\ndst = "d1"\n'
    'start = { dist = "uniform", min = "0s", max = "1s" }\nsource = { kind = "tcp" }\n'
    '[[flows]]\nname = "p"',
)
UNRELATED = ("scenario", "time_s", "fairgate_version")
"""Summary keys that name the scenario or the wall time, not what was simulated."""


def dumbbell(rate: str = '"10Mbps"', delay: str = '"5ms"', flows: str = FLOWS) -> str:
    return DUMBBELL.replace("RATE", rate).replace("DELAY", delay).replace("FLOWS", flows)


def written_out() -> str:
    """The dumbbell above as explicit nodes and links, in the builder's order."""
    nodes = [
        '[[nodes]]\nname = "left"\nkind = "router"',
        '[[nodes]]\nname = "right"\nkind = "router"',
    ]
    nodes += [f'[[nodes]]\nname = "{h}{i}"' for i in range(3) for h in "sd"]
    link = '[[links]]\nfrom = "{}"\nto = "{}"\nrate = "{}"\ndelay = "{}"'
    links = [link.format(f"s{i}", "left", "100Mbps", "1ms") for i in range(3)]
    links.append(
        link.format("left", "right", "10Mbps", "5ms") + '\nqueue = { kind = "fifo", limit = 40 }'
    )
    links += [link.format("right", f"d{i}", "100Mbps", "1ms") for i in range(3)]
    head = 'name = "m"\n[simulation]\nduration = "3s"\nseed = 7\n'
    return head + "\n".join(nodes + links) + "\n" + FLOWS


def assert_same(a: fg.Results, b: fg.Results, ignore: tuple[str, ...] = ()) -> None:
    pd.testing.assert_frame_equal(
        a.ports.drop(columns=list(ignore)), b.ports.drop(columns=list(ignore))
    )
    pd.testing.assert_frame_equal(a.flows, b.flows)
    summary = [{k: v for k, v in r.summary.items() if k not in UNRELATED} for r in (a, b)]
    assert json.dumps(summary[0], sort_keys=True) == json.dumps(summary[1], sort_keys=True)


@pytest.fixture(scope="module")
def reference() -> fg.Results:
    return fg.run_text(dumbbell())


@pytest.mark.parametrize(
    "rate",
    ["10000000", "1e7", '"10000kbps"', '"1.25MB/s"', '"10 Mbit/s"', '"0.01Gbps"', '"1250kB/s"'],
)
def test_a_rate_in_another_unit_is_the_same_rate(reference: fg.Results, rate: str):
    assert_same(reference, fg.run_text(dumbbell(rate=rate)))


@pytest.mark.parametrize("delay", ["0.005", '"5000us"', '"5000µs"', '"5000000ns"', '"5e-3 s"'])
def test_a_delay_in_another_unit_is_the_same_delay(reference: fg.Results, delay: str):
    assert_same(reference, fg.run_text(dumbbell(delay=delay)))


def test_a_dumbbell_written_out_as_nodes_and_links_is_the_dumbbell(reference: fg.Results):
    assert_same(reference, fg.run_text(written_out()))


def test_a_flow_count_is_its_entries_written_one_by_one(reference: fg.Results):
    assert_same(reference, fg.run_text(dumbbell(flows=SPLIT_FLOWS)))


def test_an_override_is_the_edit_it_names():
    edited = fg.run_text(dumbbell(rate='"4Mbps"').replace("seed = 7", "seed = 9"))
    overridden = fg.run_text(dumbbell(), ['topology.bottleneck.rate="4Mbps"', "simulation.seed=9"])
    assert_same(edited, overridden)


def test_a_sweep_point_is_the_lone_run_of_its_values():
    alone = fg.run_text(dumbbell(rate='"4Mbps"'))
    for table in ("flows", "ports"):
        point = fg.sweep(dumbbell(), grid={"topology.bottleneck.rate": ["4Mbps"]}, table=table)
        mine = getattr(alone, table)
        pd.testing.assert_frame_equal(
            point[list(mine.columns)].astype(str), mine.astype(str), check_dtype=False
        )


ONE_FLOW = """name = "one"
[simulation]
duration = "4s"
seed = 3
[topology]
kind = "dumbbell"
senders = 1
bottleneck = { rate = "2Mbps", delay = "10ms", queue = QUEUE }
access = { rate = "100Mbps", delay = "1ms" }
[[flows]]
src = "s0"
dst = "d0"
source = { kind = "poisson", rate = "2.5Mbps", size = { dist = "uniform", min = 100, max = 1500 } }
"""
CAUSES = ("qdisc", "drops_overflow", "drops_pushout")
"""What a scheduler names differently for the same drops."""


@pytest.mark.parametrize(
    "queue",
    [
        '{ kind = "fcfs", limit = 20 }',
        '{ kind = "fq", limit = 20 }',
        '{ kind = "wfq", limit = 20 }',
        '{ kind = "stochastic_fq", limit = 20 }',
        '{ kind = "nagle", limit = 20 }',
        '{ kind = "fq", drop = "buffer", limit = 20 }',
        '{ kind = "wfq", drop = "buffer", buffer = { kind = "droptail", limit = 20 } }',
        '{ kind = "nagle", drop = "buffer", buffer = { kind = "droptail", limit = 20 } }',
        '{ kind = "scfq", buffer = { kind = "droptail", limit = 20 } }',
        '{ kind = "stfq", buffer = { kind = "droptail", limit = 20 } }',
        '{ kind = "drr", buffer = { kind = "droptail", limit = 20 } }',
        '{ kind = "wrr", buffer = { kind = "droptail", limit = 20 } }',
    ],
)
def test_a_per_flow_scheduler_with_one_flow_is_fifo(queue: str):
    fifo = fg.run_text(ONE_FLOW.replace("QUEUE", '{ kind = "fifo", limit = 20 }'))
    assert_same(fifo, fg.run_text(ONE_FLOW.replace("QUEUE", queue)), ignore=CAUSES)

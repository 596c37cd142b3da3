"""Every field of every discipline (forward and in the reverse, ACK direction), source,
table of both gateways of a spoofing pair and of a multiplexing pair, cell-network table,
link (and its reverse override and delay distributions), ``[simulation]``, dumbbell and chain
topology, ``[[flows]]`` entry, node, traffic phases, distribution, loss model, FQ buffer
manager, TCP application, web/HTTP TCP and host pool, set to extreme values one at a time and a
few at once.

The fields are discovered from the scenario schema itself (the error for an unknown field lists
the accepted ones), so a new discipline or parameter is covered without editing this file. Each
case runs in a forked child with a memory cap and an alarm: it must be refused with
``ScenarioError`` or run to its end with every packet accounted for; a panic, an allocation
abort, a hang past the alarm (150 s) or any other exception fails the case. The default suite
draws 400 single-field cases, 150 of two to four fields set at once and 150 of two to four
fields each set to a value it accepts alone, so that most of them run
(``FAIRGATE_COMBINATIONS=N`` for more of both), each run for 50 ms; ``-m slow`` runs every
single-field case (about 15,600) for 500 ms.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from functools import cache
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import fairgate as fg
from fairgate.sweeps.axes import split_top_level
from forked import run_forked

DUMBBELL = """name = "extreme"
[simulation]
duration = "0.5s"
seed = 1
[topology]
kind = "dumbbell"
senders = 2
bottleneck = {{ rate = "10Mbps", delay = "10ms", queue = {queue} }}
access = {{ rate = "100Mbps", delay = "1ms" }}
[[flows]]
name = "f{{i}}"
count = 2
src = "s{{i}}"
dst = "d{{i}}"
source = {source}
"""

VALUES = [
    "0",
    "-1",
    "0.5",
    "1e9",
    "1000000000",
    "4294967295",
    "9223372036854775807",
    "1e18",
    "1e300",
    '"1ps"',
    '"1e6s"',
    '"1e15bps"',
    "[1e300]",
    "[]",
]
MODERATE = ["1", "2", "5", "50", "0.1", "0.9", "true", "false", '"10ms"', '"1s"', '"1Mbps"']


FIFO = '{ kind = "fifo", limit = 100 }'
TCP = '{ kind = "tcp" }'


def dumbbell(queue: str = FIFO, source: str = TCP) -> str:
    """The dumbbell with the bottleneck's ``queue`` and the flows' ``source``."""
    return DUMBBELL.format(queue=queue, source=source)


def discipline(kind: str) -> Callable[[str], str]:
    """The scenario with the bottleneck's discipline ``kind`` given ``entry``."""
    return lambda entry: dumbbell(queue=f'{{ kind = "{kind}", {entry} }}')


def reverse_discipline(kind: str) -> Callable[[str], str]:
    """The scenario with the bottleneck's reverse (ACK) direction run by ``kind`` given
    ``entry``."""
    return lambda entry: dumbbell(queue=f'{FIFO}, reverse_queue = {{ kind = "{kind}", {entry} }}')


def source(kind: str) -> Callable[[str], str]:
    """The scenario whose flows use source ``kind`` given ``entry``."""
    return lambda entry: dumbbell(source=f'{{ kind = "{kind}", {entry} }}')


SCENARIOS = Path(__file__).resolve().parents[1] / "scenarios"


def short(name: str, *replacements: tuple[str, str]) -> str:
    """A shipped scenario, shortened by ``replacements``."""
    text = (SCENARIOS / name).read_text(encoding="utf-8")
    for old, new in replacements:
        assert old in text, (name, old)
        text = text.replace(old, new, 1)
    return text


ATM_TCP = (
    'tcp = { cc = "sack", mss = 1460, rwnd = 1048576, window_scale = 5, min_rto = 1.0, '
    "granularity = 0.01, initial_window = 1, delayed_ack = false, timestamps = false, "
    "handshake = false }"
)


def table_items(value: str) -> str:
    """The items of the inline table ``value`` (``{ ... }``), without its braces."""
    return value.strip()[1:-1].strip()


GATEWAY_TABLES = {"two_server": "rate = 540"}


def gateway_of(text: str, node: str, table: str) -> Callable[[str], str]:
    """``text`` with the gateway node ``node`` given ``entry`` at the top of its gateway table
    or in its ``table``, every other item kept."""
    lines = text.split("\n")
    at = lines.index(f'name = "{node}"')
    line = next(i for i in range(at, len(lines)) if lines[i].startswith("gateway = "))
    items = table_items(lines[line].split(" = ", 1)[1])

    def make(entry: str) -> str:
        if table:
            tables = dict(item.split(" = ", 1) for item in top_level(items))
            current = tables.get(table, "{ " + GATEWAY_TABLES.get(table, "") + " }")
            entry = f"{table} = {inline(table_items(current), entry)}"
        return "\n".join([*lines[:line], f"gateway = {inline(items, entry)}", *lines[line + 1 :]])

    return make


def gateway(node: str, table: str) -> Callable[[str], str]:
    """The spoofing-gateway pair for 0.5 s, ``node`` given ``entry`` (see ``gateway_of``)."""
    text = short("spoofing_gateway.toml", ('duration = "60s"', 'duration = "0.5s"'))
    return gateway_of(text, node, table)


def multiplexing(node: str, table: str) -> Callable[[str], str]:
    """Four connections multiplexed onto one leg between two gateways for 0.5 s (the short one
    starting at 20 ms), ``node`` given ``entry`` (see ``gateway_of``)."""
    text = short(
        "satellite_mux.toml",
        ('duration = "40s"', 'duration = "0.5s"'),
        ('start = "2s"', 'start = "0.02s"'),
    )
    return gateway_of(text, node, table)


def atm(table: str) -> Callable[[str], str]:
    """The DFBA cell network, 2 TCPs a VC for 0.5 s, its buffer or its TCP given ``entry``."""
    text = short(
        "dfba_e3.toml",
        ('duration = "30s"', 'duration = "0.5s"'),
        ('warmup = "5s"', 'warmup = "0.01s"'),
    ).replace("tcps = 20", "tcps = 2")
    if table == "tcp":
        return lambda entry: text.replace(ATM_TCP, f"tcp = {{ {entry} }}", 1)
    if table in ("top", "vc"):
        header = "[atm]" if table == "top" else "[[atm.vcs]]"
        return lambda entry: in_section(text, header, entry)
    if table == "links":
        return lambda entry: in_section(text, "[atm]", f"links = {{ {entry} }}")
    buffer = 'buffer = { kind = "dfba", limit = 25000, low = 0.5, high = 0.9, alpha = 0.5, '
    buffer += 'z = "one" }'
    return lambda entry: text.replace(buffer, f'buffer = {{ kind = "dfba", {entry} }}', 1)


TWO_HOSTS = """name = "extreme-link"
simulation = {{ duration = "0.5s", seed = 1 {simulation} }}
nodes = [{{ name = "a" }}, {{ name = "b" }}]
links = [{{ from = "a", to = "b", rate = "10Mbps" {link} }}]
flows = [{{ src = "a", dst = "b", source = {{ kind = "cbr", rate = "5Mbps" }} }}]
"""


def two_hosts(place: str) -> Callable[[str], str]:
    """Two hosts and a CBR flow, ``entry`` in the link or in ``simulation``."""
    if place == "link":
        return lambda entry: TWO_HOSTS.format(simulation="", link=f", {entry}")
    return lambda entry: TWO_HOSTS.format(simulation=f", {entry}", link="")


def topology(entry: str) -> str:
    """The dumbbell with ``entry`` among its topology fields (one per line: no value here
    holds ", ")."""
    text = dumbbell()
    return text.replace(
        'access = { rate = "100Mbps", delay = "1ms" }',
        f'access = {{ rate = "100Mbps", delay = "1ms" }}\n{entry.replace(", ", chr(10))}',
        1,
    )


def top_level(entry: str) -> list[str]:
    """The ``key = value`` items of ``entry``, split at the commas outside brackets."""
    return [item.strip() for item in split_top_level(entry) if item.strip()]


def merged(base: str, entry: str) -> list[str]:
    """The items of ``base`` with those of ``entry`` replacing them or added."""
    given = dict(item.split(" = ", 1) for item in top_level(entry))
    kept = {k: v for k, v in (item.split(" = ", 1) for item in top_level(base)) if k not in given}
    return [f"{k} = {v}" for k, v in (kept | given).items()]


def inline(base: str, entry: str) -> str:
    """An inline table of ``base``'s items, ``entry``'s replacing them or added."""
    return "{ " + ", ".join(merged(base, entry)) + " }"


def in_section(text: str, header: str, entry: str) -> str:
    """``text`` whose section ``header`` (up to its next header) holds ``entry``'s items in
    place of its own of the same keys."""
    head, rest = text.split(header + "\n", 1)
    lines = rest.split("\n")
    end = next((i for i, line in enumerate(lines) if line.startswith("[")), len(lines))
    body = "\n".join(merged(", ".join(line for line in lines[:end] if " = " in line), entry))
    return head + header + "\n" + body + "\n" + "\n".join(lines[end:])


def chain(entry: str) -> str:
    """The parking lot of two hops, 0.5 s, with ``entry`` among its topology fields."""
    text = short(
        "parking_lot.toml",
        ('duration = "20s"', 'duration = "0.5s"'),
        ("hops = 3", "hops = 2"),
        ("count = 3", "count = 2"),
    )
    return in_section(text, "[topology]", entry)


def flow_entry(entry: str) -> str:
    """The dumbbell with ``entry`` among the fields of its ``[[flows]]`` entry."""
    text = dumbbell()
    return in_section(text, "[[flows]]", entry)


DISTRIBUTIONS = {
    "exponential": "mean = 500",
    "uniform": "min = 100, max = 900",
    "pareto": "mean = 500, shape = 1.5",
    "lognormal": "mean = 500, sigma = 1",
    "normal": "mean = 500, std = 100",
    "constant": "value = 500",
}


def distribution(kind: str) -> Callable[[str], str]:
    """A Poisson source whose packet size is a ``kind`` distribution given ``entry``."""
    table = lambda entry: inline(f'dist = "{kind}", {DISTRIBUTIONS[kind]}', entry)  # noqa: E731
    return lambda entry: dumbbell(
        source=f'{{ kind = "poisson", rate = "1Mbps", size = {table(entry)} }}'
    )


START_DISTRIBUTIONS = {
    "exponential": "mean = 0.02",
    "uniform": "min = 0, max = 0.2",
    "pareto": "mean = 0.02, shape = 1.5",
    "lognormal": "mean = 0.02, sigma = 0.5",
    "normal": "mean = 0.1, std = 0.02",
    "constant": "value = 0.1",
}


def start_distribution(kind: str) -> Callable[[str], str]:
    """The flows' start times drawn from a ``kind`` distribution given ``entry``."""
    base = f'dist = "{kind}", {START_DISTRIBUTIONS[kind]}'
    return lambda entry: flow_entry(f"start = {inline(base, entry)}")


LOSSES = {
    "bernoulli": "p = 0.01",
    "gilbert_elliott": "p_good_to_bad = 0.01, p_bad_to_good = 0.1",
    "pattern": 'flow = "f0", packets = [3, 5]',
    "seqs": 'flow = "f0", seqs = [3, 5], times = 2',
}


def loss(kind: str) -> Callable[[str], str]:
    """The two hosts' link losing packets by a ``kind`` model given ``entry``."""
    table = lambda entry: inline(f'kind = "{kind}", {LOSSES[kind]}', entry)  # noqa: E731
    return lambda entry: TWO_HOSTS.format(simulation="", link=f", loss = {table(entry)}")


def reverse_link(entry: str) -> str:
    """The two hosts' link, its reverse direction overridden by ``entry``."""
    return TWO_HOSTS.format(simulation="", link=f", reverse = {{ {entry} }}")


def delay(per: str) -> Callable[[str], str]:
    """The two hosts' link delay drawn from a uniform distribution ``per`` packet, flow or
    connection, given ``entry``."""
    base = f'dist = "uniform", min = "1ms", max = "5ms", per = "{per}"'
    return lambda entry: TWO_HOSTS.format(simulation="", link=f", delay = {inline(base, entry)}")


APPS = {"file": "size = 100000", "requests": "count = 3, size = 20000, gap = 0.01"}


def app(kind: str) -> Callable[[str], str]:
    """The dumbbell's TCP flows running the application ``kind`` given ``entry``."""
    table = lambda entry: inline(f'kind = "{kind}", {APPS[kind]}', entry)  # noqa: E731
    return lambda entry: dumbbell(source=f'{{ kind = "tcp", app = {table(entry)} }}')


def pool(kind: str, side: str) -> Callable[[str], str]:
    """A ``kind`` (web or http) source whose ``side`` hosts are a pattern pool given
    ``entry``."""
    hosts = "s{i}" if side == "servers" else "d{i}"
    table = lambda entry: inline(f'hosts = "{hosts}", count = 2', entry)  # noqa: E731
    return lambda entry: dumbbell(source=f'{{ kind = "{kind}", {side} = {table(entry)} }}')


def buffer(kind: str) -> Callable[[str], str]:
    """Start-time FQ at the bottleneck, its shared buffer managed by ``kind`` given ``entry``."""
    return lambda entry: dumbbell(
        queue=f'{{ kind = "stfq", buffer = {inline(f"kind = {kind!r}, limit = 100", entry)} }}'
    )


def request_tcp(kind: str) -> Callable[[str], str]:
    """A ``kind`` (web or http) source whose TCP table is given ``entry``."""
    return lambda entry: dumbbell(source=f'{{ kind = "{kind}", tcp = {{ {entry} }} }}')


def node(entry: str) -> str:
    """The two hosts, the first node given ``entry``."""
    text = TWO_HOSTS.format(simulation="", link="")
    return text.replace('{ name = "a" }', inline('name = "a"', entry), 1)


def phases(entry: str) -> str:
    """The dumbbell's flows as traffic phases given ``entry``."""
    table = inline("counts = [1, 2], length = 0.2", entry)
    text = flow_entry(f"phases = {table}").replace("count = 2\n", "", 1)
    return text.replace('name = "f{i}"', 'name = "f"', 1)


def fields_of(make: Callable[[str], str]) -> list[str]:
    """The fields the schema accepts where ``make`` puts its entry."""
    try:
        fg.validate_text(make("unknown_field_probe = 1"))
    except fg.ScenarioError as e:
        return re.findall(r"`(\w+)`", str(e).split("expected", 1)[-1])
    return []


@cache
def makers() -> dict[str, Callable[[str], str]]:
    """Every registered discipline (``queue.KIND``) and source (``source.KIND``), a gateway's
    tables and the cell network's buffer and TCP."""
    out = {f"queue.{k}": discipline(k) for k in fg.registry()["qdisc"]}
    out |= {f"reverse_queue.{k}": reverse_discipline(k) for k in fg.registry()["qdisc"]}
    out |= {f"source.{k}": source(k) for k in fg.registry()["source"]}
    gw1 = ["", "lhs", "rhs", "flow_control", "two_server"]
    out |= {f"gateway.{t or 'top'}": gateway("gw1", t) for t in gw1}
    out |= {f"gateway2.{t or 'top'}": gateway("gw2", t) for t in ["", "lhs", "rhs"]}
    out |= {f"mux.{t}": multiplexing("gw1", t) for t in ["multiplex", "rhs"]}
    out |= {f"mux.gateway2.{t or 'top'}": multiplexing("gw2", t) for t in ["", "lhs"]}
    out |= {f"atm.{t}": atm(t) for t in ["buffer", "tcp", "top", "vc", "links"]}
    out |= {"link": two_hosts("link"), "simulation": two_hosts("simulation")}
    out["topology"] = topology
    out |= {"topology.chain": chain, "flow": flow_entry, "node": node, "phases": phases}
    out |= {f"size.{k}": distribution(k) for k in DISTRIBUTIONS}
    out |= {f"start.{k}": start_distribution(k) for k in DISTRIBUTIONS}
    out |= {f"loss.{k}": loss(k) for k in LOSSES}
    out |= {f"buffer.{k}": buffer(k) for k in fg.registry()["buffer"]}
    out |= {f"{k}.tcp": request_tcp(k) for k in ["web", "http"]}
    out["link.reverse"] = reverse_link
    out |= {
        f"delay.{per}": delay(per) for per in ["packet", "packet_in_order", "flow", "connection"]
    }
    out |= {f"app.{k}": app(k) for k in APPS}
    out |= {
        f"{k}.{side}": pool(k, side) for k in ["web", "http"] for side in ["servers", "clients"]
    }
    return out


@cache
def sites() -> dict[str, list[str]]:
    """The fields of every site."""
    return {site: fields_of(make) for site, make in makers().items()}


@cache
def cases() -> list[tuple[str, str, str]]:
    """(site, field, value) for every field of every registered discipline and source."""
    out = []
    for site, fields in sites().items():
        assert fields, f"{site}: no fields discovered"
        out += [(site, field, value) for field in fields for value in VALUES]
    return out


def scenario(site: str, field: str, value: str) -> str:
    return with_entries(site, [(field, value)])


def with_entries(site: str, entries: list[tuple[str, str]]) -> str:
    """The scenario with ``site`` given ``entries``."""
    return makers()[site](", ".join(f"{field} = {value}" for field, value in entries))


@st.composite
def combinations(draw: st.DrawFn) -> tuple[str, list[tuple[str, str]]]:
    """A discipline or source with two to four of its fields set, moderate or extreme."""
    site = draw(st.sampled_from(sorted(s for s, fields in sites().items() if len(fields) > 1)))
    fields = draw(st.lists(st.sampled_from(sites()[site]), min_size=2, max_size=4, unique=True))
    values = st.sampled_from(MODERATE + VALUES)
    return site, [(field, draw(values)) for field in fields]


WIDER = ['"1Gbps"', '"100kbps"', '"1ms"', '"100ms"', "10", "100", "1000", "100000", "0.01"]


@cache
def accepted(site: str, field: str) -> list[str]:
    """The values of ``MODERATE``, ``VALUES`` and ``WIDER`` that ``field`` of ``site`` takes on
    its own."""
    out = []
    for value in MODERATE + VALUES + WIDER:
        try:
            fg.validate_text(scenario(site, field, value))
        except fg.ScenarioError:
            continue
        out.append(value)
    return out


@st.composite
def accepted_combinations(draw: st.DrawFn) -> tuple[str, list[tuple[str, str]]]:
    """A site with two to four of its fields set, each to a value it accepts alone: together
    they may still be refused (a minimum above a maximum), but most run."""
    site = draw(st.sampled_from(sorted(s for s, fields in sites().items() if len(fields) > 1)))
    fields = draw(st.lists(st.sampled_from(sites()[site]), min_size=2, max_size=4, unique=True))
    return site, [
        (f, draw(st.sampled_from(accepted(site, f)))) for f in fields if accepted(site, f)
    ]


def brief(text: str) -> str:
    """The scenario run for 50 ms instead of 500: a timer the bounds allow may fire 5x10^8
    times in 500 ms (PI at 10^9 Hz, 45 s), too long for the default suite."""
    return text.replace('duration = "0.5s"', 'duration = "0.05s"', 1)


def check(site: str, field: str, value: str) -> None:
    outcome = run_forked(brief(scenario(site, field, value)))
    assert outcome in ("ok", "refused"), f"{site}.{field} = {value}: {outcome}"


@settings(
    max_examples=400,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(st.data())
def test_an_extreme_field_is_refused_or_runs_and_conserves(data: st.DataObject):
    check(*data.draw(st.sampled_from(cases())))


@settings(
    max_examples=int(os.environ.get("FAIRGATE_COMBINATIONS", "150")),
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(combinations())
def test_combined_fields_are_refused_or_run_and_conserve(case: tuple[str, list[tuple[str, str]]]):
    site, entries = case
    outcome = run_forked(brief(with_entries(site, entries)))
    assert outcome in ("ok", "refused"), f"{site} {entries}: {outcome}"


@settings(
    max_examples=int(os.environ.get("FAIRGATE_COMBINATIONS", "150")),
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(accepted_combinations())
def test_fields_each_accepted_alone_are_refused_or_run_and_conserve_together(
    case: tuple[str, list[tuple[str, str]]],
):
    site, entries = case
    outcome = run_forked(brief(with_entries(site, entries)))
    assert outcome in ("ok", "refused"), f"{site} {entries}: {outcome}"


@pytest.mark.slow
def test_every_field_of_every_discipline_and_source_takes_every_extreme_value():
    failures = []
    for case in cases():
        outcome = run_forked(scenario(*case))
        if outcome not in ("ok", "refused"):
            failures.append(f"{'.'.join(case[:2])} = {case[2]}: {outcome}")
    assert not failures, "\n".join(failures)

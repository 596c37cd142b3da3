"""A key that another key of its table leaves unread is refused at its own path, not ignored:
the run would otherwise differ from what the file says without a word (an FQ `buffer` without
`drop = "buffer"` ran plain FQ). Each case is also accepted once its switch is on."""

from __future__ import annotations

import pytest

import fairgate as fg

SCENARIO = """name = "unread"
[simulation]
duration = "1s"
[[nodes]]
name = "a"
[[nodes]]
name = "b"
[[links]]
from = "a"
to = "b"
rate = "10Mbps"
delay = "5ms"
queue = QUEUE
LINK
[[flows]]
src = "a"
dst = "b"
source = SOURCE
"""


def scenario(
    queue: str = '{ kind = "fifo" }', source: str = '{ kind = "tcp" }', link: str = ""
) -> str:
    return SCENARIO.replace("QUEUE", queue).replace("SOURCE", source).replace("LINK", link)


LINK = "links[0]"
QUEUE = f"{LINK}.queue"
SOURCE = "flows[0].source"


@pytest.mark.parametrize(
    ("unread", "read", "path"),
    [
        (
            scenario(queue='{ kind = "fq", buffer = { kind = "lqd", limit = 20 } }'),
            scenario(
                queue='{ kind = "fq", drop = "buffer", buffer = { kind = "lqd", limit = 20 } }'
            ),
            f"{QUEUE}.buffer",
        ),
        (
            scenario(
                queue='{ kind = "wfq", drop = "buffer", limit = 10, buffer = { kind = "pfd" } }'
            ),
            scenario(
                queue='{ kind = "wfq", drop = "buffer", buffer = { kind = "pfd", limit = 10 } }'
            ),
            f"{QUEUE}.limit",
        ),
        (
            scenario(queue='{ kind = "nagle", buffer = { kind = "rnd" } }'),
            scenario(queue='{ kind = "nagle", drop = "buffer", buffer = { kind = "rnd" } }'),
            f"{QUEUE}.buffer",
        ),
        (
            scenario(queue='{ kind = "stfq", buffer = { kind = "pfd", rtts = ["10ms"] } }'),
            scenario(
                queue='{ kind = "stfq", buffer = { kind = "pfd", thresholds = "rtt", '
                'rtts = ["10ms"] } }'
            ),
            f"{QUEUE}.buffer.rtts",
        ),
        (
            scenario(queue='{ kind = "stfq", buffer = { kind = "lqd", default_rtt = "50ms" } }'),
            scenario(
                queue='{ kind = "stfq", buffer = { kind = "lqd", thresholds = "rtt", '
                'rtts = ["10ms"], default_rtt = "50ms" } }'
            ),
            f"{QUEUE}.buffer.default_rtt",
        ),
        (
            scenario(queue='{ kind = "red", mark_forced = true }'),
            scenario(queue='{ kind = "red", ecn = true, mark_forced = true }'),
            f"{QUEUE}.mark_forced",
        ),
        (
            scenario(queue='{ kind = "red", adapt_interval = "2s" }'),
            scenario(queue='{ kind = "red", adaptive = true, adapt_interval = "2s" }'),
            f"{QUEUE}.adapt_interval",
        ),
        (
            scenario(queue='{ kind = "choke", red = { adapt_beta = 0.5 } }'),
            scenario(queue='{ kind = "choke", red = { adapt_beta = 0.9 } }'),
            f"{QUEUE}.red.adapt_beta",
        ),
        (
            scenario(queue='{ kind = "pi", a = 1.822e-5, b = 1.816e-5, kp = 1e-5 }'),
            scenario(queue='{ kind = "pi", a = 1.822e-5, b = 1.816e-5 }'),
            f"{QUEUE}.kp",
        ),
        (
            scenario(queue='{ kind = "sred", variant = "modified", limit = 100 }'),
            scenario(queue='{ kind = "sred", variant = "modified", red = { limit = 100 } }'),
            f"{QUEUE}.limit",
        ),
        (
            scenario(queue='{ kind = "sred", red = { max_p = 0.5 } }'),
            scenario(queue='{ kind = "sred", variant = "modified", red = { max_p = 0.5 } }'),
            f"{QUEUE}.red",
        ),
        (
            scenario(source='{ kind = "tcp", delayed_ack = false, ack_every = 4 }'),
            scenario(source='{ kind = "tcp", ack_every = 4 }'),
            f"{SOURCE}.ack_every",
        ),
        (
            scenario(source='{ kind = "tcp", max_sack_blocks = 2 }'),
            scenario(source='{ kind = "tcp", cc = "sack", max_sack_blocks = 2 }'),
            f"{SOURCE}.max_sack_blocks",
        ),
        (
            scenario(source='{ kind = "tcp", ecn_floor = "one_segment" }'),
            scenario(source='{ kind = "tcp", ecn = true, ecn_floor = "one_segment" }'),
            f"{SOURCE}.ecn_floor",
        ),
        (
            scenario(
                link='duplex = false\nreverse = { rate = "1Mbps" }',
                source='{ kind = "cbr", rate = "1Mbps" }',
            ),
            scenario(
                link='reverse = { rate = "1Mbps" }', source='{ kind = "cbr", rate = "1Mbps" }'
            ),
            f"{LINK}.reverse",
        ),
    ],
)
def test_a_key_its_switch_leaves_unread_is_refused_at_its_path(unread: str, read: str, path: str):
    with pytest.raises(fg.ScenarioError) as refused:
        fg.validate_text(unread)
    assert refused.value.path == path, refused.value
    assert "expected" in refused.value.message
    fg.validate_text(read)


def test_drop_buffer_without_a_buffer_is_drop_tail_over_the_own_limit():
    own = fg.run_text(scenario(queue='{ kind = "fq", drop = "buffer", limit = 7 }'))
    fifo = fg.run_text(scenario(queue='{ kind = "fifo", limit = 7 }'))
    columns = ["drops_pkts", "departures_pkts", "max_queue_pkts"]
    assert own.ports[columns].equals(fifo.ports[columns])
    assert fifo.ports["max_queue_pkts"].max() == 7


def test_a_senders_option_at_a_gateways_receiving_side_is_refused():
    """A gateway's `lhs` only acknowledges the source's data: `granularity` there was unread
    (the shipped scenarios set it, with byte-identical results once removed); the gateway
    decides the RHS handshake itself."""

    def gateway(spec: dict) -> fg.Scenario:
        s = fg.Scenario("lhs", duration="1s")
        s.node("server").gateway("gw", spec).node("client")
        s.link("server", "gw", "10Mbps", "1ms").link("gw", "client", "1Mbps", "10ms")
        return s.flow("server", "client", {"kind": "tcp"})

    with pytest.raises(fg.ScenarioError) as refused:
        gateway({"lhs": {"rwnd": 16000, "granularity": "10ms"}}).validate()
    assert refused.value.path == "nodes[1].gateway.lhs.granularity", refused.value
    assert "expected it in `rhs`" in refused.value.message
    receiver = {"rwnd": 16000, "cc": "sack", "delayed_ack": False, "timestamps": False}
    gateway({"lhs": receiver}).validate()
    with pytest.raises(fg.ScenarioError) as refused:
        gateway({"rhs": {"handshake": True}}).validate()
    assert refused.value.path == "nodes[1].gateway.rhs.handshake", refused.value

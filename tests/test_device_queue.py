"""RED behind a device queue sees only its own queue, idle from the pull that found it empty."""

import pytest

import fairgate as fg

# Four 1000-byte packets 1 ms apart into a 1 Mb/s link (8 ms each), then one more at 40 ms;
# RED with w_q = 0.5 and a typical packet of 1000 bytes (s = 8 ms of idle per packet).
TEXT = """
name = "ring"
[simulation]
duration = "0.05s"
sample_interval = "5ms"
[[nodes]]
name = "a"
[[nodes]]
name = "b"
[[links]]
from = "a"
to = "b"
rate = "1Mbps"
duplex = false
queue = { kind = "red", min_th = 5, max_th = 15, w_q = 0.5, mean_packet_size = 1000 }
[[flows]]
src = "a"
dst = "b"
source = { kind = "cbr", rate = "8Mbps", size = 1000, packets = 4 }
[[flows]]
src = "a"
dst = "b"
start = "40ms"
source = { kind = "cbr", rate = "8Mbps", size = 1000, packets = 1 }
"""


def red_average_at(overrides: list[str], time_s: float) -> float:
    state = fg.run_text(TEXT, overrides).qdisc_state
    rows = state[(state["var"] == "avg") & (state["time_s"].round(6) == time_s)]
    return float(rows["value"].iloc[0])


def test_without_a_ring_red_counts_every_waiting_packet_and_idles_with_the_link():
    # Arrivals see q = 0, 0, 1, 2: avg 0, 0, 0.5, 1.25. The link idles from 32 ms; at 40 ms
    # m = floor(8 / 8) = 1, then the arrival: 1.25 * 0.5^2.
    assert red_average_at([], 0.005) == pytest.approx(1.25)
    assert red_average_at([], 0.045) == pytest.approx(1.25 * 0.5**2)


def test_with_a_ring_red_sees_its_own_queue_and_idles_from_the_empty_pull():
    # The ring takes the second packet at 1 ms; the third arrival finds RED empty (idle since
    # that pull, m = 0): avg 0; the fourth sees the third waiting: 0.5. The ring pulls the
    # fourth at 16 ms; when it frees at 24 ms the pull finds RED empty (ns-3 `DoDequeue`), so
    # RED idles from 24 ms although the link is busy until 32: at 40 ms m = floor(16 / 8) = 2.
    ring = ["links[0].device_queue=1"]
    assert red_average_at(ring, 0.005) == pytest.approx(0.5)
    assert red_average_at(ring, 0.045) == pytest.approx(0.5 * 0.5**3)
    ports = fg.run_text(TEXT, ring).ports
    assert int(ports["max_device_pkts"].iloc[0]) == 1
    assert int(ports["departures_pkts"].iloc[0]) == 5

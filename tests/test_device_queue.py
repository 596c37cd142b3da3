"""RED behind a device queue sees only its own queue, idle from the pull that found it empty."""

import pytest

import fairgate as fg


def run(device_queue: int | None) -> fg.Results:
    """Four 1000-byte packets 1 ms apart into a 1 Mb/s link (8 ms each), one more at 40 ms;
    RED with w_q = 0.5 and a typical packet of 1000 bytes (8 ms of idle per packet)."""
    sc = fg.Scenario("ring", duration=0.05, sample_interval=0.005)
    red = fg.queue("red", min_th=5, max_th=15, w_q=0.5, mean_packet_size=1000)
    sc.node("a").node("b").link(
        "a", "b", "1Mbps", queue=red, duplex=False, device_queue=device_queue
    )
    cbr = fg.source("cbr", rate="8Mbps", size=1000, packets=4)
    late = fg.source("cbr", rate="8Mbps", size=1000, packets=1)
    sc.flow("a", "b", cbr).flow("a", "b", late, start=0.04)
    return sc.run()


def red_average_at(device_queue: int | None, time_s: float) -> float:
    state = run(device_queue).qdisc_state
    rows = state[(state["var"] == "avg") & (state["time_s"].round(6) == time_s)]
    return float(rows["value"].iloc[0])


def test_without_a_ring_red_counts_every_waiting_packet_and_idles_with_the_link():
    # Arrivals see q = 0, 0, 1, 2: avg 0, 0, 0.5, 1.25. The link idles from 32 ms; at 40 ms
    # m = floor(8 / 8) = 1, then the arrival: 1.25 * 0.5^2.
    assert red_average_at(None, 0.005) == pytest.approx(1.25)
    assert red_average_at(None, 0.045) == pytest.approx(1.25 * 0.5**2)


def test_with_a_ring_red_sees_its_own_queue_and_idles_from_the_empty_pull():
    # The ring takes the second packet at 1 ms; the third arrival finds RED empty (idle since
    # that pull, m = 0): avg 0; the fourth sees the third waiting: 0.5. The ring pulls the
    # fourth at 16 ms; when it frees at 24 ms the pull finds RED empty (ns-3 `DoDequeue`), so
    # RED idles from 24 ms although the link is busy until 32: at 40 ms m = floor(16 / 8) = 2.
    assert red_average_at(1, 0.005) == pytest.approx(0.5)
    assert red_average_at(1, 0.045) == pytest.approx(0.5 * 0.5**3)
    ports = run(1).ports
    assert int(ports["max_device_pkts"].iloc[0]) == 1
    assert int(ports["departures_pkts"].iloc[0]) == 5

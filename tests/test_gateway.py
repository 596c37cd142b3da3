"""Split-connection gateways from Python: the builder, the per-connection traces and the
T1 spoofing result (satellite link full, gateway 1's send buffer growing)."""

from pathlib import Path

import fairgate as fg
from conftest import SCENARIOS
from test_cli import fairgate


def _spoofing(rate: str = "1.544Mbps") -> fg.Scenario:
    s = fg.Scenario("spoofing-py", duration="20s", sample_interval="500ms")
    s.node("server").gateway("gw1", {"rhs": {"cc": "sack", "initial_window": 2}})
    s.gateway("gw2", {"lhs": {"cc": "sack", "window_scale": 3, "rwnd": 200000}})
    s.node("client")
    s.link("server", "gw1", "10Mbps", "0.1ms", queue={"kind": "fifo", "limit": 1000})
    s.link("gw1", "gw2", rate, "250ms", queue={"kind": "fifo", "limit": 100000})
    s.link("gw2", "client", "10Mbps", "0.1ms", queue={"kind": "fifo", "limit": 1000})
    s.flow("server", "client", {"kind": "tcp", "cc": "sack"}, name="file")
    return s


def test_gateway_traces_show_the_send_buffer_growing_at_t1():
    res = _spoofing().run()
    assert res.summary["conservation"]["ok"]
    traces = res.traces
    buffer = traces[traces["var"] == "gw1.send_buffer"].sort_values("time_s")
    assert len(buffer) > 30
    early = buffer[buffer["time_s"] <= 10.0]["value"].iloc[-1]
    late = buffer["value"].iloc[-1]
    assert late > early > 0
    port = res.ports.set_index("port").loc["gw1->gw2"]
    assert port["utilisation"] > 0.8


def test_gateway_options_on_a_host_are_a_scenario_error():
    s = fg.Scenario("bad", duration="1s")
    s._doc["nodes"] = [{"name": "a", "gateway": {"send_buffer": 10}}]
    try:
        s.run()
    except fg.ScenarioError as e:
        assert "nodes[0].gateway" in str(e)
    else:
        raise AssertionError("gateway options on a host were accepted")


def test_gateway_figure_is_returned_and_written_on_request(tmp_path):
    from matplotlib.figure import Figure

    from fairgate.plot_gateway import gateway_figure, gateways

    s = _spoofing()
    s._doc["nodes"][1]["gateway"]["trace_connections"] = 1
    res = s.run()
    assert "gw1.conn0.pep_buffer" in set(res.traces["var"].astype(str))
    assert gateways(res) == ["gw1", "gw2"], "a connection's traces are not a gateway"
    assert isinstance(gateway_figure(res, "gw1"), Figure)
    assert list(tmp_path.iterdir()) == [], "saved only when asked"
    fig = gateway_figure(res, "gw1", tmp_path / "gw1.png")
    assert isinstance(fig, Figure)
    assert (tmp_path / "gw1.png").stat().st_size > 10_000


def test_two_server_study_sweeps_mu_beside_the_vanilla_gateway(tmp_path):
    from fairgate.studies import two_server

    table = two_server.sweep(duration_s=20.0, rates=[300.0, 20000.0])
    assert list(table["gateway"]) == ["vanilla", "two-server", "two-server"]
    slow, fast = table.iloc[1], table.iloc[2]
    assert slow["rhs_starves"] and not fast["rhs_starves"]
    assert slow["throughput_mbps"] < fast["throughput_mbps"]
    assert slow["total_buffer_kb"] * 10 < fast["total_buffer_kb"]
    assert two_server.optimum(table) is None or two_server.optimum(table) == 20000.0


def test_a_gateway_name_with_a_slash_gets_a_figure_file_of_its_own(tmp_path: Path):
    """`--plot` wrote `gateway-{name}.png`: a gateway named `a/b` failed after the run, with
    exit 2 and an error about a missing folder `gateway-a`, and `..` in a name pointed above."""
    from fairgate.plot_gateway import figure_files

    assert figure_files(["a/b", "a_b", "../up", "gw1"]) == {
        "a/b": "gateway-a_b.png",
        "a_b": "gateway-a_b-2.png",
        "../up": "gateway-_up.png",
        "gw1": "gateway-gw1.png",
    }
    long_names = figure_files(["g" * 300, "g" * 301, "é" * 300])  # one file name: 255 bytes
    assert long_names["g" * 301] == f"gateway-{'g' * 200}-2.png"
    assert all(len(file.encode()) <= 255 for file in long_names.values())
    text = (SCENARIOS / "spoofing_gateway.toml").read_text(encoding="utf-8")
    scenario = tmp_path / "s.toml"
    scenario.write_text(text.replace('"gw1"', '"edge/gw"'), encoding="utf-8")
    out = tmp_path / "o"
    short = ["--set", "simulation.duration=5s"]
    done = fairgate("run", scenario, "--plot", "--quiet", "--out", out, *short)
    assert done.returncode == 0, done.stderr
    assert (out / "gateway-edge_gw.png").stat().st_size > 0

"""[Byun07] testbed and schemes: the scenario of each case and what one run measures.

The testbed is ``fairgate/data/satellite/satellite_http.toml`` ([Byun07, §3]; its header gives
the topology and the TCP options the text implies, set explicitly). A case changes only the
receive-queue discipline (RED 1-4, SRED 1-2, AVQ, AVQRED, PFAVQRED, [Byun07, Table 3.1]), the
marking method (drop, or buffer flow control FC1-FC5 [Byun07, Table 3.2]), the number of
connections and the UDP flows. Decisions (docs/reproductions/satellite.md gives the reasons):
- the measurement starts at 200 s, once the ramp-up has reached the population (195 s), and
  lasts the source's 20 minutes (chapters 4 and 5) or 15 minutes (chapter 6);
- AVQ keeps its virtual capacity at γC (α = 0): "our optimal virtual capacity is
  pre-determined" [Byun07, §4.2.1];
- PFAVQRED and SRED tell the TCP connections apart (`key = "connection"`), the text's pre-PEP
  5-tuple flows, since one fairgate HTTP flow multiplexes 20 connections;
- buffer flow control: the receive queue marks (ECN inside the gateway, consumed by the PEP)
  instead of dropping, in RED's forced region as well (`mark_forced`), since the source accepts
  every marked packet; a packet that cannot carry a mark (a SYN) is still dropped;
- the marking probability of an interval is the receive queue's drops and marks over its
  arrivals in that interval.
"""

from __future__ import annotations

import copy
import tomllib
from importlib.resources import files
from typing import Any

import tomli_w

RECEIVE = "internet->pep"
TRANSMIT = "pep->regulator"
RAMP_S = 200.0
QUICK_RAMP_S = 40.0
MEASURE_S = {4: 1200.0, 5: 1200.0, 6: 900.0}
QUICK_MEASURE_S = 30.0
CONNECTIONS = {4: 400, 5: 500, 6: 500}
QUICK_CONNECTIONS = 200
SEEDS = (1, 2, 3)
"""The full run's seeds (the source ran each setting once); --quick runs seed 1 only."""
PER_FLOW = 20
UDP_KBPS = (80, 160, 320)
PACKET_BYTES = 1400
LINK_BPS = 20e6

RED = {
    "RED 1": (0.02, 0.5),
    "RED 2": (0.05, 0.7),
    "RED 3": (0.10, 0.5),
    "RED 4": (0.10, 0.7),
}
"""(w_q, max_p) of [Byun07, Table 3.1]; min_th 60 and max_th 120 packets for all."""
FC_DECR = {1: 0.97, 2: 0.95, 3: 0.90, 4: 0.80, 5: 0.50}
LIMIT = 10_000


def template() -> dict[str, Any]:
    """The shipped chapter-4 testbed as a dict."""
    path = files("fairgate").joinpath("data", "satellite", "satellite_http.toml")
    text = path.read_text("utf-8")
    return tomllib.loads(text)


def red_queue(name: str) -> dict[str, Any]:
    w_q, max_p = RED[name]
    return {
        "kind": "red",
        "min_th": 60,
        "max_th": 120,
        "w_q": w_q,
        "max_p": max_p,
        "gentle": False,
        "limit": LIMIT,
    }


def avqred_queue() -> dict[str, Any]:
    return {
        "kind": "avqred",
        "min_th": 60,
        "max_th": 120,
        "avg_packet_size": PACKET_BYTES,
        "limit": LIMIT,
    }


def scheme_queue(scheme: str) -> dict[str, Any]:
    """The receive-queue discipline of a scheme of [Byun07, Table 3.1] (drop marking)."""
    if scheme in RED:
        return red_queue(scheme)
    if scheme == "AVQ":
        return {
            "kind": "avq",
            "virtual_buffer": 123_750,
            "gamma": 1.0,
            "alpha": 0.0,
            "limit": LIMIT,
        }
    if scheme == "AVQRED":
        return avqred_queue()
    if scheme == "PFAVQRED":
        inner = {k: v for k, v in avqred_queue().items() if k != "kind"}
        return {"kind": "pfavqred", "avqred": inner, "key": "connection"}
    if scheme in ("SRED 1", "SRED 2"):
        red = {k: v for k, v in red_queue("RED 4").items() if k != "kind"}
        return {
            "kind": "sred",
            "variant": "modified",
            "zombies": 500,
            "alpha": 0.1,
            "lookups": 1 if scheme == "SRED 1" else 50,
            "red": red,  # the modified variant holds its buffer in red.limit (= LIMIT)
            "key": "connection",
        }
    if scheme == "none":
        return {"kind": "fifo", "limit": LIMIT}
    raise ValueError(f"scheme: unknown {scheme!r}")


def _tcp_flow(doc: dict[str, Any]) -> dict[str, Any]:
    return doc["flows"][0]


def _compress_ramp(doc: dict[str, Any]) -> None:
    """--quick: each flow adds one connection per second without pauses (20 s to the target)."""
    source = _tcp_flow(doc)["source"]
    source["ramp_step"] = "1s"
    source["ramp_pause"] = "0s"


def scenario(
    scheme: str,
    connections: int,
    measure_s: float,
    quick: bool = False,
    fc: int | None = None,
    udp: bool = False,
    bottleneck: bool = True,
    seed: int = 1,
) -> dict[str, Any]:
    """One case's scenario: ``scheme`` at the receive queue; ``fc`` the buffer flow-control
    setting (marks instead of drops); ``bottleneck=False`` the no-AQM input measurement run, in
    which neither the regulator nor the satellite return link (whose 1 Mb/s the satellite leg's
    ACKs fill at about 60 Mb/s of data) limits what leaves the PEP."""
    doc = copy.deepcopy(template())
    doc["simulation"]["seed"] = seed
    ramp = QUICK_RAMP_S if quick else RAMP_S
    doc["simulation"]["duration"] = f"{ramp + measure_s:g}s"
    doc["simulation"]["record_drops"] = "all"
    doc["simulation"]["phase_edges"] = [ramp]
    flow = _tcp_flow(doc)
    flow["count"] = connections // PER_FLOW
    flow["source"]["record_transfers"] = udp
    if quick:
        _compress_ramp(doc)
    receive = doc["links"][1]
    receive["queue"] = scheme_queue(scheme)
    if fc is not None:
        receive["queue"]["ecn"] = True
        if receive["queue"]["kind"] == "red":
            receive["queue"]["mark_forced"] = True
        flow["source"]["tcp"]["ecn"] = True
        doc["nodes"][2]["gateway"]["flow_control"] = {"preset": f"fc{fc}"}
    if not bottleneck:
        doc["links"][2]["rate"] = "100Mbps"
        doc["links"][3]["reverse"]["rate"] = "100Mbps"
    if udp:
        for kbps in UDP_KBPS:
            cbr = {"kind": "cbr", "rate": f"{kbps}kbps", "size": PACKET_BYTES}
            doc["flows"].append(
                {"name": f"udp{kbps}", "src": "servers", "dst": "clients", "source": cbr}
            )
    return doc


def scenario_text(doc: dict[str, Any]) -> str:
    return tomli_w.dumps(doc)

"""Discipline-specific drop causes beside the shared reasons: the ``cause`` column of
``Results.drops`` and each port's counts by cause (``summary.json``, ``Results.drop_causes()``)."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

import fairgate as fg


def choke_overload(record_drops: str | None) -> fg.Results:
    """Eight CBR flows of 1.5 Mb/s into a 10 Mb/s CHOKe queue: matches and RED drops both
    happen."""
    sc = fg.Scenario("causes", duration=4, seed=3, record_drops=record_drops)
    red = {"limit": 100, "min_th": 5.0, "max_th": 30.0, "max_p": 0.1}
    sc.node("a").node("b").link("a", "b", "10Mbps", "5ms", fg.queue("choke", red=red))
    for i in range(8):
        sc.flow("a", "b", fg.source("cbr", rate="1.5Mbps", size=1000), name=f"f{i}")
    return sc.run()


def test_a_choke_match_and_a_red_drop_are_told_apart() -> None:
    results = choke_overload("all")
    drops = results.drops[results.drops["action"] == "drop"]
    by_cause = drops.groupby("cause", observed=True).size().to_dict()
    assert by_cause.get("choke_match", 0) > 0 and by_cause.get("red_early", 0) > 0, by_cause
    matched = drops[drops["cause"] == "choke_match"]
    assert set(matched["reason"]) <= {"pushout", "early"}
    port = results.ports.set_index("port").loc["a->b"]
    assert len(drops) == port["drops_pkts"]


def test_port_counts_by_cause_match_the_events_and_need_no_event_log() -> None:
    results = choke_overload("all")
    counted = results.drop_causes()
    assert list(counted.columns) == ["port", "cause", "reason", "drops", "marks"]
    events = results.drops.astype({"cause": str, "reason": str})
    named = events[events["cause"] != events["reason"]]
    from_events = named.groupby(["cause", "reason"]).size()
    from_counts = counted.set_index(["cause", "reason"])["drops"]
    pd.testing.assert_series_equal(
        from_counts.sort_index(), from_events.sort_index(), check_names=False, check_dtype=False
    )
    assert choke_overload(None).drop_causes().equals(counted)


def test_a_discipline_that_names_no_cause_reports_its_reason() -> None:
    sc = fg.Scenario("plain", duration=2, seed=1, record_drops="all")
    sc.node("a").node("b").link("a", "b", "10Mbps", "5ms", fg.queue("fifo", limit=10))
    sc.flow("a", "b", fg.source("cbr", rate="12Mbps", size=1000))
    results = sc.run()
    assert set(results.drops["cause"].astype(str)) == {"overflow"}
    assert results.drop_causes().empty


def test_drop_causes_round_trip_through_summary_json(tmp_path: Path) -> None:
    res = choke_overload(None)
    causes = res.summary["drop_causes"]
    assert causes and all(c["port"] == "a->b" for c in causes)
    assert fg.Results.load(res.save(tmp_path / "o")).drop_causes().equals(res.drop_causes())


def test_a_schema_1_summary_still_gives_its_drop_causes(tmp_path: Path) -> None:
    res = choke_overload(None)
    out = res.save(tmp_path / "o")
    old = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    by_port: dict[str, list[dict[str, object]]] = {}
    for cause in old.pop("drop_causes"):
        by_port.setdefault(str(cause.pop("port")), []).append(cause)
    ports = [{"port": p, "drop_causes": by_port.get(p, [])} for p in res.ports["port"]]
    old.update(schema_version=1, ports=ports)
    (out / "summary.json").write_text(json.dumps(old), encoding="utf-8")
    assert fg.Results.load(out).drop_causes().equals(res.drop_causes())

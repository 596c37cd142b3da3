"""``summary.json`` holds the run as a whole (schema version 2): one value per key, however many
flows and ports; their rows are only in ``flows.parquet`` and ``ports.parquet``
(``docs/results.md``)."""

from __future__ import annotations

from pathlib import Path

import fairgate as fg

RUN_KEYS = {
    "schema_version",
    "fairgate_version",
    "scenario",
    "seed",
    "time_s",
    "duration_s",
    "events",
    "packet_hops",
    "window",
    "totals",
    "fairness",
    "valid",
    "failure",
    "conservation",
    "drop_events",
    "drop_causes",
}


def many_flows(flows: int) -> fg.Scenario:
    sc = fg.Scenario("many", duration=1, seed=2)
    sc.node("a").node("b").link("a", "b", "10Mbps", "5ms", fg.queue("fifo", limit=50))
    for i in range(flows):
        sc.flow("a", "b", fg.source("cbr", rate="200kbps", size=500), name=f"f{i}")
    return sc


def test_the_summary_has_the_run_keys_only_and_its_size_does_not_grow_with_flows(
    tmp_path: Path,
) -> None:
    sizes = []
    for flows in (2, 200):
        res = many_flows(flows).run()
        assert set(res.summary) == RUN_KEYS and res.summary["schema_version"] == 2
        out = res.save(tmp_path / str(flows))
        assert len(fg.Results.load(out).flows) == flows
        sizes.append((out / "summary.json").stat().st_size)
    assert sizes[1] - sizes[0] < 100, sizes  # digits of the counts, not rows

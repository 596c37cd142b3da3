"""Python builders that produce the same structure the TOML scenario files hold.

The schema lives in Rust (``crates/fairgate-core/src/scenario``); these helpers only build the
dictionary, which the core validates exactly as it validates a TOML file. Durations are seconds
or strings with units ("10ms"); rates are bits per second or strings ("10Mbps").
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd
import tomli_w

from fairgate._core import ScenarioError
from fairgate.checks import clipped, seed_value, shown
from fairgate.display import cell

Value = int | float | str
Table = dict[str, Any]
MAX_DEPTH = 64
"""Tables and lists nested deeper than this are refused: no field is nearly as deep, and a
table that holds itself would otherwise recurse until Python gives up."""
WHOLE = (-(2**63), 2**63 - 1)


def plain(value: Any, path: str, depth: int = 0) -> Any:
    """``value`` as the plain values TOML holds: numpy scalars and arrays (a rate from
    ``np.linspace``, a limit from ``np.arange``), pandas Series (a column of a frame), tuples
    and ranges are converted; anything else (an integer past 64 bits, nesting deeper than
    ``MAX_DEPTH``) raises ScenarioError naming ``path``."""
    if depth > MAX_DEPTH:
        raise ScenarioError(
            f"`{clipped(path)}`: nested deeper than {MAX_DEPTH} levels (a table in itself?)"
        )
    if isinstance(value, int) and not isinstance(value, bool):
        if not WHOLE[0] <= value <= WHOLE[1]:
            number = value if len(str(value)) <= 30 else f"{value:.6g}"
            raise ScenarioError(
                f"`{path}`: got {number}, expected a whole number from {WHOLE[0]} to {WHOLE[1]} "
                "(a float for larger values)"
            )
        return value
    if isinstance(value, bool | float | str):
        return value
    if isinstance(value, np.generic) or (isinstance(value, np.ndarray) and value.ndim == 0):
        return plain(value.item(), path, depth)
    if isinstance(value, pd.Series | pd.Index):
        return plain(value.to_numpy(), path, depth)
    if isinstance(value, Mapping):
        return {
            _key(k, path): plain(v, f"{path}.{k}" if path else str(k), depth + 1)
            for k, v in value.items()
        }
    if isinstance(value, list | tuple | range | np.ndarray):
        return [plain(v, f"{path}[{i}]", depth + 1) for i, v in enumerate(value)]
    raise ScenarioError(
        f"`{path}`: got {type(value).__name__} {shown(value)}, "
        "expected a number, string, boolean, list or table"
    )


def toml_text(doc: Mapping[str, Any]) -> str:
    """A scenario dict (numpy values and all, see :func:`plain`) as TOML text."""
    return tomli_w.dumps(plain(doc, ""))


def _key(key: Any, path: str) -> str:
    if not isinstance(key, str):
        raise ScenarioError(f"`{path}`: got the key {shown(key)}, expected a string")
    return key


def _clean(table: Table) -> Table:
    """Drops keys whose value is None, so defaults apply."""
    return {k: v for k, v in table.items() if v is not None}


def queue(kind: str = "fifo", **params: Any) -> Table:
    """A queue discipline: ``queue("fifo", limit=100)``, ``queue("red", min_th=5, ...)``."""
    return _clean({"kind": kind, **params})


def source(kind: str, **params: Any) -> Table:
    """A flow's source: ``source("cbr", rate="1Mbps", size=1000)``."""
    return _clean({"kind": kind, **params})


def link_params(
    rate: Value,
    delay: Value | Table = 0,
    queue: Table | None = None,
    loss: float | Table | None = None,
    reverse_queue: Table | None = None,
) -> Table:
    """Rate, delay, queue and loss of a link class in a topology builder."""
    return _clean(
        {"rate": rate, "delay": delay, "queue": queue, "loss": loss, "reverse_queue": reverse_queue}
    )


def _is_finite_number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


class Scenario:
    """A scenario under construction. Every method returns ``self`` so calls chain."""

    def __init__(
        self,
        name: str = "",
        duration: Value = 10.0,
        seed: int = 1,
        sample_interval: Value | None = None,
        description: str = "",
        trace_every_change: bool = False,
        warmup: Value | None = None,
        end: Value | None = None,
        record_drops: int | str | None = None,
    ) -> None:
        """``warmup`` and ``end`` bound the measurement window of every summary metric
        (``docs/scenarios.md``, measurement window); ``record_drops`` (``"all"`` or a count)
        keeps the drop and mark events table (``docs/results.md``, drops)."""
        self._doc: Table = {
            "name": name,
            "description": description,
            "simulation": _clean(
                {
                    "duration": duration,
                    "seed": seed,
                    "sample_interval": sample_interval,
                    "trace_every_change": trace_every_change or None,
                    "warmup": warmup,
                    "end": end,
                    "record_drops": record_drops,
                }
            ),
        }

    def __repr__(self) -> str:
        """What has been built so far, on one line (``to_toml()`` gives all of it)."""
        doc = self._doc
        words = {"nodes": ("node", "nodes"), "links": ("link", "links")}
        words["flows"] = ("flow entry", "flow entries")  # an entry may stand for `count` flows
        counts = {key: len(doc.get(key, [])) for key in words}
        parts = [f"{n:,} {words[key][n != 1]}" for key, n in counts.items() if n]
        if "topology" in doc:
            parts.insert(0, f"a {doc['topology'].get('kind', '?')} topology")
        name = cell(doc["name"] or "(unnamed)")
        duration = doc["simulation"].get("duration")
        return f"<Scenario {name!r}, duration {duration}: {', '.join(parts) or 'empty'}>"

    def node(self, name: str, kind: str = "host") -> Scenario:
        """Adds a node (``host``, ``router`` or ``gateway``); returns the scenario."""
        self._doc.setdefault("nodes", []).append({"name": name, "kind": kind})
        return self

    def router(self, name: str) -> Scenario:
        """Adds a router; returns the scenario."""
        return self.node(name, "router")

    def gateway(self, name: str, options: Table | None = None) -> Scenario:
        """Adds a split-connection gateway node; ``options`` is its ``gateway`` table
        (``lhs``, ``rhs``, ``send_buffer``, ``syn_ack``, ``flush_period``,
        ``transmit_limit``, ``flow_control``, ``two_server``, ``multiplex``; see
        ``docs/models/gateway.md``, ``buffer_flow_control.md`` and ``two_server.md``)."""
        node: Table = {"name": name, "kind": "gateway"}
        if options is not None:  # the core checks it: `[]` or `0` was dropped as "no options"
            node["gateway"] = options
        self._doc.setdefault("nodes", []).append(node)
        return self

    def link(
        self,
        src: str,
        dst: str,
        rate: Value,
        delay: Value | Table = 0,
        queue: Table | None = None,
        loss: float | Table | None = None,
        duplex: bool = True,
        reverse: Table | None = None,
        monitor: str | None = None,
        device_queue: int | None = None,
    ) -> Scenario:
        """A link (both directions unless ``duplex=False``); ``device_queue`` packets of
        transmit ring under the discipline (default none)."""
        spec = {
            "from": src,
            "to": dst,
            "rate": rate,
            "delay": delay,
            "queue": queue,
            "loss": loss,
            "duplex": duplex,
            "reverse": reverse,
            "monitor": monitor,
            "device_queue": device_queue,
        }
        self._doc.setdefault("links", []).append(_clean(spec))
        return self

    def dumbbell(
        self,
        senders: int,
        bottleneck: Table,
        access: Table,
        rtt: list[Value] | Table | None = None,
        rtt_split: str | None = None,
    ) -> Scenario:
        """Hosts s0..s{n-1} -> router left -> router right -> hosts d0..d{n-1}.

        ``rtt_split="even"`` puts half of each flow's extra delay on the receiver's access link
        instead of all of it on the sender's (``"sender"``, the default).
        """
        spec = {"kind": "dumbbell", "senders": senders, "bottleneck": bottleneck, "access": access}
        self._doc["topology"] = _clean({**spec, "rtt": rtt, "rtt_split": rtt_split})
        return self

    def chain(self, hops: int, bottleneck: Table, access: Table) -> Scenario:
        """Routers r0..r{k}; host src on r0, dst on r{k}; cross hosts x{i}s -> x{i}d per hop."""
        spec = {"kind": "chain", "hops": hops, "bottleneck": bottleneck, "access": access}
        self._doc["topology"] = spec
        return self

    def flow(
        self,
        src: str,
        dst: str,
        source: Table,
        name: str | None = None,
        start: Value | Table = 0,
        stop: Value | None = None,
        count: int | None = None,
    ) -> Scenario:
        """Adds a flow from host ``src`` to host ``dst`` driven by ``source`` (see
        :func:`source`), from ``start`` (a time or a distribution) to ``stop``; ``count``
        makes that many alike; returns the scenario."""
        spec = {
            "name": name,
            "src": src,
            "dst": dst,
            "start": start,
            "stop": stop,
            "count": count,
            "source": source,
        }
        self._doc.setdefault("flows", []).append(_clean(spec))
        return self

    def phases(
        self,
        src: str,
        dst: str,
        source: Table,
        counts: list[int],
        phase: float,
        name: str = "phase",
    ) -> Scenario:
        """Flows of ``source`` whose number steps through ``counts``, one phase of ``phase``
        seconds each: the flow entry ``phases = { counts, length }``, which the core expands
        into groups named ``{name}{g}.{i}`` (``docs/scenarios.md``, traffic phases). The phase
        boundaries inside the run join ``simulation.phase_edges``, so
        ``Results.phase_summary()`` reports each phase."""
        spec = {
            "name": name,
            "src": src,
            "dst": dst,
            "source": source,
            "phases": {"counts": counts, "length": phase},
        }
        self._doc.setdefault("flows", []).append(_clean(spec))
        return self

    def phase_edges(self, edges: list[float]) -> Scenario:
        """Cuts the run at ``edges`` (``simulation.phase_edges``, times in seconds or strings
        such as ``"200s"``) for the per-phase summary. Edges given in several calls are
        merged, and sorted when all are numbers; the core checks each, naming its index (an
        edge at or past the duration, or not a time, is refused, never dropped)."""
        if not isinstance(edges, list | tuple | range | np.ndarray):
            raise ScenarioError(
                f"`simulation.phase_edges`: got {shown(edges)}, expected a list of times"
            )
        sim = self._doc["simulation"]
        merged = [*sim.get("phase_edges", []), *plain(list(edges), "simulation.phase_edges")]
        if all(_is_finite_number(edge) for edge in merged):
            merged = sorted(set(merged))
        sim["phase_edges"] = merged
        return self

    def to_dict(self) -> Table:
        """The scenario as plain Python values (a deep copy)."""
        return plain(self._doc, "")

    def to_toml(self) -> str:
        """The scenario as TOML text, exactly what a scenario file would hold."""
        return toml_text(self._doc)

    def validate(self) -> Table:
        """Checks the scenario in the core; raises ScenarioError naming the bad field."""
        from fairgate.runner import validate_text

        return validate_text(self.to_toml())

    def run(self, seed: int | None = None, progress: bool = False) -> Any:
        """Builds and runs the scenario; returns :class:`fairgate.Results`."""
        from fairgate.runner import run_text

        overrides = [] if seed is None else [f"simulation.seed={seed_value(seed, 'seed')}"]
        return run_text(self.to_toml(), overrides=overrides, progress=progress)

"""The ``fairgate`` command: run and validate scenarios.

Exit codes: 0 success, 2 bad input (scenario, file, parameter), 1 internal error.
"""

from __future__ import annotations

import argparse
import contextlib
import inspect
import io
import logging
import os
import re
import sys
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from types import ModuleType
from typing import Any, TextIO

import pandas as pd

from fairgate import __version__, atm
from fairgate._core import ScenarioError, SimulationError
from fairgate.checks import clipped, fields_named, printable, seed_value, shown
from fairgate.display import printed_table
from fairgate.results import Results
from fairgate.runner import (
    ConservationError,
    check_out_dir,
    path_argument,
    rate_argument,
    run_file,
    streams_read_once,
    validate_file,
)
from fairgate.runner import read_text_file as read_scenario
from fairgate.staging import (
    exit_status,
    final_path,
    staged_output,
    stopped_by,
    termination_like_ctrl_c,
)
from fairgate.sweeps import cli as sweep_cli
from fairgate.sweeps import store_run
from fairgate.sweeps.store import check_single_run_target, writing

EXIT_BAD_INPUT = 2
EXIT_INTERNAL = 1


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="fairgate",
        description="Packet-level simulation of congestion control at routers and gateways.",
    )
    parser.add_argument("--version", action="version", version=f"fairgate {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    run = sub.add_parser(
        "run",
        help="run a scenario and write summary.json and Parquet tables",
        description="Run SCENARIO, print per-flow and per-queue tables, and write "
        "DIR/summary.json plus one Parquet file per table.",
    )
    run.add_argument("scenario", type=path_argument, help="scenario TOML file")
    run.add_argument("--seed", type=int, help="override simulation.seed")
    run.add_argument(
        "--seeds",
        type=int,
        metavar="N",
        help="run seeds SEED..SEED+N-1 on Dask; print means with 95%% intervals; "
        "write a results store",
    )
    run.add_argument(
        "--out",
        type=path_argument,
        help="output directory (default: out/STEM, STEM the scenario file's name without .toml)",
    )
    run.add_argument(
        "--set",
        dest="overrides",
        action="append",
        default=[],
        metavar="KEY.PATH=VALUE",
        help="override a scenario value, e.g. --set simulation.duration=20s (repeatable)",
    )
    run.add_argument(
        "--plot", action="store_true", help="also write DIR/plot.png and DIR/queue.png"
    )
    run.add_argument("--quiet", action="store_true", help="print nothing but errors")
    sweep_cli.add_executor_options(run)

    repro = sub.add_parser(
        "reproduce",
        help="reproduce a published experiment and compare with the paper's numbers",
        description="Run a reproduction and print, for every published number, the paper's "
        "value, fairgate's, the difference and whether it is within tolerance; write the same "
        "as Markdown and CSV plus the figures into --out.",
    )
    repro.add_argument("name", nargs="?", help="reproduction to run (see --list)")
    repro.add_argument("--list", action="store_true", help="list the reproductions")
    repro.add_argument(
        "--scenario",
        "--experiment",
        dest="scenario",
        help="run only this experiment or scenario of it",
    )
    repro.add_argument("--quick", action="store_true", help="shorter runs, wider tolerances")
    repro.add_argument(
        "--out", type=path_argument, help="output directory (default: out/repro/<name>)"
    )
    sweep_cli.add_executor_options(repro)

    study = sub.add_parser(
        "study",
        help="run a parameter-space study (e.g. keshav-buffers)",
        description="Run a study that maps a cost or performance surface and write its table "
        "(CSV, Markdown) and figure into --out.",
    )
    study.add_argument("name", nargs="?", help="study to run (see --list)")
    study.add_argument("--list", action="store_true", help="list the studies")
    study.add_argument("--quick", action="store_true", help="shorter traces")
    study.add_argument(
        "--out", type=path_argument, help="output directory (default: out/study/<name>)"
    )
    study.add_argument(
        "--trace",
        type=path_argument,
        help="packet trace for trace-fq: pcap, pcapng, ERF, TSH, ITA .tcp or CSV, plain or .gz",
    )
    study.add_argument(
        "--trace-format", help="the trace's format when its name does not say it (e.g. erf)"
    )
    study.add_argument(
        "--rate",
        dest="rate_bps",
        metavar="RATE",
        type=rate_argument,
        help="trace-fq's output line: bit/s (1.544e6) or with a unit (1.544Mbps)",
    )

    sweep_cli.add_parsers(sub)

    validate = sub.add_parser(
        "validate",
        help="check a scenario without running it",
        description="Check SCENARIO and report the first bad field.",
    )
    validate.add_argument("scenario", type=path_argument, help="scenario TOML file")
    validate.add_argument(
        "--set", dest="overrides", action="append", default=[], metavar="KEY.PATH=VALUE"
    )
    return parser


PRINTED_ROWS = 50
"""Rows of each table `fairgate run` prints: a terminal's worth; every row is in the Parquet
files. Beyond it, the first flows in declaration order and the ports with the most drops."""


def _flow_table(results: Results) -> pd.DataFrame:
    f = results.flows.head(PRINTED_ROWS)
    return pd.DataFrame(
        {
            "flow": f["flow"],
            "kind": f["kind"],
            "src->dst": f["src"].astype(str) + "->" + f["dst"].astype(str),
            "goodput Mb/s": (f["goodput_bps"] / 1e6).round(4),
            "delivered": f["delivered_pkts"],
            "dropped": f["dropped_pkts"],
            "loss %": (f["loss_rate"] * 100).round(3),
            "delay ms": (f["mean_delay_s"] * 1e3).round(3),
        }
    )


def _port_table(results: Results) -> pd.DataFrame:
    p = results.ports
    used = p[p["arrivals_pkts"] > 0]
    if len(used) > PRINTED_ROWS:
        used = results.ranked_ports().loc[lambda r: r["arrivals_pkts"] > 0].head(PRINTED_ROWS)
    return pd.DataFrame(
        {
            "port": used["port"],
            "qdisc": used["qdisc"],
            "util %": (used["utilisation"] * 100).round(2),
            "mean q": used["mean_queue_pkts"].round(3),
            "max q": used["max_queue_pkts"],
            "drops": used["drops_pkts"],
            "marks": used["marks"],
            "wait ms": (used["mean_wait_s"] * 1e3).round(3),
        }
    )


def _print_tables(results: Results) -> None:
    s = results.summary
    print(f"scenario {s['scenario'] or '(unnamed)'}  seed {s['seed']}  {s['time_s']:g} s simulated")
    print(f"{s['events']:,} events, {s['packet_hops']:,} packet-hops\n")
    print("flows")
    _print_table(_flow_table(results), "(none)")
    _print_more(len(results.flows), "flows", "the first in declaration order")
    print("\nqueues")
    _print_table(_port_table(results), "(no port had arrivals)")
    used = int((results.ports["arrivals_pkts"] > 0).sum())
    _print_more(used, "ports", "with arrivals, the most drops first, then the highest utilisation")


def _print_table(table: pd.DataFrame, empty: str) -> None:
    print(printed_table(table) if len(table) else empty)


def _print_more(rows: int, table: str, shown: str) -> None:
    """The line under a table cut at PRINTED_ROWS: which rows it shows, where the rest are."""
    if rows > PRINTED_ROWS:
        print(f"... {PRINTED_ROWS} of {rows:,} {table} shown ({shown}); all in {table}.parquet")


def _run(args: argparse.Namespace) -> int:
    _check_not_a_sweep_file(args.scenario)
    if args.seed is not None:
        seed_value(args.seed, "--seed")
    if args.seeds is not None:
        if atm.is_atm(validate_file(args.scenario, list(args.overrides))):
            raise ScenarioError(
                "--seeds: repeats packet scenarios over seeds; a cell network ([atm]) runs one "
                "seed at a time: fairgate run FILE --seed N"
            )
        return sweep_cli.run_seeds(args)
    for flag, value in (("--workers", args.workers), ("--scheduler", args.scheduler)):
        if value is not None:
            raise ScenarioError(
                f"{flag}: sends the runs of --seeds N to a cluster; expected --seeds with it "
                "(one run takes one core)"
            )
    overrides = list(args.overrides)
    if args.seed is not None:
        overrides.append(f"simulation.seed={args.seed}")
    scenario = validate_file(args.scenario, overrides)  # before an --out named after it
    out = check_out_dir(args.out or Path("out") / args.scenario.stem)
    with writing(out):
        if atm.is_atm(scenario):
            return _run_atm(args, overrides, out)
        return _run_packets(args, overrides, out)


def _check_not_a_sweep_file(path: Path) -> None:
    if sweep_cli.is_sweep_file(path):
        raise ScenarioError(
            f"got a sweep file (it has a `scenario` key), expected a scenario file; run a "
            f"sweep file with `fairgate sweep {clipped(str(path))}`"
        )


def _run_packets(args: argparse.Namespace, overrides: list[str], out: Path) -> int:
    """Runs a packet-level scenario, writes its tables and one-point store, prints them."""
    check_single_run_target(out)
    try:
        results = run_file(args.scenario, overrides, progress=not args.quiet)
    except ConservationError as err:
        err.results.write_into(out)
        print(printable(f"error: {err}"), file=sys.stderr)
        print(f"wrote {out}/summary.json (marked invalid) and {out}/*.parquet", file=sys.stderr)
        return EXIT_INTERNAL
    results.write_into(out)
    store_run(out, read_scenario(args.scenario), overrides, results)
    if args.plot:
        from fairgate.plot import overview, queue_over_time
        from fairgate.plot_gateway import figure_files, gateway_figure, gateways

        overview(results, out / "plot.png")
        queue_over_time(results, out / "queue.png")
        for gateway, file in figure_files(gateways(results)).items():
            gateway_figure(results, gateway, out / file)
    if not args.quiet:
        _print_tables(results)
        print(f"\nwrote {out}/summary.json, {out}/*.parquet and the one-point store ", end="")
        print(f"{out}/{{summary,flows,ports}}/ (fairgate query {out} SQL)")
    return 0


def _run_atm(args: argparse.Namespace, overrides: list[str], out: Path) -> int:
    """Runs a scenario with an ``[atm]`` section on the cell network and writes its tables."""
    if args.plot:
        raise ScenarioError("--plot: expected none for an [atm] scenario (no overview plot)")
    run = atm.run_atm(read_scenario(args.scenario), overrides, progress=not args.quiet)
    written = run.write_into(out)
    if not args.quiet:
        goodput = f"{run.total_goodput_mbps:.3f} Mb/s goodput over {run.window_s:g} s"
        print(f"cell network {args.scenario}: {goodput}, {run.backbone_cells:,} backbone cells\n")
        print(printed_table(run.vcs.round(4)))
        print("\nwrote " + ", ".join(str(p) for p in written))
    return 0


def _validate(args: argparse.Namespace) -> int:
    spec = sweep_cli.sweep_file_spec(args.scenario)
    if spec is not None:
        print(f"{args.scenario}: {sweep_cli.describe_sweep(spec, args.overrides)}")
        return 0
    scenario = validate_file(args.scenario, args.overrides)
    if atm.is_atm(scenario):
        vcs = scenario["atm"].get("vcs", [])
        tcps = sum(vc.get("tcps", 0) for vc in vcs)
        print(f"{args.scenario}: valid (cell network: {len(vcs)} VCs, {tcps} TCPs)")
    else:
        flows = len(scenario.get("flows", []))
        print(f"{args.scenario}: valid ({flows} flow {'entry' if flows == 1 else 'entries'})")
    return 0


def _reproduce(args: argparse.Namespace) -> int:
    from fairgate import repro

    if args.list or not args.name:
        listed = [(args.name, _named(repro, args.name))] if args.name else _every(repro)
        width = max(len(name) for name, _ in listed)
        for name, module in listed:  # `reproduce NAME --list`: that one
            print(f"{name:{width}s}  {module.TITLE}")
            print(f"{'':{width}s}  experiments: {', '.join(map(str, module.EXPERIMENTS))}")
        return 0
    module = _named(repro, args.name)
    if args.scenario is not None and args.scenario not in map(str, module.EXPERIMENTS):
        experiments = ", ".join(map(str, module.EXPERIMENTS))
        raise ScenarioError(
            f"--scenario: got {shown(args.scenario)}, expected one of {experiments}"
        )
    out = check_out_dir(args.out or Path("out") / "repro" / args.name)
    options = {}
    if "client" in inspect.signature(module.run).parameters:  # runs its cases on the executor
        options["client"] = sweep_cli.client_of(args)
    with writing(out), staged_output(out) as staging:
        report = module.run(
            staging, experiment=args.scenario, quick=args.quick, progress=True, **options
        )
        report.scope = _scope(args, module.EXPERIMENTS)
        written = [final_path(p, staging, out) for p in report.write(staging)]
    print(report.text())
    print("\nwrote " + ", ".join(str(p) for p in written))
    return 0


def _named(package: ModuleType, name: str) -> ModuleType:
    """The reproduction or study ``name`` of ``package``; ScenarioError naming the argument."""
    try:
        return package.load(name)
    except KeyError:
        known = ", ".join(package.available())
        raise ScenarioError(f"`name`: got {shown(name)}, expected one of: {known}") from None


def _every(package: ModuleType) -> list[tuple[str, ModuleType]]:
    return [(name, package.load(name)) for name in package.available()]


def _scope(args: argparse.Namespace, experiments: Sequence[object]) -> str:
    """A reproduction's scope when it is not the whole one (see ``Report.scope``)."""
    parts = []
    if args.scenario is not None:
        listed = ", ".join(map(str, experiments))
        parts.append(f"experiment {args.scenario} only (of {listed})")
    if args.quick:
        parts.append("--quick: shorter runs, wider tolerances")
    return "; ".join(parts) + ("; not the full reproduction" if parts else "")


TRACE_OPTIONS = (
    ("--trace", "trace"),
    ("--trace-format", "trace_format"),
    ("--rate", "rate_bps"),
)
"""A study's trace options: the flag and the study's parameter (the flag's ``dest``), which
the study names in its errors and the command line names by its flag."""

FLAGS_OF_TRACE_OPTIONS = {name: flag for flag, name in TRACE_OPTIONS}


def _study(args: argparse.Namespace) -> int:
    from fairgate import studies

    if args.list or not args.name:
        listed = [(args.name, _named(studies, args.name))] if args.name else _every(studies)
        width = max(len(name) for name, _ in listed)
        for name, module in listed:  # `study NAME --list`: that one
            print(f"{name:{width}s}  {module.TITLE}")
        return 0
    module = _named(studies, args.name)
    accepted = inspect.signature(module.run).parameters
    options = {}
    for flag, name in TRACE_OPTIONS:
        value = getattr(args, name)
        if value is not None and name not in accepted:
            raise ScenarioError(f"{flag}: the study {args.name} takes no trace options")
        if value is not None:
            options[name] = value
    out = check_out_dir(args.out or Path("out") / "study" / args.name)
    with writing(out), staged_output(out) as staging, fields_named(FLAGS_OF_TRACE_OPTIONS):
        text = module.run(staging, quick=args.quick, **options)
    print(text)
    print(f"wrote {out}")
    return 0


def _printable_output() -> None:
    """Text the terminal's encoding cannot show (a flow named in Greek under an ASCII
    ``PYTHONIOENCODING``) is printed escaped, where it ended the command in a traceback after
    the run; the files written are UTF-8 whatever the terminal."""
    for stream in (sys.stdout, sys.stderr):
        if isinstance(stream, io.TextIOWrapper):
            stream.reconfigure(errors="backslashreplace")


class _StderrOrNothing:
    """stderr that goes quiet once it cannot be written (its reader gone, ``2>&1 | head``; a
    full disk, ``2>/dev/full``): a progress bar or a notice is not worth stopping a run for,
    where the error ended it at once (with exit status 0 and nothing written for the pipe).
    The exit status still says how the command ended."""

    def __init__(self, stream: TextIO) -> None:
        self._stream: TextIO | None = stream

    def write(self, text: str) -> int:
        return self._quietly(lambda stream: stream.write(text), len(text))

    def flush(self) -> None:
        self._quietly(lambda stream: stream.flush(), None)

    def _quietly(self, act: Callable[[TextIO], Any], otherwise: Any) -> Any:
        if self._stream is None:
            return otherwise
        try:
            return act(self._stream)
        except OSError:
            with contextlib.suppress(OSError, ValueError):  # later writes by fd go nowhere
                os.dup2(os.open(os.devnull, os.O_WRONLY), self._stream.fileno())
            self._stream = None
            return otherwise

    def __getattr__(self, name: str) -> Any:  # isatty, encoding, fileno...
        return getattr(self._stream or sys.__stderr__, name)


@contextlib.contextmanager
def _stderr_or_nothing() -> Iterator[None]:
    """Runs the block with :class:`_StderrOrNothing` as ``sys.stderr``."""
    previous = sys.stderr
    sys.stderr = _StderrOrNothing(previous)  # type: ignore[assignment]
    try:
        yield
    finally:
        sys.stderr = previous


def _no_event_loop_tracebacks() -> None:
    """Dask's event loop logs its callbacks' errors with tracebacks (an accept refused for want
    of file descriptors); what they cost the command reaches it as an exception and is said."""
    logging.getLogger("asyncio").setLevel(logging.CRITICAL)


def _draws(args: argparse.Namespace) -> bool:
    """Whether the command draws figures (and so imports Matplotlib)."""
    if args.command in ("reproduce", "study"):
        return not args.list
    return bool(getattr(args, "plot", False))


def _check_matplotlib_backend() -> None:
    """Matplotlib refuses an unknown ``MPLBACKEND`` as it is imported, with a traceback.
    fairgate draws into files without a backend, but a command that draws imports it."""
    backend = os.environ.get("MPLBACKEND")
    if not backend:
        return
    try:
        import matplotlib  # noqa: F401
    except ValueError:
        raise ScenarioError(
            f"MPLBACKEND: got {shown(backend)}, expected a Matplotlib backend such as agg, or "
            "none (fairgate's figures need none)"
        ) from None


OPTION_ERROR = re.compile(
    r"`?(--[a-z][a-z-]*|workers|Dask configuration|MPLBACKEND|\$FAIRGATE_\w+)[ :]"
)
"""An error about a command-line option (``--out: ...``, ``--scheduler: ...``, the form of an
override, quoted in backticks: "`--set x`: expected key.path=value") or the environment, not
about the scenario file: it is not prefixed with the file's path."""


def main(argv: Sequence[str] | None = None) -> int:
    """The ``fairgate`` command; returns its exit status (0, 1, 2, or 128 + a signal)."""
    _printable_output()
    _no_event_loop_tracebacks()
    with _watched_stdout() as stdout:
        try:
            args = _parser().parse_args(argv)
        except SystemExit as done:  # --help and --version print and end with 0, a usage error 2
            status = done.code if isinstance(done.code, int) else 0
            return _stdout_written(stdout, status, "fairgate")
        with _stderr_or_nothing(), streams_read_once():
            status = _run_command(args)
        return _stdout_written(stdout, status, f"fairgate {args.command}")


class _WatchedStdout:
    """Standard output that remembers a write the system refused: argparse drops the error of
    printing `--help` (to a full disk, ``> /dev/full``), which ended with status 0 and nothing
    written, and a run whose tables could not be printed said it had "stopped" although its
    files were complete."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream
        self.refused: OSError | None = None

    def write(self, text: str) -> int:
        return self._watched(lambda: self.stream.write(text))

    def flush(self) -> None:
        self._watched(self.stream.flush)

    def _watched(self, call: Callable[[], Any]) -> Any:
        try:
            return call()
        except BrokenPipeError:  # a reader that left (`| head`) had what it wanted
            raise
        except OSError as err:
            self.refused = err
            raise

    def __getattr__(self, name: str) -> Any:  # isatty, encoding, fileno...
        return getattr(self.stream, name)


@contextlib.contextmanager
def _watched_stdout() -> Iterator[_WatchedStdout | None]:
    """Runs the block with :class:`_WatchedStdout` as ``sys.stdout``; one closed at start
    (``>&-``, where Python sets None) is left for the commands to refuse."""
    if sys.stdout is None:
        yield None
        return
    watched = _WatchedStdout(sys.stdout)
    sys.stdout = watched  # type: ignore[assignment]
    try:
        yield watched
    finally:
        sys.stdout = watched.stream


def _stdout_written(stdout: _WatchedStdout | None, status: int, command: str) -> int:
    """``status``, once what the command printed has reached standard output; else 1 and a
    line on stderr naming it (a command that already failed keeps its own status)."""
    if stdout is None:
        return status
    with contextlib.suppress(OSError, ValueError):  # a refusal is recorded; ValueError: closed
        stdout.flush()
    if stdout.refused is None or status != 0:
        return status
    print(_stdout_refused(command, stdout.refused), file=sys.stderr)
    return EXIT_INTERNAL


def _stdout_refused(command: str, err: OSError) -> str:
    return f"error: `{command}`: cannot write to standard output: {err.strerror or err}"


def _run_command(args: argparse.Namespace) -> int:
    """Runs the command ``args`` names; bad input and failures become a line and a status."""
    handlers = {
        "run": _run,
        "validate": _validate,
        "reproduce": _reproduce,
        "study": _study,
        "sweep": sweep_cli.run_sweep,
        "query": sweep_cli.run_query,
    }
    try:
        with termination_like_ctrl_c():
            if _draws(args):
                _check_matplotlib_backend()
            return handlers[args.command](args)
    except ScenarioError as err:
        source = getattr(args, "scenario", None) or getattr(args, "file", None)  # sweep's
        message = str(err.args[0])
        about_an_option = OPTION_ERROR.match(message) is not None
        names_it = isinstance(source, Path) and shown(str(source)) in message  # "file 'x' ..."
        where = (
            f"{clipped(str(source))}: "
            if isinstance(source, Path) and not about_an_option and not names_it
            else ""
        )
        print(printable(f"error: {where}{message}"), file=sys.stderr)
        return EXIT_BAD_INPUT
    except SimulationError as err:
        print(printable(f"internal error: {err}"), file=sys.stderr)
        return EXIT_INTERNAL
    except BrokenPipeError:
        # The reader (e.g. `head`) closed stdout, which is written after the results are
        # (stderr's reader leaving stops nothing: _StderrOrNothing).
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except OSError as err:
        # The system refused what the checks before the run could not foresee (a full disk, a
        # quota, a file system gone read-only). Result files are staged, so none is left half
        # written; what went to stdout before the error stays there. Standard output is named
        # when it is what refused: a run prints its tables after writing its files.
        refused = getattr(sys.stdout, "refused", None)
        if refused is err:
            print(_stdout_refused(f"fairgate {args.command}", err), file=sys.stderr)
        else:
            print(printable(f"error: `fairgate {args.command}` stopped: {err}"), file=sys.stderr)
        return EXIT_INTERNAL
    except MemoryError:
        # Python ran out (a limit such as `ulimit -v`, or a table larger than memory); files
        # are staged, so none is left half written.
        print(f"error: `fairgate {args.command}` stopped: out of memory", file=sys.stderr)
        return EXIT_INTERNAL
    except KeyboardInterrupt as stop:
        # A run, a reproduction and a study write their output only once they end; a sweep
        # keeps its finished points and says so itself.
        print(
            f"\n{stopped_by(stop)}: `fairgate {args.command}` stopped before it finished; "
            "its results were not written",
            file=sys.stderr,
        )
        return exit_status(stop)


if __name__ == "__main__":
    sys.exit(main())

"""SQL over a results store with DuckDB: the views ``summary``, ``flows`` and ``ports``.

A store (``DIR/<table>/point=KEY/part-0.parquet``: a sweep's, or a single run's one point)
gives each view a ``point`` column; the per-flow and per-port views hold only complete points.
A single run's flat files (``DIR/queue_series.parquet``, ...) add a view each for the tables
the store does not hold.

A query reads the store and changes nothing: one statement that returns rows
(:func:`check_query`), in a connection that may read and write no file outside the store,
install no extension and change no setting (:func:`_sandbox`).
"""

from __future__ import annotations

import os
import re
import select
import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path

import duckdb
import pandas as pd
import pyarrow as pa

from fairgate._core import ScenarioError
from fairgate.checks import backslash_problem, clipped, path_value, text_value
from fairgate.staging import stop_received
from fairgate.sweeps import store

HIVE = "hive_partitioning = true, hive_types = {'point': VARCHAR}"
"""A point's key is text: DuckDB would read a key of 16 digits as a number."""


def _literal(path: Path, pattern: str = "") -> str:
    """``path`` as an SQL string for ``read_parquet``, then ``pattern`` (a glob below it).
    DuckDB reads every path as a glob: the characters of one in ``path`` (a store named
    ``runs[1]`` or ``s*``) are each put in a class of their own to be taken as written."""
    literal = re.sub(r"([*?\[])", r"[\1]", str(path)) + pattern
    return "'" + literal.replace("'", "''") + "'"


def _views(root: Path) -> dict[str, str]:
    """View name -> SELECT over the Parquet files that exist under ``root``."""
    views: dict[str, str] = {}
    if (root / "summary").is_dir() and any((root / "summary").glob("point=*/*.parquet")):
        views["summary"] = (
            f"SELECT * FROM read_parquet({_literal(root, '/summary/*/*.parquet')}, {HIVE})"
        )
        for table in ("flows", "ports"):
            if any((root / table).glob("point=*/*.parquet")):
                files = _literal(root, f"/{table}/*/*.parquet")
                views[table] = (
                    f"SELECT * FROM read_parquet({files}, {HIVE}) "
                    "WHERE point IN (SELECT point FROM summary)"
                )
    for file in sorted(root.glob("*.parquet")):
        if VIEW_NAME.fullmatch(file.stem) and file.stem not in views and file.is_file():
            views[file.stem] = f"SELECT * FROM read_parquet({_literal(file)})"
    return views


def _why_no_results(root: Path) -> str:
    """Why ``root`` has no table: a file, a folder a fairgate command is still writing or
    left unfinished (only its lock: "no results here" sent the user looking elsewhere), or
    no results at all."""
    expected = (
        "expected a folder of results (summary/, flows/ or *.parquet), as fairgate run --out, "
        "fairgate sweep --out and Results.save write"
    )
    if root.is_file():
        return f"a file; {expected}"
    if not (root / store.LOCK).is_file():
        return f"no results here; {expected}"
    holder = store.writer(root)
    if holder is not None:
        return (
            f"no results yet: process {holder}, a fairgate command, is writing them; expected "
            "them when it finishes"
        )
    return (
        "no results: a fairgate command that wrote here stopped before it wrote them (only "
        "its lock is left); expected its results: run the command again"
    )


VIEW_NAME = re.compile(r"[A-Za-z_]\w*")
"""A flat table file named so that SQL takes its name unquoted: a single run's tables
(``queue_series``, ``traces``, ...), a cell network's (``vcs``, ``occupancy``, ``refused``:
``fairgate query`` found "no results here" in a folder of them)."""


def connect(root: str | Path) -> duckdb.DuckDBPyConnection:
    """An in-memory DuckDB connection with one view per table of the store at ``root``."""
    root = Path(root)
    problem = backslash_problem(root)
    if problem:
        raise ScenarioError(f"{clipped(str(root))}: {problem}; rename the folder to read it")
    try:
        views = _views(root.resolve())  # the paths _sandbox allows, as DuckDB compares them
    except (OSError, RuntimeError) as err:  # RuntimeError: symbolic links in a loop
        reason = getattr(err, "strerror", None) or "symbolic links that go round in a loop"
        raise ScenarioError(
            f"{clipped(str(root))}: the system refuses this folder ({reason}); "
            "expected a folder of fairgate results"
        ) from None
    if not views:
        raise ScenarioError(f"{root}: {_why_no_results(root)}")
    con = duckdb.connect(config={"autoinstall_known_extensions": False})
    for name, view in views.items():
        try:
            con.execute(f'CREATE VIEW "{name}" AS {view}')  # "order.parquet" too
        except duckdb.Error as err:
            con.close()
            raise ScenarioError(
                f"{root}: the `{name}` table cannot be read: {_first_line(err)}; a damaged "
                "point's folder can be removed from summary/, flows/ and ports/ and the sweep rerun"
            ) from None
    if "summary" in views:
        _check_finished_points(con, root)
    _sandbox(con, root)
    return con


def _sandbox(con: duckdb.DuckDBPyConnection, root: Path) -> None:
    """Lets ``con`` reach no file outside ``root`` (a ``COPY ... TO`` elsewhere, ``ATTACH``, an
    extension's download, ``read_csv`` of another file) and change no setting: ``SET threads =
    1000000`` hung the command. The views read ``root`` when a query runs, so it stays open."""
    folder = str(root.resolve()).rstrip(os.sep) + os.sep
    as_read = _literal(Path(folder))[1:-1].replace("''", "'")  # the views' glob of it
    con.execute("SET allowed_directories = $dirs", {"dirs": sorted({folder, as_read})})
    con.execute("SET enable_external_access = false")
    con.execute("SET lock_configuration = true")


QUERY_STATEMENTS = frozenset(
    {duckdb.StatementType.SELECT, duckdb.StatementType.EXPLAIN, duckdb.StatementType.MULTI}
)
"""Statements that return rows: SELECT (with WITH, FROM, VALUES, DESCRIBE, SHOW, SUMMARIZE
and UNPIVOT), EXPLAIN, and a PIVOT without ``IN``, which DuckDB runs as two parts."""

WRITING_KEYWORDS = frozenset({"COPY", "EXPORT"})
"""Keywords that write files from inside a statement of those kinds (``EXPLAIN ANALYZE COPY``
runs the copy; so does a ``COPY`` of a PIVOT)."""

EXPECTED_QUERY = (
    "expected one query (SELECT, WITH, FROM, VALUES, DESCRIBE, SHOW, SUMMARIZE, PIVOT, or "
    "EXPLAIN of one): a query reads the store and changes nothing; write its rows with --csv "
    "or --parquet"
)


def check_query(sql: str) -> None:
    """Raises ScenarioError unless ``sql`` is one statement that returns rows and writes no
    file (:data:`QUERY_STATEMENTS`, :data:`WRITING_KEYWORDS`). A second statement was run
    and its rows alone shown; settings and files changed by a query outlived it."""
    try:
        statements = duckdb.extract_statements(sql)
    except duckdb.Error as err:
        raise ScenarioError(f"query: {_duckdb_words(err)}") from None
    if not statements:
        raise ScenarioError(f"query: {NO_ROWS}")
    if len(statements) > 1:
        raise ScenarioError(f"query: got {len(statements)} statements, {EXPECTED_QUERY}")
    keywords = _keywords(sql)
    writing = WRITING_KEYWORDS.intersection(keywords)
    if statements[0].type not in QUERY_STATEMENTS or writing:
        word = min(writing) if writing else (keywords[0] if keywords else "this")
        raise ScenarioError(f"query: got {_article(word)} {word} statement, {EXPECTED_QUERY}")


def _keywords(sql: str) -> list[str]:
    """The SQL keywords of ``sql`` in upper case, in order (not words in strings, quoted
    names or comments)."""
    tokens = duckdb.tokenize(sql)
    ends = [start for start, _ in tokens[1:]] + [len(sql)]
    return [
        sql[start:end].split()[0].upper()
        for (start, kind), end in zip(tokens, ends, strict=True)
        if kind == duckdb.token_type.keyword and sql[start:end].split()
    ]


def _outside_hint(err: BaseException) -> str:
    """Why a file outside the store cannot be read (:func:`_sandbox`), after DuckDB's words."""
    if "disabled by configuration" in str(err):
        return "; a query reads only the store's files (read others with DuckDB itself)"
    return ""


def _article(word: str) -> str:
    return "an" if word[:1] in "AEIOU" else "a"


def _check_finished_points(con: duckdb.DuckDBPyConnection, root: Path) -> None:
    """Refuses a store where a point that finished lacks its flows or ports file
    (:func:`store.check_point_files`)."""
    try:
        finished = con.sql("SELECT DISTINCT point FROM summary WHERE status = 'ok'").fetchall()
        store.check_point_files(root, {str(key) for (key,) in finished})
    except duckdb.Error as err:
        con.close()
        raise ScenarioError(
            f"{root}: the `summary` table cannot be read: {_first_line(err)}"
        ) from None
    except ScenarioError:
        con.close()
        raise


def _first_line(err: BaseException) -> str:
    """DuckDB's message without the SQL it echoes after it (fairgate's own, not the user's)."""
    return str(err).splitlines()[0]


NO_ROWS = "got a statement that returns no rows, expected a query such as SELECT ..."


@contextmanager
def rows(
    root: str | Path, sql: str, batch_rows: int = 65_536
) -> Iterator[tuple[pa.Schema, Iterator[pa.RecordBatch]]]:
    """The schema and the rows of ``sql`` over the store at ``root``, streamed in Arrow batches
    of at most ``batch_rows``, so that a result larger than memory can still be written out.
    A bad query raises ScenarioError with DuckDB's message, here or while the batches are read;
    Ctrl-C (or SIGTERM under the CLI) stops it (:func:`_interrupted_by_signals`).
    """
    check_query(text_value(sql, "sql", "SQL text (str)"))
    con = connect(path_value(root, "root"))
    try:
        with _interrupted_by_signals(con):
            try:
                relation = con.sql(sql)
                if relation is None:
                    raise ScenarioError(f"query: {NO_ROWS}")
                reader = relation.to_arrow_reader(batch_rows)
            except (duckdb.Error, RuntimeError) as err:
                raise _bad_query(err, con) from None
            yield reader.schema, _read(reader)
    finally:
        con.close()


def _read(reader: pa.RecordBatchReader) -> Iterator[pa.RecordBatch]:
    """The reader's batches; an error DuckDB meets while computing them (Arrow passes it on
    as an OSError) is a bad query."""
    batches = iter(reader)
    while True:
        try:
            batch = next(batches)
        except StopIteration:
            return
        except (duckdb.Error, pa.ArrowException, OSError, RuntimeError) as err:
            raise _bad_query(err) from None
        yield batch


def _bad_query(err: Exception, con: duckdb.DuckDBPyConnection | None = None) -> Exception:
    """What an error out of DuckDB stands for: a stop DuckDB turned into "Query interrupted",
    a bad query (ScenarioError with DuckDB's words), or, for any other RuntimeError, itself."""
    if isinstance(err, duckdb.InterruptException) or "query interrupted" in str(err).lower():
        return stop_received()  # type: ignore[return-value]
    if isinstance(err, RuntimeError) and not isinstance(err, duckdb.Error):
        return err
    unknown_table = isinstance(err, duckdb.CatalogException) and "Table with name" in str(err)
    if unknown_table and con is not None:
        return ScenarioError(f"query: {_unknown_table(err, con)}")
    return ScenarioError(f"query: {_duckdb_words(err)}{_outside_hint(err)}")


def _unknown_table(err: duckdb.CatalogException, con: duckdb.DuckDBPyConnection) -> str:
    """DuckDB's words for a name it does not know, with the tables the folder has; its own
    guess is dropped when it is one of DuckDB's catalog tables (`Did you mean "pg_sequences"?`
    for `SELECT * FROM nosuch`)."""
    tables = [name for (name,) in con.execute(TABLES_HERE).fetchall()]
    words = _duckdb_words(err)
    guess = re.search(r'\nDid you mean "([^"]*)"\?', words)
    if guess and guess.group(1) not in tables:
        words = words.replace(guess.group(0), "")
    return f"{words}; the tables here: {', '.join(tables)}"


TABLES_HERE = "SELECT view_name FROM duckdb_views() WHERE NOT internal ORDER BY view_name"


def _duckdb_words(err: Exception) -> str:
    """DuckDB's message, its tabs (which indent a list of candidate functions) as spaces: the
    error line shows a tab as `\\t`, as it shows every character a terminal acts on."""
    return str(err).replace("\t", "  ")


STOP_SIGNALS = frozenset({signal.SIGINT, signal.SIGTERM, signal.SIGHUP})


@contextmanager
def _interrupted_by_signals(con: duckdb.DuckDBPyConnection) -> Iterator[None]:
    """Within the block, Ctrl-C (and SIGTERM or SIGHUP where they stop the program) interrupt
    the query ``con`` runs. DuckDB, running a query in the main thread, missed about one
    Ctrl-C in eight and ran on (`SELECT sum(range) FROM range(10^12)`: minutes). The signal's
    number also reaches a pipe (Python's wakeup file descriptor, written by the signal
    handler itself, whatever the main thread is doing), which a thread watches to call
    ``con.interrupt()``. Outside the main thread no handler runs: nothing is set up."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    read_end, write_end = os.pipe()
    os.set_blocking(write_end, False)
    previous = signal.set_wakeup_fd(write_end, warn_on_full_buffer=False)
    done = threading.Event()
    watcher = threading.Thread(target=_interrupt_on_a_stop, args=(read_end, con, done), daemon=True)
    watcher.start()
    try:
        yield
    finally:
        signal.set_wakeup_fd(previous)
        done.set()
        watcher.join()
        os.close(read_end)
        os.close(write_end)


def _interrupt_on_a_stop(fd: int, con: duckdb.DuckDBPyConnection, done: threading.Event) -> None:
    while not done.is_set():
        ready, _, _ = select.select([fd], [], [], 0.1)
        if ready and STOP_SIGNALS.intersection(os.read(fd, 64)) and not done.is_set():
            with suppress(duckdb.Error):
                con.interrupt()


def query(root: str | Path, sql: str) -> pd.DataFrame:
    """Runs ``sql`` over the store at ``root`` and returns its rows; a bad query raises
    ScenarioError with DuckDB's message."""
    with rows(root, sql) as (schema, batches):
        return pa.Table.from_batches(list(batches), schema).to_pandas()

"""What the CLI and the figures show of a run: cells of printed tables and legends clipped to a
width, and progress bars that cost nothing when they are off."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas as pd

PRINTED_CELL = 40
"""The widest cell of a table the CLI prints: a longer name or value ends in "..." there (a
5,000-character flow name made every row of the table 5,000 columns wide); the files hold it
whole."""


def cell(text: object, width: int = PRINTED_CELL) -> str:
    """``text`` in a printed table's cell or a figure's legend: at most ``width`` characters,
    a longer one ending in "..." (as pandas clips a table's cells)."""
    text = str(text)
    return text if len(text) <= width else text[: width - 3] + "..."


def figure_text(text: object, width: int = PRINTED_CELL) -> str:
    """``text`` from a run (a scenario's, flow's or port's name) as a figure shows it: clipped
    as :func:`cell` does, its ``$`` escaped, as Matplotlib reads the text between two as
    mathematics (a flow named ``$\\frac{1}$`` stopped ``fairgate run --plot`` with a
    traceback after the run), and a leading ``_`` after a space, as a legend leaves out the
    labels that begin with one (a flow named ``_f1`` was drawn without its entry)."""
    shown = cell(text, width).replace("$", r"\$")
    return " " + shown if shown.startswith("_") else shown


class _Silent:
    """A progress bar that shows nothing."""

    n = 0

    def update(self, count: float = 1) -> None:
        self.n += count

    def set_postfix(self, *args: object, **kwargs: object) -> None:
        pass

    def close(self) -> None:
        pass

    def __enter__(self) -> _Silent:
        return self

    def __exit__(self, *exc: object) -> None:
        pass


def progress_bar(progress: bool, **options: Any) -> Any:
    """A tqdm bar, or when ``progress`` is off one that shows nothing and, unlike
    ``tqdm(disable=True)``, creates no multiprocessing lock: a pool's worker running
    fairgate is terminated without cleanup, and the resource tracker then warned at exit of
    the lock it had left. A ``progress`` that is not a bool (numpy's too) raises
    ScenarioError: ``progress="no"`` drew a bar, as Python reads any text but "" as true."""
    if not _switch(progress):
        return _Silent()
    from tqdm import tqdm

    return tqdm(**options)


def simulated_bar(progress: bool, total_s: float, desc: str) -> Any:
    """:func:`progress_bar` of simulated seconds, shown once a run has taken 2 s."""
    return progress_bar(
        progress,
        total=total_s,
        unit="s",
        desc=desc,
        delay=2.0,
        leave=False,
        bar_format="{l_bar}{bar}| {n:.3g}/{total:.3g} s simulated [{elapsed}<{remaining}]",
    )


def _switch(progress: object) -> bool:
    if isinstance(progress, bool):
        return progress
    import numpy as np

    if isinstance(progress, np.bool_):
        return bool(progress)
    from fairgate._core import ScenarioError
    from fairgate.checks import shown

    raise ScenarioError(f"progress: got {shown(progress)}, expected True or False")


def printed_table(table: pd.DataFrame) -> str:
    """``table`` as the CLI prints it: no index, cells clipped at PRINTED_CELL characters."""
    return table.to_string(index=False, max_colwidth=PRINTED_CELL)

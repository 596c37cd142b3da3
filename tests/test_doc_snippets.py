"""The Python examples of the README and the docs run as printed, each in a new folder.

A snippet that used a name it never defined (`results` on the fluid page) or a placeholder
(`fg.sweep(..., table="flows")`) could not be pasted into a script. Every ``python`` block of
the docs is either run here or listed in NOT_RUN with the reason.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
BLOCK = re.compile(r"^```python\n(.*?)^```", re.MULTILINE | re.DOTALL)

NOT_RUN = {
    ("docs/results.md", 0): "reads a store at DIR, a placeholder for the user's own",
}
"""Blocks that cannot run as printed, by file and position, with the reason."""


def python_blocks() -> dict[tuple[str, int], str]:
    """Every ``python`` block of the docs, keyed by its file (from the root) and position."""
    blocks = {}
    for doc in DOCS:
        text = doc.read_text(encoding="utf-8")
        for index, block in enumerate(BLOCK.findall(text)):
            blocks[(str(doc.relative_to(ROOT)), index)] = block
    return blocks


BLOCKS = python_blocks()


def test_every_block_not_run_is_still_there():
    assert set(NOT_RUN) <= set(BLOCKS), set(NOT_RUN) - set(BLOCKS)


@pytest.mark.parametrize(
    "where", [key for key in BLOCKS if key not in NOT_RUN], ids=lambda key: f"{key[0]}#{key[1]}"
)
def test_a_documented_example_runs_as_printed(tmp_path: Path, where: tuple[str, int]):
    (tmp_path / "scenarios").symlink_to(ROOT / "scenarios")
    script = tmp_path / "example.py"
    script.write_text(BLOCKS[where], encoding="utf-8")
    done = subprocess.run(
        [sys.executable, script], cwd=tmp_path, capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, done.stderr[-3000:]

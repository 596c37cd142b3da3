"""DEVELOPERS.md names the tests that keep each promise: every file and test it names exists."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "DEVELOPERS.md"
# `path::name`, or `::name` continuing the last path named before it in the same line.
NAMED = re.compile(r"`((?:tests|crates)/[\w/.-]+)?(?:::(\w+)(\*)?)?`")


def named_tests() -> list[tuple[str, str | None, bool]]:
    """(file, test name or None, whether the name is a prefix) for each reference in the doc."""
    found = []
    for line in DOC.read_text(encoding="utf-8").splitlines():
        current = None
        for path, name, star in NAMED.findall(line):
            current = path or current
            if current and (path or name):
                found.append((current, name or None, bool(star)))
    return found


def test_the_developer_guide_names_existing_files_and_tests():
    references = named_tests()
    assert len(references) > 20
    for path, name, prefix in references:
        source = ROOT / path
        assert source.exists(), f"DEVELOPERS.md names {path}, which does not exist"
        if name is None:
            continue
        text = source.read_text(encoding="utf-8")
        ending = r"\w*" if prefix else r"\b"
        pattern = rf"(?:def|fn) {name}{ending}"
        assert re.search(pattern, text), f"DEVELOPERS.md names {path}::{name}, not found there"


def test_the_readme_links_the_developer_guide():
    assert "DEVELOPERS.md" in (ROOT / "README.md").read_text(encoding="utf-8")

"""The product cites public works by key ([Keshav91, §2.1], docs/references.md), never the
project's working material: source-text file names, extraction section numbers, acceptance
labels or machine paths."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PRODUCT_DIRS = ["crates", "python", "docs", "scenarios", "tests"]
PRODUCT_FILES = ["README.md", "DEVELOPERS.md", "Makefile", "Cargo.toml", "pyproject.toml"]
SUFFIXES = {".rs", ".py", ".md", ".toml", ".csv", ".txt", ".json"}
SKIP_PARTS = {"target", ".venv", "__pycache__", ".pytest_cache"}

FORBIDDEN = {
    "source-text number": re.compile(r"\bseeds?[ -]?00[0-9]", re.IGNORECASE),
    "source-text file name": re.compile(r"\b00[0-9]_(?:[0-9a-f]{16}|\*)\.txt"),
    "extraction file name": re.compile(r"\b00[0-9]_[a-z_]+\.md\b"),
    "extraction section": re.compile(
        r"\bspec(?:'s)?\s+(?:00[0-9]\b|§|sections?\s+[0-9]|A[0-9]|[0-9]+\.[0-9])", re.IGNORECASE
    ),
    "acceptance label": re.compile(
        r"(?:\bspec\s+|\()A[0-9]{1,2}\b|\bA[0-9]{1,2}(?:'s\b|\s+decision|:)"
        r"|[,;]\s*A[0-9]{1,2}\)|\|\s*A[0-9]{1,2}\s*\|"
    ),
    "machine path": re.compile(r"(?<![\w.])/(?:work|tmp)/"),
}

# This file names the patterns it forbids.
SELF = Path(__file__).resolve()


def product_files() -> list[Path]:
    """Every text file of the product: sources, docs, scenarios, tests and build files."""
    files = [ROOT / name for name in PRODUCT_FILES if (ROOT / name).is_file()]
    for folder in PRODUCT_DIRS:
        for path in (ROOT / folder).rglob("*"):
            if SKIP_PARTS.intersection(path.relative_to(ROOT).parts):
                continue
            if path.is_file() and path.suffix in SUFFIXES and path.resolve() != SELF:
                files.append(path)
    return files


def violations(text: str) -> list[str]:
    """Each forbidden citation in `text`, as 'line N: kind: excerpt'."""
    found = []
    for number, line in enumerate(text.splitlines(), start=1):
        for kind, pattern in FORBIDDEN.items():
            match = pattern.search(line)
            if match:
                found.append(f"line {number}: {kind}: {match.group(0)!r}")
    return found


def test_the_product_cites_public_works_only() -> None:
    files = product_files()
    assert len(files) > 100, "the scan found too few files to be looking at the product"
    report = []
    for path in files:
        text = path.read_text(encoding="utf-8", errors="replace")
        report += [f"{path.relative_to(ROOT)} {v}" for v in violations(text)]
    assert not report, "working-material citations remain:\n" + "\n".join(report)


def test_the_patterns_catch_each_kind_and_spare_packet_names() -> None:
    caught = [
        "seed 004 section 2.1",
        "Seed-002 frame disciplines",
        "(`004_69e3e87eb3f3727b.txt`, Keshav)",
        "spec `002_dfba.md` sections 2 and 7",
        "see spec 004 section 5",
        "Tolerances (spec 4.2)",
        "(A1: what the chapter 6 simulations did)",
        "| A9 |",
        "Under A5's geometry",
        "`/work/shared/spec`",
    ]
    for line in caught:
        assert violations(line), line
    spared = [
        "Service order: A1, B1, A2, B2; v goes 0, 0, 100, 300.",
        "After A1 is sent v = 100; a new C packet goes before A2 (200) and B (300).",
        "[Keshav91, §2.1] read literally",
        "the same configuration and seed give the same run",
    ]
    for line in spared:
        assert not violations(line), line


def test_every_cited_key_has_a_reference_entry() -> None:
    references = (ROOT / "docs" / "references.md").read_text(encoding="utf-8")
    keys = set(re.findall(r"^\| (\S+(?: [0-9]+)?) \|", references, flags=re.MULTILINE))
    cited = set()
    for path in product_files():
        text = path.read_text(encoding="utf-8", errors="replace")
        cited |= set(re.findall(r"\[((?:[A-Z][A-Za-z]+[0-9]{2}[a-z]?)|RFC [0-9]+)[,\]]", text))
    assert {"Keshav91", "Vaidyanathan99", "Byun07", "Goyal98", "Chung06"} <= keys
    assert not cited - keys, f"cited without an entry in docs/references.md: {cited - keys}"

"""Every registered kind (queue disciplines and filters, buffer managers, sources) has a page in
docs/models/ with a Validation section, and every page there names a registered kind."""

from __future__ import annotations

import re
from pathlib import Path

import fairgate as fg

MODELS = Path(__file__).resolve().parent.parent / "docs" / "models"


def registered() -> set[str]:
    kinds = fg.registry()
    return set(kinds["qdisc"]) | set(kinds["buffer"]) | set(kinds["source"])


def names(page: str, kind: str) -> bool:
    """Whether `page` names `kind` as code (`kind`) or as a scenario string ("kind")."""
    return re.search(rf"[`\"]{re.escape(kind)}[`\"]", page) is not None


def pages() -> dict[str, str]:
    return {p.name: p.read_text(encoding="utf-8") for p in sorted(MODELS.glob("*.md"))}


def test_every_registered_kind_has_a_page_with_a_validation_section() -> None:
    validated = [text for text in pages().values() if re.search(r"^## Validation", text, re.M)]
    missing = sorted(k for k in registered() if not any(names(text, k) for text in validated))
    assert not missing, f"kinds without a docs/models page that has a Validation section: {missing}"


def test_every_page_names_a_registered_kind() -> None:
    kinds = registered()
    orphans = [name for name, text in pages().items() if not any(names(text, k) for k in kinds)]
    assert not orphans, f"docs/models pages that name no registered kind: {orphans}"

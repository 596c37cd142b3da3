"""docs/extending.md is literally true: following it adds a queue discipline that builds, passes
its own unit test and runs from a scenario. The default suite checks the page against the
tree; the slow test copies the crate, applies the page's steps and builds the copy."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PAGE = ROOT / "docs" / "extending.md"
BLOCK = re.compile(r"^( *)```(\w+) (\S+)(?: ([^\n]+))?\n(.*?)^\1```$", re.MULTILINE | re.DOTALL)

PROBE = r"""
use fairgate_core::scenario;

const SCENARIO: &str = r#"
name = "probe"
[simulation]
duration = "2s"
seed = 1
[topology]
kind = "dumbbell"
senders = 1
bottleneck = { rate = "10Mbps", delay = "10ms", queue = { kind = "every_nth", nth = 10 } }
access = { rate = "100Mbps", delay = "1ms" }
[[flows]]
name = "cbr"
src = "s0"
dst = "d0"
source = { kind = "cbr", rate = "2Mbps", size = 1000 }
"#;

#[test]
fn the_new_kind_runs_from_a_scenario() {
    let parsed = scenario::parse(SCENARIO, &[]).expect("the scenario parses");
    let mut sim = scenario::build(&parsed).expect("the scenario builds");
    sim.run();
    assert!(sim.conservation_violations().is_empty());
    let typo = SCENARIO.replace("nth = 10", "nht = 10");
    let err = scenario::parse(&typo, &[]).expect_err("an unknown key is an error");
    assert!(err.to_string().contains("nht"), "{err}");
}
"""


def steps() -> list[tuple[str, str, str | None, str]]:
    """(language, path, insertion mark or None for a whole file, text) of each step's block."""
    found = []
    for indent, language, path, mark, body in BLOCK.findall(PAGE.read_text(encoding="utf-8")):
        text = "\n".join(line[len(indent) :] for line in body.splitlines()) + "\n"
        found.append((language, path, mark or None, text))
    return found


def apply(root: Path) -> None:
    """Carries out the page's steps under `root`: whole files are written, `+MARK` blocks are
    inserted after the last line of the target that contains MARK."""
    for _, path, mark, text in steps():
        target = root / path
        if mark is None:
            target.write_text(text, encoding="utf-8")
            continue
        lines = target.read_text(encoding="utf-8").splitlines(keepends=True)
        needle = mark.lstrip("+")
        last = max(i for i, line in enumerate(lines) if needle in line)
        lines.insert(last + 1, text)
        target.write_text("".join(lines), encoding="utf-8")


def test_the_page_has_the_four_steps_and_they_fit_the_tree() -> None:
    found = steps()
    assert [(lang, mark) for lang, _, mark, _ in found] == [
        ("rust", None),
        ("rust", "+pub mod"),
        ("rust", "+=>"),
        ("markdown", None),
    ]
    (_, new_file, _, code), (_, module_list, _, mod_line), (_, registry, _, entry), page = found
    assert not (ROOT / new_file).exists(), "the example must not be part of the product"
    assert not (ROOT / page[1]).exists()
    assert mod_line.strip() == f"pub mod {Path(new_file).stem};"
    assert "pub mod " in (ROOT / module_list).read_text()
    registry_text = (ROOT / registry).read_text()
    shape = re.compile(r'^\s+"(\w+)" => (\w+)\(super::[\w:]+\),$')
    assert shape.match(entry.rstrip("\n")), entry
    assert any(shape.match(line) for line in registry_text.splitlines())
    assert "## Validation" in page[3] and 'kind = "every_nth"' in page[3]
    for module in re.findall(r"^use crate::([\w:]+)", code, flags=re.MULTILINE):
        parts = module.split("::")[:-1]
        src = ROOT / "crates" / "fairgate-core" / "src"
        assert (src.joinpath(*parts).with_suffix(".rs")).exists() or (
            src.joinpath(*parts) / "mod.rs"
        ).exists(), module


@pytest.mark.slow
def test_following_the_page_builds_a_working_discipline(tmp_path: Path) -> None:
    copy = tmp_path / "fairgate"
    copy.mkdir()
    for name in ["Cargo.toml", "Cargo.lock"]:
        shutil.copy(ROOT / name, copy / name)
    for crate in ["fairgate-core", "fairgate-py"]:
        shutil.copytree(
            ROOT / "crates" / crate,
            copy / "crates" / crate,
            ignore=shutil.ignore_patterns("target"),
        )
    shutil.copytree(ROOT / "docs", copy / "docs")
    apply(copy)
    (copy / "crates" / "fairgate-core" / "tests" / "extending_probe.rs").write_text(PROBE)
    env = dict(os.environ, CARGO_TARGET_DIR=str(ROOT / "target" / "extending"))
    command = ["cargo", "test", "--offline", "-q", "-p", "fairgate-core", "--lib", "every_nth"]
    unit = subprocess.run(command, cwd=copy, env=env, capture_output=True, text=True)
    assert unit.returncode == 0, unit.stdout + unit.stderr
    assert "1 passed" in unit.stdout
    probe = ["cargo", "test", "--offline", "-q", "-p", "fairgate-core", "--test", "extending_probe"]
    run = subprocess.run(probe, cwd=copy, env=env, capture_output=True, text=True)
    assert run.returncode == 0, run.stdout + run.stderr

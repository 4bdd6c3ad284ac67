"""MADR front matter is YAML (PyYAML's safe loader), and hostile YAML is refused.

Valid MADR that a hand-written subset refused (a block scalar, nested lists) is
imported; an alias bomb, a ``!!python/...`` tag, over-deep nesting and oversized
front matter are each refused with one line naming the file and the line.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from kgai_tui.core.onboarding.adr_import import import_adrs
from kgai_tui.core.onboarding.adr_parse import parse_adr
from kgai_tui.core.onboarding.frontmatter import (
    MAX_BYTES,
    MAX_DEPTH,
    FrontMatterError,
    parse_front_matter,
)
from kgai_tui.core.write.writes import init_store

CLI = [sys.executable, "-m", "kgai_tui"]

MADR_BLOCK = """\
---
status: accepted
date: 2024-03-01
decision-makers:
  - Ana Ruiz
  - - Bo Chen
    - "Cy Park"
consulted: |
  the support team
  the billing team: both
informed:
  - team: drivers
    people: [Dee, [Eve, Fay]]
tags: [[search, opensearch], ops]
---
# Search shipments with OpenSearch

## Context and Problem Statement

Support agents search by partial address.

## Decision Outcome

Chosen option: OpenSearch.
"""

BOMB = (
    "---\n"
    + "".join(
        [
            'a: &a ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]\n',
            *(
                f"{chr(c)}: &{chr(c)} [{', '.join(['*' + chr(c - 1)] * 9)}]\n"
                for c in range(ord("b"), ord("j"))
            ),
        ]
    )
    + "---\n# 7. Laughs\n"
)

PYTHON_TAG = """\
---
status: accepted
consulted:
  - - !!python/object/apply:os.system ["echo pwned"]
---
# 8. Tagged
"""


def lines(text: str) -> list[str]:
    """The text's lines, as the importer splits them."""
    return text.split("\n")


def write_adr(folder: Path, name: str, text: str) -> Path:
    """Write one record into ``folder`` (created)."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text(text, "utf-8")
    return path


def import_cli(folder: Path, store: Path) -> subprocess.CompletedProcess[str]:
    """``kgai-tui import adr FOLDER --store STORE --json`` in a fresh process."""
    return subprocess.run(
        [*CLI, "import", "adr", str(folder), "--store", str(store), "--json"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


@pytest.fixture
def store(tmp_path: Path) -> Path:
    """An empty store whose actor is "importer"."""
    root = tmp_path / "store"
    init_store(root, "importer")
    return root


def test_block_scalar_and_nested_lists_are_read() -> None:
    fm = parse_front_matter(lines(MADR_BLOCK))
    assert fm is not None and fm.body_start == 15
    values = {k: f.value for k, f in fm.fields.items()}
    assert values["date"] == "2024-03-01"  # as written, not a datetime.date
    assert values["consulted"] == "the support team\nthe billing team: both\n"
    assert values["decision-makers"] == ["Ana Ruiz", ["Bo Chen", "Cy Park"]]
    assert values["informed"] == [
        {"team": "drivers", "people": ["Dee", ["Eve", "Fay"]]}
    ]
    assert {k: f.line for k, f in fm.fields.items()} == {
        "status": 2,
        "date": 3,
        "decision-makers": 4,
        "consulted": 8,
        "informed": 11,
        "tags": 14,
    }
    rec = parse_adr(MADR_BLOCK, "0022-search.md")
    assert (rec.number, rec.date, rec.status, rec.style) == (
        22,
        "2024-03-01",
        "accepted",
        "madr",
    )
    assert rec.deciders == ("Ana Ruiz", "Bo Chen", "Cy Park")


def test_madr_with_block_scalar_imports(store: Path, tmp_path: Path) -> None:
    folder = tmp_path / "adr"
    write_adr(folder, "0022-search-shipments.md", MADR_BLOCK)
    result = import_adrs(store, folder)
    assert result.skipped == ()
    (row,) = result.adrs
    assert (row.outcome, row.author, row.date) == (
        "recorded",
        "Ana Ruiz, Bo Chen, Cy Park",
        "2024-03-01",
    )


def test_alias_bomb_is_refused_with_one_line(store: Path, tmp_path: Path) -> None:
    with pytest.raises(FrontMatterError) as info:
        parse_front_matter(lines(BOMB))
    assert info.value.line == 3
    assert info.value.message == "aliases ('*a') are not supported"
    folder = tmp_path / "adr"
    write_adr(folder, "0007-laughs.md", BOMB)
    done = import_cli(folder, store)
    assert done.returncode == 0, done.stderr
    assert done.stderr == (
        f"kgai-tui: warning: skipped {folder / '0007-laughs.md'}:3: front matter: "
        "aliases ('*a') are not supported\n"
    )
    obj = json.loads(done.stdout)
    assert obj["adrs"] == [] and len(obj["skipped"]) == 1


def test_python_tag_is_refused(store: Path, tmp_path: Path) -> None:
    with pytest.raises(FrontMatterError) as info:
        parse_front_matter(lines(PYTHON_TAG))
    assert info.value.line == 4
    assert info.value.message == (
        "unsupported YAML tag 'tag:yaml.org,2002:python/object/apply:os.system'"
    )
    folder = tmp_path / "adr"
    write_adr(folder, "0008-tagged.md", PYTHON_TAG)
    done = import_cli(folder, store)
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    assert done.stderr.count("\n") == 1
    assert "0008-tagged.md:4: front matter: unsupported YAML tag" in done.stderr
    assert "pwned" not in done.stdout + done.stderr


def test_other_hostile_front_matter_is_refused() -> None:
    for text, line, message in (
        ("---\n" + "a: b\n" * (MAX_BYTES // 5 + 1) + "---\n", 1, "larger than 64 KB"),
        (
            "---\na: " + "[" * (MAX_DEPTH + 5) + "]" * (MAX_DEPTH + 5) + "\n---\n",
            2,
            f"nested deeper than {MAX_DEPTH} levels",
        ),
        ("---\na: !!set {x, y}\n---\n", 2, "unsupported YAML tag"),
        ("---\n[a, b]: c\n---\n", 2, "a key must be a plain string"),
        ("---\na: !custom x\n---\n", 2, "unsupported YAML tag '!custom'"),
    ):
        with pytest.raises(FrontMatterError) as info:
            parse_front_matter(lines(text))
        assert (info.value.line, message in info.value.message) == (line, True), (
            info.value.line,
            info.value.message,
        )

"""``import adr``: 30 fixture records (adr-tools and MADR 2-4) through the write path.

The fixtures are copied out of the repository first, so git (which would supply a
fallback author and date once they are committed) does not change what is imported.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from kgai_tui.core.engine.open import open_engine
from kgai_tui.core.errors import UsageError
from kgai_tui.core.onboarding.adr_import import import_adrs
from kgai_tui.core.onboarding.adr_map import parse_adr_map
from kgai_tui.core.onboarding.adr_parse import AdrSyntaxError, parse_adr
from kgai_tui.core.onboarding.frontmatter import FrontMatterError, parse_front_matter
from kgai_tui.core.reads.health import doctor_obj
from kgai_tui.core.reads.kg import conflicts_obj, heads_obj, history_obj
from kgai_tui.core.wire.props import parse_props
from kgai_tui.core.write.writes import init_store, record

FIXTURES = Path(__file__).parent / "fixtures" / "adr"
CLI = [sys.executable, "-m", "kgai_tui"]
BROKEN = "0031-drivers-app-works-offline.md"


def kgai(*args: str) -> subprocess.CompletedProcess[str]:
    """Run the CLI in a fresh process."""
    return subprocess.run(
        [*CLI, *args], capture_output=True, text=True, timeout=60, check=False
    )


def log_bytes(root: Path) -> dict[str, bytes]:
    """Every shard's bytes, by name."""
    return {p.name: p.read_bytes() for p in sorted((root / "log").iterdir())}


@pytest.fixture
def adr_dir(tmp_path: Path) -> Path:
    """A copy of the fixture folder outside any git work tree."""
    target = tmp_path / "docs" / "adr"
    shutil.copytree(FIXTURES, target)
    return target


@pytest.fixture
def store(tmp_path: Path) -> Path:
    """An empty store whose actor is "importer"."""
    root = tmp_path / "store"
    init_store(root, "importer")
    return root


@pytest.fixture
def imported(store: Path, adr_dir: Path) -> tuple[Path, Any]:
    """The store after one import of the fixtures."""
    return store, import_adrs(store, adr_dir)


def _titles(rows: list[dict[str, Any]]) -> list[str]:
    return [r["title"].split(":")[0] for r in rows]


# ---------------------------------------------------------------- the store


def test_thirty_records_import_and_the_broken_one_is_skipped(
    imported: tuple[Path, Any],
) -> None:
    store, result = imported
    assert result.count("recorded") == 30
    assert [a.label for a in result.adrs][:3] == ["ADR-0001", "ADR-0002", "ADR-0003"]
    (skipped,) = result.skipped
    assert skipped.file.endswith(f"madr/{BROKEN}")
    assert skipped.line == 4
    assert "unterminated flow list" in skipped.message
    engine = open_engine(store)
    assert len([d for d in engine.projection.dec_hash if d]) == 30


def test_an_import_reads_the_store_through_the_read_model(
    store: Path, adr_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What exists and what a dry run would record are asked of the read model,
    one lookup each, never the whole store (at 1M it was read whole: every
    decision id in one set). The outcomes are the same."""
    from kgai_tui.core.engine import open as engine_open
    from kgai_tui.core.model.open import open_model

    first = import_adrs(store, adr_dir, dry_run=True)
    open_model(store).close()

    def no_replay(*_: Any, **__: Any) -> Any:
        raise AssertionError("the whole store was opened")

    with monkeypatch.context() as m:
        m.setattr(engine_open, "open_engine", no_replay)
        dry = import_adrs(store, adr_dir, dry_run=True)
        done = import_adrs(store, adr_dir)
        again = import_adrs(store, adr_dir, dry_run=True)
    assert dry.to_obj() == first.to_obj() and dry.count("would record") == 30
    assert done.count("recorded") == 30
    assert again.count("already recorded") == 30


def test_supersession_chain_reads_in_date_order(imported: tuple[Path, Any]) -> None:
    store, _ = imported
    p = open_engine(store).projection
    history = history_obj(p, "adr:ADR-0003")["decisions"]
    assert _titles(history) == ["ADR-0003", "ADR-0011", "ADR-0019"]
    assert [r["when"][:10] for r in history] == [
        "2022-02-02",
        "2022-09-05",
        "2023-05-22",
    ]
    assert [r["is_head"] for r in history] == [False, False, True]
    middle = history_obj(p, "adr:ADR-0011")["decisions"]
    assert _titles(middle) == ["ADR-0011", "ADR-0019"]
    assert [r["is_head"] for r in middle] == [False, True]
    element = p.element(history_obj(p, "adr:ADR-0003")["element_id"])
    assert element is not None
    props = parse_props(element[2])
    assert props["status"] == "superseded by ADR-0011"


def test_no_conflicts_and_every_event_verifies(imported: tuple[Path, Any]) -> None:
    store, _ = imported
    engine = open_engine(store)
    assert conflicts_obj(engine.projection) == {
        "conflicts": None,
        "count": 0,
        "ok": True,
    }
    report = doctor_obj(engine)
    assert report["ok"] and report["problems"] is None
    assert all(
        e.decoded.hash_ok and e.decoded.decision_id_ok
        for e in engine.all_shard_events()
    )


def test_amendments_touch_without_replacing(imported: tuple[Path, Any]) -> None:
    store, _ = imported
    p = open_engine(store).projection
    rows = history_obj(p, "adr:ADR-0005")["decisions"]
    assert _titles(rows) == ["ADR-0005", "ADR-0009", "ADR-0023"]
    assert [r["is_head"] for r in rows] == [True, False, False]
    heads = heads_obj(p, "adr:ADR-0002")["heads"][0]["decisions"]
    assert [d["title"].split(":")[0] for d in heads] == ["ADR-0002"]


def test_authors_dates_refs_and_statuses(imported: tuple[Path, Any]) -> None:
    store, result = imported
    by_label = {a.label: a for a in result.adrs}
    assert by_label["ADR-0023"].author == "Tomás Ferreira, Priya Nair"  # flow list
    assert by_label["ADR-0025"].author == "Priya Nair, Jonas Berg, Mei Lin"  # block
    assert by_label["ADR-0016"].author == "Priya Nair, Jonas Berg"  # MADR 2 bullet
    engine = open_engine(store)
    p = engine.projection
    adr1 = history_obj(p, "adr:ADR-0001")["decisions"][0]
    assert adr1["author"] == "importer"  # no decision makers, no git: the actor
    event = engine.event_for(p.dec_hash[p.dec_index[adr1["id"]]])
    assert event is not None and event.decision is not None
    assert event.decision.refs == "adr:adr/nygard/0001-record-architecture-decisions.md"
    for label, status in (("ADR-0021", "deprecated"), ("ADR-0024", "rejected")):
        eid = history_obj(p, f"adr:{label}")["element_id"]
        assert f"status={status}" in p.element(eid)[2]  # type: ignore[index]


def test_warnings_name_broken_links_and_the_missing_date(
    imported: tuple[Path, Any],
) -> None:
    _, result = imported
    text = "\n".join(result.warnings)
    for missing in ("ADR-0042", "ADR-0040", "ADR-0045"):
        assert missing in text
    assert "0010-timestamps-are-utc.md: no date" in text
    order = [a.label for a in result.adrs]
    assert order.index("ADR-0009") < order.index("ADR-0010") < order.index("ADR-0011")


def test_reimport_writes_nothing(imported: tuple[Path, Any], adr_dir: Path) -> None:
    store, _ = imported
    before = log_bytes(store)
    done = kgai("import", "adr", str(adr_dir), "--store", str(store), "--json")
    assert done.returncode == 0, done.stderr
    obj = json.loads(done.stdout)
    assert {a["outcome"] for a in obj["adrs"]} == {"already recorded"}
    assert len(obj["adrs"]) == 30
    assert log_bytes(store) == before


def test_dry_run_writes_nothing(store: Path, adr_dir: Path) -> None:
    before = log_bytes(store)
    result = import_adrs(store, adr_dir, dry_run=True)
    assert result.count("would record") == 30
    assert log_bytes(store) == before
    done = kgai("import", "adr", str(adr_dir), "--store", str(store), "--dry-run")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("dry run — nothing written\n")
    assert "○ would record ADR-0019" in done.stdout
    assert log_bytes(store) == before


def test_cli_reports_the_unparseable_file_with_its_line(
    store: Path, adr_dir: Path
) -> None:
    done = kgai("import", "adr", str(adr_dir), "--store", str(store), "--json")
    assert done.returncode == 0, done.stderr
    assert f"{BROKEN}:4: front matter" in done.stderr
    obj = json.loads(done.stdout)
    assert [(s["file"].rsplit("/", 1)[-1], s["line"]) for s in obj["skipped"]] == [
        (BROKEN, 4)
    ]
    assert sum(a["outcome"] == "recorded" for a in obj["adrs"]) == 30


# ---------------------------------------------------------------- --map


def test_map_touches_domain_elements_without_authority(
    store: Path, adr_dir: Path, tmp_path: Path
) -> None:
    record(
        store,
        json.dumps(
            {
                "decision": {
                    "title": "Labels run on the print cluster",
                    "mutations": [
                        {
                            "op": "upsert_element",
                            "kind": "service",
                            "name": "Labels",
                            "props": {"runtime": "print-cluster"},
                        }
                    ],
                }
            }
        ),
    )
    mapping = tmp_path / "adr-map.toml"
    mapping.write_text('"0007" = ["service:Labels", "feature:Tracking"]\n', "utf-8")
    done = kgai(
        "import", "adr", str(adr_dir), "--store", str(store), "--map", str(mapping)
    )
    assert done.returncode == 0, done.stderr
    p = open_engine(store).projection
    rows = history_obj(p, "service:Labels")["decisions"]
    assert [r["title"] for r in rows] == [
        "ADR-0007: Shipping labels are rendered as ZPL",
        "Labels run on the print cluster",
    ]
    assert [r["is_head"] for r in rows] == [False, True]
    assert history_obj(p, "feature:Tracking")["decisions"][0]["is_head"] is False
    assert conflicts_obj(p)["count"] == 0


def test_map_file_validation() -> None:
    assert parse_adr_map({"ADR-7": "a:b", "0007": ["c:d"], "adr-0012": []}) == {
        7: ("a:b", "c:d"),
        12: (),
    }
    with pytest.raises(UsageError, match="names no ADR"):
        parse_adr_map({"seven": ["a:b"]})
    with pytest.raises(UsageError, match="kind:name strings"):
        parse_adr_map({"7": [1]})


# ---------------------------------------------------------------- git fallback


def test_git_supplies_author_and_date(store: Path, tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    adr = repo / "doc" / "adr"
    adr.mkdir(parents=True)
    (adr / "0001-use-git.md").write_text(
        "# 1. Use git\n\n## Status\n\nAccepted\n\n## Context\n\nWe need history.\n"
        "\n## Decision\n\nWe use git.\n",
        "utf-8",
    )
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "Fay Doe",
        "GIT_AUTHOR_EMAIL": "fay@example.com",
        "GIT_AUTHOR_DATE": "2021-05-04T10:00:00+02:00",
        "GIT_COMMITTER_NAME": "Fay Doe",
        "GIT_COMMITTER_EMAIL": "fay@example.com",
    }
    for args in (["init", "-q"], ["add", "."], ["commit", "-q", "-m", "adr"]):
        subprocess.run(["git", *args], cwd=repo, env=env, check=True)
    result = import_adrs(store, adr)
    (row,) = result.adrs
    assert (row.author, row.date) == ("Fay Doe", "2021-05-04T10:00:00+02:00")
    p = open_engine(store).projection
    (dec,) = history_obj(p, "adr:ADR-0001")["decisions"]
    assert (dec["author"], dec["when"]) == ("Fay Doe", "2021-05-04T08:00:00Z")
    event = open_engine(store).events[0]
    assert event.decision is not None
    assert event.decision.refs == "adr:doc/adr/0001-use-git.md"  # relative to the repo


# ---------------------------------------------------------------- parsing


def test_front_matter_subset() -> None:
    fm = parse_front_matter(
        [
            "---",
            "status: 'accepted' # ok",
            'date: "2024-01-02"',
            "deciders: [A, 'B, C', \"D\"]",
            "informed:",
            "  - E",
            "  - F",
            "consulted:",
            "---",
            "# body",
        ]
    )
    assert fm is not None and fm.body_start == 9
    values = {k: f.value for k, f in fm.fields.items()}
    assert values == {
        "status": "accepted",
        "date": "2024-01-02",
        "deciders": ["A", "B, C", "D"],
        "informed": ["E", "F"],
        "consulted": "",
    }
    # Nested mappings are valid YAML: read, not refused.
    nested = parse_front_matter(["---", "a:", "  b: 1", "c: {x: 1}", "---"])
    assert nested is not None
    assert {k: f.value for k, f in nested.fields.items()} == {
        "a": {"b": "1"},
        "c": {"x": "1"},
    }
    for lines, line in (
        (["---", "a: 1", "a: 2", "---"], 3),
        (["---", "a: 1"], 1),
        (["---", "just text", "---"], 2),
    ):
        with pytest.raises(FrontMatterError) as info:
            parse_front_matter(lines)
        assert info.value.line == line


def test_nygard_relations_and_madr_title_digits() -> None:
    rec = parse_adr(
        "# 12. Retry once\n\nDate: 2024-02-03\n\n## Status\n\nAccepted\n\n"
        "Supersedes [3. Old](0003-old.md) and [4. Older](0004-older.md)\n\n"
        "Clarifies [ADR-9](0009-x.md)\n\n## Context\n\nSlow\nnetwork.\n\n"
        "## Decision\n\nRetry.\n",
        "0012-retry-once.md",
    )
    assert (rec.number, rec.title, rec.date, rec.status) == (
        12,
        "Retry once",
        "2024-02-03",
        "accepted",
    )
    assert [(r.verb, r.target) for r in rec.relations] == [
        ("supersedes", 3),
        ("supersedes", 4),
        ("clarifies", 9),
    ]
    assert rec.rationale() == "Slow network.\n\nRetry."
    madr = parse_adr(
        "# 3 retries per payment call\n\n* Status: superseded by [ADR-0020](0020-x.md)\n"
        "* Date: 2024-01-01\n\n## Decision Outcome\n\nChosen option: three.\n",
        "0012-three-retries.md",
    )
    assert (madr.number, madr.title, madr.status) == (
        12,
        "3 retries per payment call",
        "accepted",
    )
    assert [(r.verb, r.target) for r in madr.relations] == [("superseded by", 20)]


def test_unreadable_records_name_their_line() -> None:
    for text, line, message in (
        ("no heading here\n", 1, "no title"),
        ("# 1. X\n\nDate: someday\n", 3, "is not YYYY-MM-DD"),
        ("---\nstatus: ok\n", 1, "never closed"),
        ("# Untitled\n", 1, "no ADR number"),
    ):
        with pytest.raises(AdrSyntaxError) as info:
            parse_adr(text, "notes.md" if "Untitled" in text else "0001-x.md")
        assert info.value.line == line
        assert message in info.value.message

"""Resolving with a plan: the previewed decision is the one appended, or nothing is."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from builders import ShardWriter, decision, set_prop

from kgai_tui.core.engine.open import open_engine
from kgai_tui.core.errors import RefusedError, UsageError
from kgai_tui.core.wire.codec import decode_line
from kgai_tui.core.wire.ids import element_id
from kgai_tui.core.wire.props import parse_props
from kgai_tui.core.write.resolve import plan_resolution, resolve_conflict
from kgai_tui.demo import DEMO_STORE

ELEMENT = "feature:ProductSearch"
OWN = "i0de0000000000001.ndjson"


@pytest.fixture
def store(tmp_path: Path) -> Path:
    """A private copy of the demo store (two open conflicts)."""
    target = tmp_path / "store"
    shutil.copytree(DEMO_STORE, target)
    return target


def _log(store: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted((store / "log").iterdir())}


def test_the_plan_writes_nothing_and_is_what_gets_appended(store: Path) -> None:
    """A plan with props: no byte written; the append is that decision, line for line."""
    before = _log(store)
    plan = plan_resolution(
        store,
        ELEMENT,
        title="Sold-out products stay 30 days, marked",
        rationale="SEO keeps the page; support gets a clear mark.",
        props={"show_sold_out": "first 30 days, marked"},
    )
    assert _log(store) == before
    assert plan.new_writer and plan.install_id == OWN.removesuffix(".ndjson")
    assert plan.label == ELEMENT and len(plan.decision.supersedes) == 2
    assert [(m.op, m.key, m.value) for m in plan.decision.mutations or ()] == [
        ("set_prop", "show_sold_out", "first 30 days, marked")
    ]
    result = resolve_conflict(
        store,
        ELEMENT,
        title=plan.decision.title,
        rationale=plan.decision.rationale,
        props={"show_sold_out": "first 30 days, marked"},
        expect=plan.decision,
    )
    assert result["decisions"][0]["id"] == plan.decision.id
    line = (store / "log" / OWN).read_bytes().rstrip(b"\n")
    decoded = decode_line(line)
    assert decoded.hash_ok and decoded.decision_id_ok
    assert decoded.event is not None and decoded.event.decision == plan.decision
    p = open_engine(store).projection
    eid = element_id("feature", "ProductSearch")
    assert eid not in p.contested
    props = parse_props((p.element(eid) or ("", "", ""))[2])
    assert props["show_sold_out"] == "first 30 days, marked"


def test_a_store_that_moved_since_the_plan_refuses_and_writes_nothing(
    store: Path,
) -> None:
    """Another resolution lands between the preview and the confirm: refused."""
    plan = plan_resolution(store, ELEMENT, title="Ours", rationale="why")
    heads = plan.decision.supersedes
    resolve_conflict(store, ELEMENT, keep=heads[0])  # someone else, meanwhile
    after = _log(store)
    with pytest.raises(RefusedError):  # no conflict left: refused before the check
        resolve_conflict(
            store, ELEMENT, title="Ours", rationale="why", expect=plan.decision
        )
    assert _log(store) == after


def test_a_plan_whose_supersedes_changed_is_refused(store: Path) -> None:
    """A teammate's third side arrives (a sync) between the preview and the
    confirm: the same decision would now supersede three heads, not the two
    previewed, so it is refused and nothing is written."""
    plan = plan_resolution(store, ELEMENT, title="Ours", rationale="why")
    teammate = ShardWriter("i0teammate000000b", actor="eve")
    teammate.add(
        decision(
            "A third way", [set_prop("feature", "ProductSearch", "show_sold_out", "no")]
        ),
        lamport=500,
        recorded_at="2026-06-02T00:00:00Z",
    )
    (store / "log" / "i0teammate000000b.ndjson").write_bytes(teammate.to_bytes())
    assert (
        len(
            open_engine(store).projection.heads_of(
                element_id("feature", "ProductSearch")
            )
        )
        == 3
    )
    after = _log(store)
    with pytest.raises(RefusedError, match="changed since the preview"):
        resolve_conflict(
            store, ELEMENT, title="Ours", rationale="why", expect=plan.decision
        )
    assert _log(store) == after


def test_props_go_with_a_new_decision_only(store: Path) -> None:
    """A kept side brings its own props: --set with --keep is a usage error."""
    with pytest.raises(UsageError, match="--set goes with --title"):
        plan_resolution(store, ELEMENT, keep="d_15dcbf1e", props={"k": "v"})


def test_the_cli_sets_the_contested_prop(store: Path) -> None:
    """resolve-conflict --title --set: the element says what the resolution says;
    a malformed --set is exit 2 and writes nothing."""
    cli = [sys.executable, "-m", "kgai_tui", "resolve-conflict", "--store", str(store)]
    before = _log(store)
    bad = subprocess.run(
        [*cli, ELEMENT, "--title", "T", "--set", "no-equals"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert bad.returncode == 2 and "KEY=VALUE" in bad.stderr
    assert _log(store) == before
    done = subprocess.run(
        [*cli, ELEMENT, "--title", "Thirty days", "--rationale", "why", "--set",
         "show_sold_out=first 30 days, marked", "--json"],
        capture_output=True,
        text=True,
        check=True,
    )  # fmt: skip
    assert json.loads(done.stdout)["ok"] is True
    p = open_engine(store).projection
    eid = element_id("feature", "ProductSearch")
    assert parse_props((p.element(eid) or ("", "", ""))[2])["show_sold_out"] == (
        "first 30 days, marked"
    )

"""A write session's own rows extend the model (issue 17: "record one decision").

After ``record`` or ``resolve-conflict`` appends, the session's overlay, which
already applied those events to check them, is written into the model as it is:
the lines are not read back and replayed a second time. These tests make the
replay path fail loudly, so they pass only if the staged rows were used, and check
that the model then equals a fresh replay in every state and read.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from test_model import assert_same

from kgai_tui.core.model import update
from kgai_tui.core.model.open import open_model
from kgai_tui.core.write.resolve import resolve_conflict
from kgai_tui.core.write.writes import init_store, record


def _doc(*decisions: dict[str, Any]) -> str:
    return json.dumps({"decisions": list(decisions)})


def _decision(title: str, *mutations: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {
        "title": title,
        "rationale": f"why {title}",
        "mutations": list(mutations),
        **extra,
    }


def _upsert(kind: str, name: str, **props: str) -> dict[str, Any]:
    return {"op": "upsert_element", "kind": kind, "name": name, "props": props}


def _no_replay(*_: Any, **__: Any) -> None:
    raise AssertionError("the appended lines were replayed instead of staged")


@pytest.fixture
def store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    """A store with a built model, and its cache directory."""
    root, cache = tmp_path / "store", tmp_path / "cache"
    monkeypatch.setenv("KGAI_TUI_CACHE_DIR", str(cache))
    init_store(root, actor="staged")
    record(root, _doc(_decision("seed", _upsert("feature", "Invoice", owner="a"))))
    assert open_model(root, cache).how in ("warm", "cold", "append")
    return root, cache


def test_records_extend_the_model_with_their_own_rows(
    store: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """New elements, links, props, a batch whose second decision supersedes the
    first, and a decision that changes no node or link: each record is written
    from its session, and the model equals a replay after each."""
    root, cache = store
    monkeypatch.setattr(update, "apply_in_order", _no_replay)
    link = {
        "op": "add_link",
        "from": "feature:Invoice",
        "to": "service:Billing",
        "link": "USES",
    }
    batches = [
        _doc(_decision("billing", _upsert("service", "Billing"), link)),
        _doc(
            _decision("pdf", _upsert("feature", "Invoice", format="pdf")),
            _decision("html", _upsert("feature", "Invoice", format="html")),
        ),
        _doc(_decision("same graph", _upsert("feature", "Invoice", format="html"))),
    ]
    for batch in batches:
        result = record(root, batch)
        assert result["ok"], result
        model = open_model(root, cache)
        assert model.how == "warm"  # the record extended it already
        assert_same(model, root)


def test_resolving_a_conflict_is_staged_too(
    store: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """``resolve-conflict`` supersedes every side from its session's rows."""
    from builders import ShardWriter, decision, upsert

    root, cache = store
    record(root, _doc(_decision("left", _upsert("feature", "Cart", mode="a"))))
    # A teammate decided on Cart at the same time (no supersedes): a conflict.
    other = ShardWriter("i-teammate", actor="bob")
    other.add(
        decision("right", [upsert("feature", "Cart", mode="b")], author="bob"),
        lamport=2,
        recorded_at="2026-01-02T00:00:00Z",
    )
    with open(root / "log" / "i-teammate.ndjson", "wb") as fh:
        fh.write(other.to_bytes())
    assert len(open_model(root, cache).projection.contested) == 1
    monkeypatch.setattr(update, "apply_in_order", _no_replay)
    resolve_conflict(root, "feature:Cart", title="one cart mode", rationale="agreed")
    model = open_model(root, cache)
    assert model.how == "warm"
    assert not model.projection.contested
    assert_same(model, root)


def test_a_model_changed_meanwhile_is_extended_from_the_log(
    store: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """If the stored state is not the one the session staged on, the staged rows
    are not trusted: the lines are replayed from the log."""
    root, cache = store
    replayed: list[int] = []
    real = update.apply_in_order

    def counting(*args: Any, **kwargs: Any) -> None:
        replayed.append(1)
        real(*args, **kwargs)

    monkeypatch.setattr(update, "apply_in_order", counting)
    # As if another process had extended the model between the session's start
    # and its catch-up: the stored state is not the one the rows were staged on.
    monkeypatch.setattr(update, "_same_events", lambda *a: False)
    record(root, _doc(_decision("late", _upsert("feature", "Late"))))
    assert replayed == [1]
    model = open_model(root, cache)
    assert model.how == "warm"
    assert_same(model, root)

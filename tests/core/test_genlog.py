"""The benchmark generator is byte-identical to the reference tool (spec 9.1)."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from benchmarks.genlog import GenParams, append_store, write_segments, write_store
from kgai_tui.core.engine.open import open_engine
from kgai_tui.core.wire.codec import decode_line, marshal_event

# From ../shared/fixtures/go-vectors/README.md (the reference genlog, 1000/3/100).
REFERENCE = {
    "igen000000000000": (
        "000001-334.ndjson",
        "8f61f056e22df29ef66197108f67054f7a1e283c32eb529034b9f72520e49ec2",
    ),
    "igen000000000001": (
        "000001-333.ndjson",
        "9eaf968734c61de7c9a26bef4289fd123b722d4c33b737871976b4acff1d3a92",
    ),
    "igen000000000002": (
        "000001-333.ndjson",
        "9c10cc22295405b514a01316cd4cba0c159da55e3d891de9360fa1eddf447ec0",
    ),
}


def test_segments_match_the_reference_digests(tmp_path: Path) -> None:
    paths = write_segments(tmp_path, GenParams(total=1000, installs=3, elems=100))
    assert len(paths) == 3
    for install, (name, digest) in REFERENCE.items():
        path = tmp_path / "segments" / install / name
        assert hashlib.sha256(path.read_bytes()).hexdigest() == digest
    assert not list(tmp_path.rglob("*.part"))


def test_store_layout_holds_the_same_bytes(tmp_path: Path) -> None:
    write_store(tmp_path / "store", GenParams(1000, 3, 100))
    write_segments(tmp_path / "seg", GenParams(1000, 3, 100))
    for install, (name, _) in REFERENCE.items():
        store = (tmp_path / "store" / "log" / f"{install}.ndjson").read_bytes()
        assert store == (tmp_path / "seg" / "segments" / install / name).read_bytes()


def test_every_line_verifies_and_is_canonical(tmp_path: Path) -> None:
    write_store(tmp_path, GenParams(2000, 7, 150))
    lines = 0
    for shard in sorted((tmp_path / "log").iterdir()):
        for raw in shard.read_bytes().splitlines():
            decoded = decode_line(raw)
            assert decoded.hash_ok and decoded.decision_id_ok
            assert marshal_event(decoded.event) == raw
            lines += 1
    assert lines == 2000
    engine = open_engine(tmp_path)
    assert len(engine.projection.dec_id) == 2000
    assert len(engine.projection.graph) == 150
    # One chain per element: exactly one decision in force per element.
    assert all(len(h) == 1 for h in engine.projection.heads.values())


@pytest.mark.parametrize(("first", "more"), [(2000, 1000), (3, 20), (0, 5)])
def test_appending_equals_generating_the_larger_store(
    tmp_path: Path, first: int, more: int
) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    write_store(a, GenParams(first, 7, 150))
    (a / "log").mkdir(parents=True, exist_ok=True)
    assert append_store(a, GenParams(first, 7, 150), more) == more
    write_store(b, GenParams(first + more, 7, 150))
    names = sorted(p.name for p in (b / "log").iterdir())
    assert sorted(p.name for p in (a / "log").iterdir()) == names
    for name in names:
        assert (a / "log" / name).read_bytes() == (b / "log" / name).read_bytes()


def test_bad_parameters_are_refused() -> None:
    with pytest.raises(ValueError, match="installs"):
        GenParams(10, 0, 5)

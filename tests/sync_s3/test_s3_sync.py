"""The S3 segment protocol against a real S3-compatible server (spec 7.2, 7.3, 8).

Stores sync in-process here (the CLI is exercised in ``test_s3_cli.py``); the bucket
is read and tampered with through boto3, as another client would.
"""

from __future__ import annotations

import hashlib
import shutil
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from s3_helpers import decide, event_hashes, get, keys, make_store, put, s3

from kgai_tui.core.store.config_file import load_config, save_config
from kgai_tui.core.wire.codec import compute_hash, decode_line, marshal_event
from kgai_tui.sync.run import SyncError
from kgai_tui.sync.s3_protocol import ForkError
from kgai_tui.sync.s3_sync import s3_sync_store
from kgai_tui.sync.sync import SyncReport

GO_LOG = Path(__file__).parent.parent / "fixtures" / "go-vectors" / "log"


def install_of(store: Path) -> str:
    cfg = load_config(store)
    assert cfg is not None
    return cfg.install_id


def sync(store: Path, url: str | None = None) -> SyncReport:
    return s3_sync_store(store, url)


def test_two_stores_exchange_incremental_segments(tmp_path: Path, bucket: str) -> None:
    """Push only, then push and pull, then increments, then a round that is a no-op."""
    url = f"s3://{bucket}/team/kg"
    a, b = make_store(tmp_path / "a", "ana"), make_store(tmp_path / "b", "bo")
    ia, ib = install_of(a), install_of(b)
    decide(a, "Invoices are PDF")
    decide(a, "Billing owns the ledger", "service", "Billing")
    first = sync(a, url).to_obj()
    assert first["sync"] == {"pulled": False, "pushed": True, "remote": url}
    assert load_config(a).remote == url  # type: ignore[union-attr]  # remembered

    decide(b, "Checkout is one page", "feature", "Checkout")
    second = sync(b, url)
    assert (second.outcome.pushed, second.outcome.pulled, second.applied) == (
        True,
        True,
        2,
    )
    assert len(event_hashes(b)) == 3

    decide(a, "Invoices are numbered per year")
    third = sync(a)  # the remembered remote
    assert (third.outcome.pushed, third.outcome.pulled, third.applied) == (
        True,
        True,
        1,
    )
    fourth = sync(b)
    assert (fourth.outcome.pushed, fourth.outcome.pulled, fourth.applied) == (
        False,
        True,
        1,
    )
    assert keys(bucket) == sorted(
        [
            f"team/kg/segments/{ia}/000001-2.ndjson",
            f"team/kg/segments/{ia}/000002-1.ndjson",
            f"team/kg/segments/{ib}/000001-1.ndjson",
        ]
    )
    assert len(event_hashes(a)) == 4 and event_hashes(a) == event_hashes(b)
    # Byte for byte: the pulled copy of a shard is its writer's file.
    for name in (f"{ia}.ndjson", f"{ib}.ndjson"):
        assert (a / "log" / name).read_bytes() == (b / "log" / name).read_bytes()
    segment = get(bucket, f"team/kg/segments/{ia}/000002-1.ndjson")
    assert segment == (a / "log" / f"{ia}.ndjson").read_bytes().splitlines(True)[2]

    for store in (a, b):
        again = sync(store).to_obj()
        assert again["sync"] == {"pulled": False, "pushed": False, "remote": url}
        assert again["applied"] == 0


def test_a_tampered_segment_is_not_applied(tmp_path: Path, bucket: str) -> None:
    """Text changed in place: the whole segment is refused, naming hash verification."""
    url = f"s3://{bucket}"
    a, b = make_store(tmp_path / "a", "ana"), make_store(tmp_path / "b", "bo")
    decide(a, "Invoices are PDF")
    decide(a, "Invoices are numbered per year")
    sync(a, url)
    (key,) = keys(bucket)
    put(
        bucket, key, get(bucket, key).replace(b"numbered per year", b"numbered per day")
    )
    report = sync(b, url).to_obj()
    assert report["sync"]["pulled"] is False and report["applied"] == 0
    assert "hash verification" in report["sync"]["detail"]
    assert report["sync"]["refused"][0]["path"] == key
    assert report["sync"]["refused"][0]["reason"].endswith("fails hash verification")
    assert event_hashes(b) == set()
    assert not (b / "log" / f"{install_of(a)}.ndjson").exists()


def test_odd_keys_are_ignored(tmp_path: Path, bucket: str) -> None:
    """A 5-digit seq or a zero count is no segment: not pulled, not reported."""
    url = f"s3://{bucket}/kg"
    a, b = make_store(tmp_path / "a", "ana"), make_store(tmp_path / "b", "bo")
    decide(a, "Invoices are PDF")
    sync(a, url)
    (key,) = keys(bucket)
    body = get(bucket, key)
    s3().delete_object(Bucket=bucket, Key=key)
    ia = install_of(a)
    put(bucket, f"kg/segments/{ia}/00001-1.ndjson", body)
    put(bucket, f"kg/segments/{ia}/000001-0.ndjson", body)
    put(bucket, "kg/segments/notes.txt", b"hello")
    report = sync(b, url).to_obj()
    assert report["sync"] == {"pulled": False, "pushed": False, "remote": url}
    assert event_hashes(b) == set()


def test_go_written_lines_travel_byte_for_byte(tmp_path: Path, bucket: str) -> None:
    """A shard of the reference's own lines becomes one segment of the same bytes,
    and a fresh store pulls exactly that file."""
    url = f"s3://{bucket}/p"
    a = make_store(tmp_path / "a", "ana")
    cfg = load_config(a)
    assert cfg is not None
    save_config(a, replace(cfg, install_id="i-ana"))
    shutil.copy(GO_LOG / "i-ana.ndjson", a / "log" / "i-ana.ndjson")
    original = (GO_LOG / "i-ana.ndjson").read_bytes()
    count = original.count(b"\n")
    assert sync(a, url).outcome.pushed
    assert keys(bucket) == [f"p/segments/i-ana/000001-{count}.ndjson"]
    assert get(bucket, keys(bucket)[0]) == original
    b = make_store(tmp_path / "b", "bo")
    report = sync(b, url)
    assert report.outcome.pulled and report.applied == count
    assert (b / "log" / "i-ana.ndjson").read_bytes() == original


def test_a_copied_store_is_refused_and_pushes_nothing(
    tmp_path: Path, bucket: str
) -> None:
    """Same install id, diverged: the fork error names `kgai-tui rotate`; the bucket is as it was."""
    url = f"s3://{bucket}/kg"
    a = make_store(tmp_path / "a", "ana")
    decide(a, "Invoices are PDF")
    sync(a, url)
    copy = tmp_path / "copy"
    shutil.copytree(a, copy)
    decide(a, "Invoices are HTML")
    sync(a)
    decide(copy, "Invoices are plain text")
    decide(copy, "Invoices are numbered")  # more events than the remote: still a fork
    before = {k: get(bucket, k) for k in keys(bucket)}
    with pytest.raises(ForkError, match="kgai-tui rotate") as caught:
        sync(copy)
    assert "event 2 differs" in str(caught.value)
    assert {k: get(bucket, k) for k in keys(bucket)} == before


def test_a_segment_under_an_unsafe_install_name_is_refused(
    tmp_path: Path, bucket: str
) -> None:
    """``segments/../…`` names no shard: refused, and nothing is written outside log/."""
    url = f"s3://{bucket}/kg"
    a, b = make_store(tmp_path / "a", "ana"), make_store(tmp_path / "b", "bo")
    decide(a, "Invoices are PDF")
    sync(a, url)
    (key,) = keys(bucket)
    put(bucket, "kg/segments/../000001-1.ndjson", get(bucket, key))
    put(bucket, "kg/segments/ix/000001-1.ndjson", get(bucket, key))  # claims a's id
    report = sync(b, url).to_obj()
    refused = {r["path"]: r["reason"] for r in report["sync"]["refused"]}
    assert refused["kg/segments/../000001-1.ndjson"].startswith("not an install id")
    assert "claims install" in refused["kg/segments/ix/000001-1.ndjson"]
    assert sorted(p.name for p in (b / "log").iterdir()) == [f"{install_of(a)}.ndjson"]
    assert not (tmp_path / "b" / ".ndjson").exists()


#: sha256 of the reference generator's segments (total=1000, installs=3, elems=100),
#: as published in tests/fixtures/go-vectors/README.md.
GENLOG_SHA256 = {
    "igen000000000000": "8f61f056e22df29ef66197108f67054f7a1e283c32eb529034b9f72520e49ec2",
    "igen000000000001": "9eaf968734c61de7c9a26bef4289fd123b722d4c33b737871976b4acff1d3a92",
    "igen000000000002": "9c10cc22295405b514a01316cd4cba0c159da55e3d891de9360fa1eddf447ec0",
}


def test_a_cold_clone_of_the_reference_upload_layout(
    tmp_path: Path, bucket: str
) -> None:
    """The reference generator's segments, uploaded as its tool lays them out, pull
    into a fresh store as shards of exactly the published bytes."""
    from benchmarks.genlog import GenParams, write_segments

    for path in write_segments(tmp_path / "gen", GenParams(1000, 3, 100)):
        put(
            bucket,
            f"team/{path.relative_to(tmp_path / 'gen').as_posix()}",
            path.read_bytes(),
        )
    fresh = make_store(tmp_path / "fresh", "bo")
    report = sync(fresh, f"s3://{bucket}/team")
    assert report.applied == 1000 and report.outcome.refused == ()
    got = {
        p.stem: hashlib.sha256(p.read_bytes()).hexdigest()
        for p in (fresh / "log").glob("*.ndjson")
    }
    assert got == GENLOG_SHA256
    assert not sync(fresh).outcome.pulled


def test_missing_boto3_or_profile_is_one_line_naming_the_fix(
    tmp_path: Path, bucket: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    import importlib

    store = make_store(tmp_path / "a", "ana")
    with pytest.raises(SyncError, match="config profile \\(nope\\) could not be found"):
        sync(store, f"s3://{bucket}?profile=nope")
    real = importlib.import_module

    def no_boto(name: str, package: str | None = None) -> Any:
        if name.startswith(("boto3", "botocore")):
            raise ImportError(name)
        return real(name, package)

    monkeypatch.setattr(importlib, "import_module", no_boto)
    with pytest.raises(SyncError) as caught:
        sync(store, f"s3://{bucket}")
    assert (
        str(caught.value) == "the S3 transport needs boto3: pip install 'kgai-tui[s3]'"
    )
    assert load_config(store).remote == ""  # type: ignore[union-attr]


def test_a_segment_that_breaks_the_hash_chain_is_not_appended(
    tmp_path: Path, bucket: str
) -> None:
    """Every line verifies, but one was left out: the chain check refuses the segment."""
    a, b = make_store(tmp_path / "a", "ana"), make_store(tmp_path / "b", "bo")
    for n in range(3):
        decide(a, f"Decision {n}", "feature", f"F{n}")
    ia = install_of(a)
    lines = (a / "log" / f"{ia}.ndjson").read_bytes().splitlines(True)
    put(bucket, f"kg/segments/{ia}/000001-1.ndjson", lines[0])
    put(bucket, f"kg/segments/{ia}/000002-1.ndjson", lines[2])  # lines[1] is missing
    report = sync(b, f"s3://{bucket}/kg").to_obj()
    assert report["applied"] == 1 and report["sync"]["pulled"] is True
    (refused,) = report["sync"]["refused"]
    assert refused["path"] == f"kg/segments/{ia}/000002-1.ndjson"
    assert refused["reason"].startswith(f"hash-chain break for install {ia}: event ")
    assert refused["reason"].endswith("; the segment was not applied")
    assert (b / "log" / f"{ia}.ndjson").read_bytes() == lines[0]


def test_a_line_failing_a_later_gate_refuses_its_whole_segment(
    tmp_path: Path, bucket: str
) -> None:
    """A line whose hash verifies but whose decision id does not: nothing of its
    segment is appended, the segment before it stays."""
    a, b = make_store(tmp_path / "a", "ana"), make_store(tmp_path / "b", "bo")
    for n in range(3):
        decide(a, f"Decision {n}", "feature", f"F{n}")
    ia = install_of(a)
    lines = (a / "log" / f"{ia}.ndjson").read_bytes().splitlines(True)
    ev = decode_line(lines[2].rstrip(b"\n")).event
    assert ev.decision is not None
    forged = replace(ev, decision=replace(ev.decision, title="Decision X"))
    forged = replace(forged, hash=compute_hash(forged))  # id left as it was
    put(bucket, f"kg/segments/{ia}/000001-1.ndjson", lines[0])
    key = f"kg/segments/{ia}/000002-2.ndjson"
    put(bucket, key, lines[1] + marshal_event(forged) + b"\n")
    report = sync(b, f"s3://{bucket}/kg").to_obj()
    assert report["applied"] == 1
    (refused,) = report["sync"]["refused"]
    assert refused["path"] == key
    assert refused["reason"] == (
        f"event {forged.hash}: decision id does not match its content; "
        "the segment was not applied"
    )
    assert (b / "log" / f"{ia}.ndjson").read_bytes() == lines[0]


def test_a_pull_cut_short_by_a_crash_is_repaired_and_taken_again(
    tmp_path: Path, bucket: str
) -> None:
    """A copy that ends in half a line (a crash inside the segment's one write): the
    fragment is moved aside and the next sync fetches the segment again, skipping
    the whole lines already held."""
    url = f"s3://{bucket}/kg"
    a, b = make_store(tmp_path / "a", "ana"), make_store(tmp_path / "b", "bo")
    for n in range(3):
        decide(a, f"Decision {n}", "feature", f"F{n}")
    sync(a, url)
    sync(b, url)
    shard = b / "log" / f"{install_of(a)}.ndjson"
    whole = shard.read_bytes()
    assert whole == (a / "log" / shard.name).read_bytes()
    lines = whole.splitlines(True)
    shard.write_bytes(lines[0] + lines[1][:40])  # what the crash left
    notices: list[str] = []
    report = s3_sync_store(b, on_notice=notices.append)
    assert any("moved a torn last line" in n for n in notices), notices
    assert report.applied == 2 and report.outcome.refused == ()
    assert shard.read_bytes() == whole
    (side,) = (b / "log").glob("*.torn-*")
    assert side.read_bytes() == lines[1][:40]


def test_a_remembered_line_count_is_used_only_while_the_shard_is_unchanged(
    tmp_path: Path, bucket: str
) -> None:
    """A copy cut back to its first line after a sync (as a rewrite would leave it)
    is counted again, not taken for the three lines remembered: the next sync
    pulls the two it lacks."""
    url = f"s3://{bucket}/kg"
    a, b = make_store(tmp_path / "a", "ana"), make_store(tmp_path / "b", "bo")
    for n in range(3):
        decide(a, f"Decision {n}", "feature", f"F{n}")
    sync(a, url)
    assert sync(b, url).applied == 3
    assert not sync(b).outcome.pulled  # counted from the remembered fingerprint
    shard = b / "log" / f"{install_of(a)}.ndjson"
    whole = shard.read_bytes()
    shard.write_bytes(whole.splitlines(True)[0])
    report = sync(b)
    assert report.outcome.pulled and report.applied == 2
    assert shard.read_bytes() == whole


def test_rotate_then_sync_reconciles_the_retired_shard(
    tmp_path: Path, bucket: str
) -> None:
    """A copied store forks; after `rotate` its next sync records its local-only
    decisions again under the new id, adopts the remote's retired shard (kept
    byte for byte in the cache), pushes, and pulls the original's later lines;
    every decision either side acknowledged is in both stores afterwards."""
    from kgai_tui.core.engine.open import open_engine
    from kgai_tui.core.store.cache_file import store_cache_dir
    from kgai_tui.core.write.rotate import rotate_install

    url = f"s3://{bucket}/kg"
    a = make_store(tmp_path / "a", "ana")
    decide(a, "Invoices are PDF")
    sync(a, url)
    copy = tmp_path / "copy"
    shutil.copytree(a, copy)
    decide(a, "Invoices are HTML")
    sync(a)
    decide(copy, "Invoices are plain text")
    with pytest.raises(ForkError):
        sync(copy)
    held_before = (copy / "log" / f"{install_of(a)}.ndjson").read_bytes()
    old, new = rotate_install(copy)
    assert old == install_of(a) and new == install_of(copy)
    report = sync(copy)
    assert "reconciled the retired shard" in " ".join(report.notices)
    assert (copy / "log" / f"{old}.ndjson").read_bytes() == (
        a / "log" / f"{old}.ndjson"
    ).read_bytes()
    kept = list((store_cache_dir(copy) / "retired").iterdir())
    assert [p.read_bytes() for p in kept] == [held_before]
    decide(a, "Invoices are numbered per year")
    sync(a)
    sync(copy)
    sync(a)
    for store in (a, copy):
        p = open_engine(store).projection
        recorded = sorted(t for t, h in zip(p.dec_title, p.dec_hash, strict=True) if h)
        assert recorded == [
            "Invoices are HTML",
            "Invoices are PDF",
            "Invoices are numbered per year",
            "Invoices are plain text",
        ], (store, recorded)
    for shard in (copy / "log").iterdir():
        for raw in shard.read_bytes().splitlines():
            decoded = decode_line(raw)
            assert decoded.hash_ok and decoded.decision_id_ok

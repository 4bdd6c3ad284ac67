"""The segment protocol's pure parts (spec 7.2, 7.3, 8 "remote: segments")."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from kgai_tui.core.errors import UsageError
from kgai_tui.core.wire.codec import compute_hash, decode_line, marshal_event
from kgai_tui.core.wire.plain_line import verify_plain
from kgai_tui.sync.s3_protocol import (
    S3Url,
    SegmentError,
    SegmentKey,
    fork_error,
    group_segments,
    parse_key,
    parse_s3_url,
    plan_pull,
    plan_push,
    segment_key,
    verify_segment,
)
from kgai_tui.sync.shard import PulledLine

GO_VECTORS = Path(__file__).parent.parent / "fixtures" / "go-vectors"


def seg(seq: int, count: int, install: str = "i1234") -> SegmentKey:
    return SegmentKey(install, seq, count, segment_key("", install, seq, count))


def test_keys_parse_as_the_reference_parses_them() -> None:
    """A full key parses; a 5-digit seq, a non-segment key and a zero count do not."""
    assert parse_key("team/kg/segments/i1234/000007-42.ndjson") == SegmentKey(
        "i1234", 7, 42, "team/kg/segments/i1234/000007-42.ndjson"
    )
    assert parse_key("segments/i1/000001-1.ndjson") is not None
    for key in (
        "team/kg/segments/i1234/00007-42.ndjson",  # 5 digits
        "team/kg/segments/i1234/0000007-42.ndjson",  # 7 digits
        "team/kg/segments/i1234/000007-0.ndjson",  # zero count
        "team/kg/log/i1234.ndjson",
        "team/kg/segments/i1234/000007-42.ndjson\n",
        "team/kg/segments/i1234/٠٠٠٠٠٧-42.ndjson",  # Go's \d is ASCII
        "team/kg/xsegments/i1234/000007-42.ndjson",
        "team/kg/segments/i1234/000007-99999999999999999999.ndjson",  # no int64
    ):
        assert parse_key(key) is None, key


def test_new_keys_are_path_joined() -> None:
    assert (
        segment_key("team/kg", "iab", 3, 12) == "team/kg/segments/iab/000003-12.ndjson"
    )
    assert segment_key("", "iab", 1000000, 1) == "segments/iab/1000000-1.ndjson"


def test_plan_push_arithmetic() -> None:
    """local 5 vs 3+2: nothing; local 8: from index 5 as seq 3; local 4 vs 5: refused."""
    remote = [seg(1, 3), seg(2, 2)]
    assert plan_push(5, remote) is None
    assert plan_push(8, remote) == (5, 3)
    with pytest.raises(ValueError, match="remote holds 5 events, this store 4"):
        plan_push(4, remote)
    assert plan_push(2, []) == (0, 1)
    assert plan_push(0, []) is None


def test_plan_pull_arithmetic() -> None:
    """local 4 of 5 fetches only segment 2 with skip 1; local 5 fetches nothing."""
    remote = [seg(1, 3), seg(2, 2)]
    assert plan_pull(4, remote) == [(remote[1], 1)]
    assert plan_pull(5, remote) == []
    assert plan_pull(0, remote) == [(remote[0], 0), (remote[1], 0)]
    assert plan_pull(9, remote) == []


def test_grouping_sorts_by_seq_and_refuses_unsafe_installs() -> None:
    groups, refused = group_segments(
        [
            "p/segments/ib/000002-1.ndjson",
            "p/segments/ib/000001-4.ndjson",
            "p/segments/ia/000001-1.ndjson",
            "p/segments/../000001-1.ndjson",
            "p/segments/IB/000001-1.ndjson",
            "p/segments/ib/00001-1.ndjson",
            "p/README",
        ]
    )
    assert {k: [s.seq for s in v] for k, v in groups.items()} == {
        "ib": [1, 2],
        "ia": [1],
    }
    assert refused == ["p/segments/../000001-1.ndjson", "p/segments/IB/000001-1.ndjson"]


@pytest.mark.parametrize(
    ("url", "want"),
    [
        ("s3://team", S3Url("team", "")),
        ("s3://team/", S3Url("team", "")),
        ("s3://team//kg/shop/", S3Url("team", "kg/shop")),
        (
            "s3://team/kg?profile=work&region=eu-west-1",
            S3Url("team", "kg", "work", "eu-west-1"),
        ),
        ("s3://team?region=eu-west-1&region=x", S3Url("team", "", "", "eu-west-1")),
    ],
)
def test_urls_parse_query_first(url: str, want: S3Url) -> None:
    assert parse_s3_url(url) == want


@pytest.mark.parametrize(
    "url",
    ["s3://", "s3://ab", "s3://a b/x", "s3://team/../x", "s3://team/a/./b", "git@x:y"],
)
def test_bad_urls_are_usage_errors(url: str) -> None:
    with pytest.raises(UsageError):
        parse_s3_url(url)


def _go_lines() -> list[bytes]:
    return (GO_VECTORS / "log" / "i-ana.ndjson").read_bytes().splitlines()


def test_a_segment_of_go_written_lines_verifies_and_keeps_their_bytes() -> None:
    lines = _go_lines()
    body = b"\n".join(lines) + b"\n"
    events = verify_segment(b"\n  " + body + b"\n\n", "i-ana")
    assert len(events) == len(lines)
    assert b"".join(line.raw + b"\n" for line in events) == body


def _generated_lines(tmp: Path) -> list[bytes]:
    from benchmarks.genlog import GenParams, write_store

    (shard,) = write_store(tmp, GenParams(40, 1, 10))
    return shard.read_bytes().splitlines()


def test_the_plain_path_and_the_decode_agree_on_every_line(tmp_path: Path) -> None:
    """Lines the pattern verifies and lines decoded give the gates the same fields."""
    for install, lines in (
        ("igen000000000000", _generated_lines(tmp_path)),  # plain lines
        ("i-ana", _go_lines()),  # Go's escapes and non-ASCII: decoded
    ):
        plain = sum(verify_plain(line) is not None for line in lines)
        assert plain == (len(lines) if install.startswith("igen") else 0)
        got = verify_segment(b"\n".join(lines), install)
        for line, pulled in zip(lines, got, strict=True):
            decoded = decode_line(line)
            assert pulled == PulledLine.of(decoded, marshal_event(decoded.event))


def test_a_line_that_is_not_canonical_is_kept_as_its_canonical_bytes() -> None:
    line = _go_lines()[0]
    loose = line.replace(b'","op":', b'", "op":', 1)  # a space Go does not write
    assert loose != line and decode_line(loose).hash_ok
    (got,) = verify_segment(loose, "i-ana")
    assert got.raw == line


def test_any_bad_line_rejects_the_whole_segment() -> None:
    good = _go_lines()[:3]
    tampered = good[1].replace(b'"title":"', b'"title":"X', 1)
    assert tampered != good[1]
    with pytest.raises(SegmentError, match="fails hash verification"):
        verify_segment(b"\n".join([good[0], tampered, good[2]]), "i-ana")
    with pytest.raises(SegmentError, match=r"^malformed event: "):
        verify_segment(b"\n".join([good[0], b"{not json", good[2]]), "i-ana")
    with pytest.raises(SegmentError, match="claims install i-ana but lives under i-bo"):
        verify_segment(b"\n".join(good), "i-bo")
    # Re-hashed under another install: it verifies, and still is not the writer's.
    ev = decode_line(good[0]).event
    moved = replace(ev, install_id="i-bo")
    moved = replace(moved, hash=compute_hash(moved))
    (line,) = verify_segment(marshal_event(moved), "i-bo")
    assert line.install_id == "i-bo" and line.hash == moved.hash


def test_the_fork_error_names_the_fix_on_one_line() -> None:
    text = str(fork_error("iab", "the remote holds 5 events, this store 4"))
    assert text.startswith(
        "shard fork detected for install iab: this store and another"
    )
    assert (
        "the store was probably copied (the remote holds 5 events, this store 4)"
        in text
    )
    assert "Run `kgai-tui rotate` (or `kg rotate`) in THIS store, then sync" in text
    assert "\n" not in text

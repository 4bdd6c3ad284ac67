"""A cold clone of 100,000 events uploaded in the reference's layout (issue 19).

Everything runs as the user runs it: ``kgai-tui bench generate`` writes the
reference generator's ``segments/`` layout and, separately, the same events as log
shards; the segments go to the test server as the reference tool uploads them;
``kgai-tui sync`` pulls them into an empty store.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from s3_helpers import KGAI_TUI, cli, ok_json, put

pytestmark = pytest.mark.slow

TOTAL = 100_000
WRITERS = 30


def _generate(out: Path, *extra: str) -> None:
    done = cli(
        "bench",
        "generate",
        str(out),
        "--decisions",
        str(TOTAL),
        "--writers",
        str(WRITERS),
        *extra,
    )
    assert done.returncode == 0, done.stderr


def _digests(*stores: Path) -> list[str]:
    """``export --canonical``'s digest of each store (the exports run side by side)."""
    procs = [
        subprocess.Popen(
            [KGAI_TUI, "export", "--canonical", "--store", str(store)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            stdin=subprocess.DEVNULL,
        )
        for store in stores
    ]
    digests = []
    for proc in procs:
        out, err = proc.communicate(timeout=300)
        assert proc.returncode == 0, err.decode()
        digests.append(str(json.loads(out)["digest"]))
    return digests


def test_a_100k_segment_upload_clones_to_the_digest_of_the_log_shards(
    tmp_path: Path, bucket: str
) -> None:
    """The clone holds each segment byte for byte, exports the digest of the same
    events read from log shards, and the next sync has nothing to do."""
    gen, shards, clone = tmp_path / "gen", tmp_path / "shards", tmp_path / "clone"
    _generate(gen, "--segments")
    segments = sorted((gen / "segments").glob("*/*.ndjson"))
    assert len(segments) == WRITERS
    counts = [p.read_bytes().count(b"\n") for p in segments]
    assert [p.name for p in segments] == [f"000001-{n}.ndjson" for n in counts]
    assert sum(counts) == TOTAL
    for path in segments:
        put(bucket, f"team/{path.relative_to(gen).as_posix()}", path.read_bytes())
    _generate(shards)
    assert cli("init", "--store", str(clone), "--actor", "bo").returncode == 0

    pulled = ok_json("sync", "--store", str(clone), "--remote", f"s3://{bucket}/team")
    assert pulled["applied"] == TOTAL
    assert pulled["sync"] == {
        "pulled": True,
        "pushed": False,
        "remote": f"s3://{bucket}/team",
    }
    for path in segments:
        held = clone / "log" / f"{path.parent.name}.ndjson"
        assert held.read_bytes() == path.read_bytes(), held.name
        assert held.read_bytes() == (shards / "log" / held.name).read_bytes()

    got, want = _digests(clone, shards)
    assert got == want
    again = ok_json("sync", "--store", str(clone))
    assert again["applied"] == 0 and again["sync"]["pulled"] is False

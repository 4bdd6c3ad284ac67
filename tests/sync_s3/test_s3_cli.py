"""``kgai-tui sync`` and ``kgai-tui remote`` with an ``s3://`` remote, as real processes.

Three stores converge (digest and conflicts) and a resolution travels; eight copies
of one store race to push the same seq; a remembered remote, offline, a missing
bucket and bad URLs each get their documented answer and exit code.
"""

from __future__ import annotations

import json
import shutil
import socket
import subprocess
import sys
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from s3_helpers import (
    KGAI_TUI,
    cli,
    decide,
    event_hashes,
    get,
    keys,
    make_store,
    ok_json,
)

from kgai_tui.core.store.config_file import load_config
from kgai_tui.sync.s3_protocol import ForkError
from kgai_tui.sync.s3_sync import s3_sync_store


def sync(store: Path, *extra: str) -> Any:
    return ok_json("sync", "--store", str(store), *extra)


def digest(store: Path) -> str:
    return str(ok_json("export", "--store", str(store), "--canonical")["digest"])


def conflicts(store: Path) -> str:
    done = cli("conflicts", "--store", str(store), "--json")
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_three_stores_converge_and_a_resolution_travels(
    tmp_path: Path, bucket: str
) -> None:
    """Same digest and conflicts everywhere after rounds; resolving clears them all."""
    url = f"s3://{bucket}/team"
    a, b, c = (make_store(tmp_path / n, n) for n in ("ana", "bo", "cy"))
    for store in (a, b, c):
        assert ok_json("remote", "--store", str(store), url)["session"] == url
    pdf = decide(a, "Invoices are PDF/A")
    html = decide(b, "Invoices are HTML e-mails")  # the same element, at once
    decide(c, "Billing owns the ledger", "service", "Billing")

    first = sync(a)
    assert first == {
        "applied": 0,
        "conflict_count": 0,
        "conflicts": None,
        "ok": True,
        "sync": {"pulled": False, "pushed": True, "remote": url},
    }
    human = cli("sync", "--store", str(b))  # b pulls a: the conflict appears here
    assert human.returncode == 0, human.stderr
    assert "⚠ new conflict on feature:Invoice" in human.stdout
    assert "1 new event(s)" in human.stdout and "↑ pushed to" in human.stdout
    third = sync(c)
    assert third["applied"] == 2 and third["sync"]["pulled"] is True
    assert third["conflict_count"] == 1
    assert sorted(third["conflicts"][0]["heads"]) == sorted([pdf, html])
    sync(a)
    sync(b)
    stores = (a, b, c)
    assert len({(digest(s), conflicts(s)) for s in stores}) == 1
    assert json.loads(conflicts(a))["count"] == 1

    done = cli("resolve-conflict", "--store", str(c), "--keep", pdf, "feature:Invoice")
    assert done.returncode == 0, done.stderr
    assert sync(c)["conflict_count"] == 0
    after_a, after_b = sync(a), sync(b)
    assert after_a["applied"] == 1 and after_a["conflicts"] is None
    assert after_b["applied"] == 1 and after_b["conflict_count"] == 0
    assert len({(digest(s), conflicts(s)) for s in stores}) == 1
    assert json.loads(conflicts(a))["count"] == 0
    again = sync(a)
    assert again["applied"] == 0 and again["sync"] == {
        "pulled": False,
        "pushed": False,
        "remote": url,
    }
    assert "up to date" in cli("sync", "--store", str(a)).stdout


def test_eight_copies_race_for_one_seq(
    tmp_path: Path, bucket: str, s3_env: str
) -> None:
    """Copies of one store push at once: one wins the seq, seven get the fork error,
    and the bucket holds every event of the winner once.

    The server holds the eight listings until all have arrived, so all eight see
    the same remote and put the same key: S3's ``If-None-Match: *`` decides.
    """
    url = f"s3://{bucket}/kg"
    origin = make_store(tmp_path / "origin", "ana")
    for n in range(3):
        decide(origin, f"Decision {n}", "feature", f"F{n}")
    sync(origin, "--remote", url)
    install = load_config(origin).install_id  # type: ignore[union-attr]
    copies = []
    for n in range(8):
        copy = tmp_path / f"copy{n}"
        shutil.copytree(origin, copy)
        decide(copy, f"Copy {n} decided", "feature", f"C{n}")
        copies.append(copy)
    arm = urllib.request.Request(f"{s3_env}/_kgai_test/barrier?n=8", method="POST")
    urllib.request.urlopen(arm, timeout=10).close()
    procs = [
        subprocess.Popen(
            [KGAI_TUI, "sync", "--store", str(c), "--json"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            stdin=subprocess.DEVNULL,
            text=True,
        )
        for c in copies
    ]
    results = [(p.wait(timeout=120), *p.communicate()) for p in procs]
    winners = [i for i, (rc, _, _) in enumerate(results) if rc == 0]
    assert len(winners) == 1, results
    for i, (rc, out, err) in enumerate(results):
        if i in winners:
            assert json.loads(out)["sync"]["pushed"] is True
            continue
        assert rc == 1, (out, err)
        assert json.loads(out)["error"].startswith(
            f"shard fork detected for install {install}"
        )
        assert "kgai-tui rotate" in err and len(err.strip().splitlines()) == 1
        assert "already exists on the remote (concurrent push" in err
    winner = copies[winners[0]]
    assert keys(bucket) == [
        f"kg/segments/{install}/000001-3.ndjson",
        f"kg/segments/{install}/000002-1.ndjson",
    ]
    shard = (winner / "log" / f"{install}.ndjson").read_bytes()
    pushed = b"".join(get(bucket, k) for k in keys(bucket))
    assert pushed == shard
    fresh = make_store(tmp_path / "fresh", "bo")
    assert sync(fresh, "--remote", url)["applied"] == 4
    assert (fresh / "log" / f"{install}.ndjson").read_bytes() == shard
    assert len(event_hashes(fresh)) == 4
    loser = copies[(winners[0] + 1) % 8]
    again = cli("sync", "--store", str(loser), "--json")
    assert again.returncode == 1 and "shard fork detected" in again.stdout
    assert len(keys(bucket)) == 2


def test_copies_racing_with_different_counts_are_caught(
    tmp_path: Path, bucket: str, s3_env: str
) -> None:
    """Two keys for one seq (counts differ, so both puts succeed): at most one copy
    believes it pushed, and a teammate pulls nothing from that seq on."""
    url = f"s3://{bucket}/kg"
    origin = make_store(tmp_path / "origin", "ana")
    decide(origin, "Decision 0", "feature", "F0")
    sync(origin, "--remote", url)
    install = load_config(origin).install_id  # type: ignore[union-attr]
    copies = []
    for n in range(4):
        copy = tmp_path / f"copy{n}"
        shutil.copytree(origin, copy)
        for m in range(1 + n % 2):
            decide(copy, f"Copy {n} decided {m}", "feature", f"C{n}")
        copies.append(copy)
    arm = urllib.request.Request(f"{s3_env}/_kgai_test/barrier?n=4", method="POST")
    urllib.request.urlopen(arm, timeout=10).close()
    procs = [
        subprocess.Popen(
            [KGAI_TUI, "sync", "--store", str(c), "--json"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            stdin=subprocess.DEVNULL,
        )
        for c in copies
    ]
    codes = [p.wait(timeout=120) for p in procs]
    assert codes.count(0) <= 1 and set(codes) <= {0, 1}, codes
    assert keys(bucket) == [
        f"kg/segments/{install}/000001-1.ndjson",
        f"kg/segments/{install}/000002-1.ndjson",
        f"kg/segments/{install}/000002-2.ndjson",
    ]
    fresh = make_store(tmp_path / "fresh", "bo")
    answer = sync(fresh, "--remote", url)
    assert answer["applied"] == 1
    (refused,) = answer["sync"]["refused"]
    assert refused["reason"].startswith("two segments share seq 000002")
    assert refused["path"] == f"kg/segments/{install}/"
    for copy in copies:  # every copy now meets the fork error
        with pytest.raises(ForkError, match="shard fork detected"):
            s3_sync_store(copy)


def test_the_remote_is_kept_as_the_reference_keeps_it(
    tmp_path: Path, s3_env: str, monkeypatch: Any
) -> None:
    """Session beats global, ``none`` disables, ``{project}`` expands; kg.config.json
    carries ``remote`` in the reference's place."""
    home = tmp_path / "kgai-home"
    home.mkdir()
    (home / "config.json").write_text('{"remote": "s3://team-kg/{project}"}\n')
    monkeypatch.setenv("KGAI_HOME", str(home))
    monkeypatch.setenv("KGAI_PROJECT", str(tmp_path / "shop"))
    store = make_store(tmp_path / "store", "ana")
    view = ok_json("remote", "--store", str(store))
    assert view == {
        "effective": "s3://team-kg/shop",
        "global": "s3://team-kg/{project}",
        "ok": True,
        "project": "",
        "session": "",
        "source": "global",
    }
    ok_json("remote", "--store", str(store), "s3://other/kg?profile=work")
    cfg = load_config(store)
    assert cfg is not None
    text = (store / "kg.config.json").read_text()
    assert text == (
        "{\n"
        f'  "install_id": "{cfg.install_id}",\n'
        '  "actor": "ana",\n'
        '  "remote": "s3://other/kg?profile=work",\n'
        '  "schema_version": 1,\n'
        f'  "machine": "{cfg.machine}"\n'
        "}\n"
    )
    assert ok_json("remote", "--store", str(store))["source"] == "session"
    off = ok_json("remote", "--store", str(store), "none")
    assert (off["effective"], off["session"], off["source"]) == ("", "none", "disabled")
    back = ok_json("remote", "--store", str(store), "--unset")
    assert (back["effective"], back["source"]) == ("s3://team-kg/shop", "global")
    assert '"remote"' not in (store / "kg.config.json").read_text()
    human = cli("remote", "--store", str(store))
    assert human.stdout.startswith("remote: s3://team-kg/shop (from the global layer)")


def test_bad_remotes_are_one_line_usage_errors(tmp_path: Path, s3_env: str) -> None:
    store = make_store(tmp_path / "store", "ana")
    for args in (
        ("remote", "s3://x"),
        ("remote", "s3://team/../up"),
        ("remote", "--unset", "s3://team"),
        ("remote", "ext::sh -c x"),
        ("sync", "--remote", "s3://team/./x"),
        ("sync", "--remote", "kgai://org/project"),
    ):
        done = cli(*args, "--store", str(store))
        assert done.returncode == 2, (args, done.stderr)
        assert done.stderr.startswith("kgai-tui: ") and done.stderr.count("\n") == 1
        assert "Traceback" not in done.stderr
    assert load_config(store).remote == ""  # type: ignore[union-attr]
    missing = cli("remote", "--store", str(tmp_path / "nowhere"), "s3://team")
    assert missing.returncode == 3


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_offline_is_a_detail_and_a_missing_bucket_an_error(
    tmp_path: Path, bucket: str
) -> None:
    store = make_store(tmp_path / "store", "ana")
    decide(store, "Invoices are PDF")
    offline = {"AWS_ENDPOINT_URL": f"http://127.0.0.1:{_closed_port()}"}
    done = cli(
        "sync",
        "--store",
        str(store),
        "--remote",
        f"s3://{bucket}",
        "--json",
        env=offline,
    )
    assert done.returncode == 0, done.stderr
    answer = json.loads(done.stdout)
    assert answer["ok"] is True and answer["sync"]["pushed"] is False
    assert answer["sync"]["detail"].startswith("list failed (offline / no access?): ")
    human = cli("sync", "--store", str(store), env=offline)
    assert human.returncode == 0 and human.stdout.startswith("○ list failed")

    gone = cli("sync", "--store", str(store), "--remote", "s3://no-such-bucket-here")
    assert gone.returncode == 1
    assert gone.stderr.startswith("kgai-tui: no bucket 'no-such-bucket-here'")
    # Remembered from the offline round, never from the failed one.
    assert load_config(store).remote == f"s3://{bucket}"  # type: ignore[union-attr]
    assert sync(store)["sync"]["pushed"] is True  # the remembered remote


def test_a_foreign_gitignore_does_not_stop_an_s3_sync(
    tmp_path: Path, bucket: str
) -> None:
    """The S3 transport commits nothing: the scaffold failure is only a note."""
    store = make_store(tmp_path / "store", "ana")
    decide(store, "Invoices are PDF")
    (store / ".gitignore").write_text("*.tmp\n")
    answer = sync(store, "--remote", f"s3://{bucket}")
    assert answer["sync"]["pushed"] is True
    assert "refusing to overwrite" in answer["sync"]["detail"]
    assert (store / ".gitignore").read_text() == "*.tmp\n"


def test_only_sync_imports_boto3() -> None:
    code = (
        "import sys, kgai_tui.cli.main, kgai_tui.sync.s3_sync, kgai_tui.sync.s3_remote;"
        "print([m for m in ('boto3', 'botocore') if m in sys.modules])"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.stdout.strip() == "[]", out.stderr

"""``kgai-tui sync`` with real git: a bare remote, three stores, real processes.

Three installs record decisions (two of them on the same element before syncing);
after sync rounds every store has the same canonical export digest and the same
conflict list, and a resolution made in one store clears the conflict everywhere.
A store whose ``.gitignore`` kgai did not write refuses to sync and pushes nothing;
an unreachable remote is a detail, not a failure; a remote with no repository is
an error.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from builders import as_person

from kgai_tui.core.store.config_file import load_config, save_config
from kgai_tui.core.write.lock import store_lock

KGAI_TUI = str(Path(sys.executable).parent / "kgai-tui")


def cli(
    *args: str, stdin: bytes = b"", env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """Run the real console script."""
    return subprocess.run(
        [KGAI_TUI, *as_person(args)],
        input=stdin.decode(),
        capture_output=True,
        text=True,
        env={**os.environ, **(env or {})},
        timeout=120,
        check=False,
    )


def ok_json(*args: str, stdin: bytes = b"") -> Any:
    """Run a command with ``--json`` that must succeed; return the parsed output."""
    done = cli(*args, "--json", stdin=stdin)
    assert done.returncode == 0, (args, done.stdout, done.stderr)
    return json.loads(done.stdout)


def git(*args: str, cwd: Path) -> str:
    """Run git and return its stdout (must succeed)."""
    done = subprocess.run(
        ["git", *args], cwd=cwd, capture_output=True, text=True, check=False, timeout=60
    )
    assert done.returncode == 0, (args, done.stderr)
    return done.stdout


def make_store(root: Path, actor: str, remote: Path | None) -> Path:
    """``kgai-tui init`` a store, then set its session ``remote`` in kg.config.json."""
    ok_json("init", "--store", str(root), "--actor", actor)
    if remote is not None:
        cfg = load_config(root)
        assert cfg is not None
        save_config(root, replace(cfg, remote=str(remote)))
    return root


def record(store: Path, title: str, kind: str, name: str, **props: str) -> str:
    """Record one decision on ``kind:name``; return its id."""
    mutation: dict[str, Any] = {"op": "upsert_element", "kind": kind, "name": name}
    if props:
        mutation["props"] = props
    doc = {
        "decision": {
            "title": title,
            "rationale": f"{title} (why)",
            "mutations": [mutation],
        }
    }
    out = ok_json("record", "--store", str(store), stdin=json.dumps(doc).encode())
    return str(out["decisions"][0]["id"])


def sync(store: Path, *extra: str) -> Any:
    """``kgai-tui sync --json``; it must succeed."""
    return ok_json("sync", "--store", str(store), *extra)


def digest(store: Path) -> str:
    """The canonical export digest (the replay-determinism check)."""
    return str(ok_json("export", "--store", str(store), "--canonical")["digest"])


def conflicts(store: Path) -> str:
    """The exact ``conflicts --json`` bytes."""
    done = cli("conflicts", "--store", str(store), "--json")
    assert done.returncode == 0, done.stderr
    return done.stdout


def views(*stores: Path) -> list[tuple[str, str]]:
    """``(digest, conflicts bytes)`` of each store, read in parallel (reads only)."""
    with ThreadPoolExecutor(max_workers=6) as pool:
        digests = pool.map(digest, stores)
        lists = pool.map(conflicts, stores)
        return list(zip(digests, lists, strict=True))


def _model_projection(store: Path) -> Any:
    """The store as its read model holds it (built, extended or kept since)."""
    from kgai_tui.core.model.open import open_model

    return open_model(store).projection


def remote_files(bare: Path) -> list[str]:
    """Every path in the remote's ``main``."""
    return git("ls-tree", "-r", "--name-only", "main", cwd=bare).split()


@pytest.fixture
def bare(tmp_path: Path) -> Path:
    """An empty bare repository: the team's remote."""
    path = tmp_path / "remote.git"
    subprocess.run(["git", "init", "-q", "--bare", str(path)], check=True)
    return path


def test_three_stores_converge_and_a_resolution_travels(
    tmp_path: Path, bare: Path
) -> None:
    """Same digest and conflicts everywhere after sync rounds; resolving clears them all."""
    a = make_store(tmp_path / "a", "ana", bare)
    b = make_store(tmp_path / "b", "bo", bare)
    c = make_store(tmp_path / "c", "cy", bare)
    # Two decisions on the same element at once, before anyone syncs.
    pdf = record(
        a, "Invoices are PDF/A", "feature", "Invoice", paths="billing/invoice/*"
    )
    html = record(b, "Invoices are HTML e-mails", "feature", "Invoice")
    record(c, "Billing owns the ledger", "service", "Billing")

    first = sync(a)
    assert (
        ok_json("search", "--store", str(a), "ledger")["hits"] == []
    )  # builds the index
    assert first["sync"] == {"pulled": False, "pushed": True, "remote": str(bare)}
    assert (first["applied"], first["conflict_count"], first["conflicts"]) == (
        0,
        0,
        None,
    )
    human = cli("sync", "--store", str(b))  # b pulls a: the conflict appears here
    assert human.returncode == 0, human.stderr
    assert "⚠ new conflict on feature:Invoice" in human.stdout
    assert "1 new event(s)" in human.stdout
    third = sync(c)
    assert third["applied"] == 2 and third["sync"]["pulled"] is True
    assert third["conflict_count"] == 1
    assert sorted(third["conflicts"][0]["heads"]) == sorted([pdf, html])
    sync(a)  # pulls b and c; the search index catches up
    sync(b)
    hits = ok_json("search", "--store", str(a), "ledger")["hits"]
    assert [h["name"] for h in hits] == ["Billing owns the ledger"]

    stores = (a, b, c)
    seen = views(*stores)
    assert len(set(seen)) == 1
    assert json.loads(seen[0][1])["count"] == 1
    shards = sorted(f for f in remote_files(bare) if f.startswith("log/"))
    assert len(shards) == 3
    assert sorted(remote_files(bare)) == sorted(
        [".gitattributes", ".gitignore", *shards]
    )

    # Resolve in c; the next sync round clears the conflict everywhere.
    resolved = cli(
        "resolve-conflict", "--store", str(c), "--keep", pdf, "feature:Invoice"
    )
    assert resolved.returncode == 0, resolved.stderr
    assert sync(c)["conflict_count"] == 0
    after_a, after_b = sync(a), sync(b)
    assert after_a["applied"] == 1 and after_a["conflicts"] is None
    assert after_b["applied"] == 1 and after_b["conflict_count"] == 0
    seen = views(*stores)
    assert len(set(seen)) == 1
    assert json.loads(seen[0][1])["count"] == 0
    # Never a rebase or a force push: every store's first commit is in the history.
    history = git("log", "--format=%s", "main", cwd=bare).split("\n")
    assert history.count("kg sync merge") >= 2
    again = sync(a)  # nothing new anywhere
    assert again["applied"] == 0 and again["sync"]["pulled"] is False
    assert "up to date" in cli("sync", "--store", str(a)).stdout


def test_a_sync_reads_what_it_pulled_through_the_read_model(
    tmp_path: Path, bare: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """After a pull, the store is opened through the read model (extended with the
    pulled lines) and the search index catches up through it: no whole store is
    read (at 1M decisions a sync re-read the whole store, 1.2 GB)."""
    from kgai_tui.core.engine import open as engine_open
    from kgai_tui.core.model.open import open_model
    from kgai_tui.core.search.index import SearchIndex
    from kgai_tui.sync import sync as git_sync_module

    a = make_store(tmp_path / "a", "ana", bare)
    b = make_store(tmp_path / "b", "bo", bare)
    record(a, "Billing owns the ledger", "service", "Billing")
    record(b, "Invoices are PDF/A", "feature", "Invoice")
    sync(a)
    assert ok_json("search", "--store", str(b), "ledger")["hits"] == []
    open_model(b).close()

    def no_replay(*_: Any, **__: Any) -> Any:
        raise AssertionError("the whole store was opened")

    with monkeypatch.context() as m:
        m.setattr(engine_open, "open_engine", no_replay)
        report = git_sync_module.sync_store(b)
        index = SearchIndex.open_cached(b)
    assert report.applied == 1 and report.outcome.pulled
    assert index is not None, "the search index did not catch up"
    hits = index.search("ledger")
    assert hits is not None and [h.name for h in hits] == ["Billing owns the ledger"]
    assert sync(b)["applied"] == 0


def test_a_committed_config_is_untracked_by_the_next_sync(
    tmp_path: Path, bare: Path
) -> None:
    """kg.config.json (it can hold a token) never reaches the remote, even if added."""
    a = make_store(tmp_path / "a", "ana", bare)
    record(a, "Use Postgres", "service", "DB")
    git("add", "-f", "kg.config.json", ".kg.lock", cwd=a)
    git(
        "-c", "user.name=x", "-c", "user.email=x@x", "commit", "-q", "-m", "oops", cwd=a
    )
    sync(a)
    files = remote_files(bare)
    assert "kg.config.json" not in files and ".kg.lock" not in files
    assert any(f.startswith("log/") for f in files)


def test_a_foreign_gitignore_refuses_and_pushes_nothing(
    tmp_path: Path, bare: Path
) -> None:
    """A .gitignore kgai did not write: one clear line, exit 1, no commit, no push."""
    d = make_store(tmp_path / "d", "dee", bare)
    record(d, "Use Redis", "service", "Cache")
    (d / ".gitignore").write_text("node_modules/\n")
    done = cli("sync", "--store", str(d))
    assert done.returncode == 1 and done.stdout == ""
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("kgai-tui: refusing to sync: ")
    assert ".gitignore was not written by kgai" in lines[0]
    as_json = cli("sync", "--store", str(d), "--json")
    assert as_json.returncode == 1
    assert json.loads(as_json.stdout)["error"].startswith("refusing to sync: ")
    assert git("for-each-ref", cwd=bare) == ""  # the remote has no refs at all
    assert (
        subprocess.run(
            ["git", "rev-parse", "-q", "--verify", "HEAD"],
            cwd=d,
            capture_output=True,
            check=False,
        ).returncode
        != 0
    )
    assert (d / ".gitignore").read_text() == "node_modules/\n"  # left as it was
    # The same for a foreign .gitattributes.
    (d / ".gitignore").unlink()
    (d / ".gitattributes").write_text("*.png binary\n")
    refused = cli("sync", "--store", str(d))
    assert (
        refused.returncode == 1
        and ".gitattributes was not written by kgai" in refused.stderr
    )
    assert git("for-each-ref", cwd=bare) == ""


def test_offline_is_a_detail_not_a_failure(tmp_path: Path) -> None:
    """An unreachable remote: ok true, exit 0, a detail; the commit is kept locally."""
    a = make_store(tmp_path / "a", "ana", None)
    record(a, "Use Kafka", "service", "EventBus")
    alone = sync(a)
    assert alone["sync"] == {
        "pulled": False,
        "pushed": False,
        "detail": "no remote configured; committed locally only",
    }
    unreachable = "http://127.0.0.1:9/team.git"  # the discard port: connection refused
    out = sync(a, "--remote", unreachable)
    assert out["ok"] is True and out["sync"]["pushed"] is False
    assert out["sync"]["remote"] == unreachable
    assert out["sync"]["detail"].startswith("fetch failed (offline?): ")
    assert "127.0.0.1" in out["sync"]["detail"]
    text = cli("sync", "--store", str(a), "--remote", unreachable)
    assert text.returncode == 0 and text.stdout.startswith("○ fetch failed (offline?)")
    assert "kg sync" in git("log", "--format=%s", cwd=a)


@pytest.mark.parametrize("kind", ["missing path", "not a repository", "file URL"])
def test_a_remote_that_does_not_exist_is_an_error(tmp_path: Path, kind: str) -> None:
    """No repository at the remote (issue 18, point 6): exit 1, one line, no JSON ok.

    Unlike being offline, retrying will not help: the URL is wrong. The local
    commit is still made (the store's own repository).
    """
    a = make_store(tmp_path / "a", "ana", None)
    record(a, "Use Kafka", "service", "EventBus")
    (tmp_path / "plain-dir").mkdir()
    url = {
        "missing path": str(tmp_path / "no-such-remote.git"),
        "not a repository": str(tmp_path / "plain-dir"),
        "file URL": (tmp_path / "no-such-remote.git").as_uri(),
    }[kind]
    done = cli("sync", "--store", str(a), "--remote", url)
    assert done.returncode == 1, (done.stdout, done.stderr)
    assert done.stdout == ""
    assert done.stderr.startswith("kgai-tui: no git repository at the remote ")
    assert "does not appear to be a git repository" in done.stderr
    assert "committed locally only" in done.stderr
    assert "offline" not in done.stderr
    as_json = cli("sync", "--store", str(a), "--remote", url, "--json")
    assert as_json.returncode == 1
    answer = json.loads(as_json.stdout)
    assert (
        answer["ok"] is False and "no git repository at the remote" in answer["error"]
    )
    assert "kg sync" in git("log", "--format=%s", cwd=a)


def test_sync_takes_the_store_lock(tmp_path: Path, bare: Path) -> None:
    """While another writer holds the lock, sync waits, then fails cleanly (exit 4)."""
    a = make_store(tmp_path / "a", "ana", bare)
    with store_lock(a):
        done = cli("sync", "--store", str(a), env={"KGAI_TUI_LOCK_TIMEOUT": "0.3"})
    assert done.returncode == 4, done.stderr
    assert "another writer" in done.stderr
    assert git("for-each-ref", cwd=bare) == ""


def test_sync_never_creates_a_store(tmp_path: Path) -> None:
    """No store at the path: exit 3, nothing created."""
    done = cli("sync", "--store", str(tmp_path / "none"), "--remote", str(tmp_path))
    assert done.returncode == 3
    assert not (tmp_path / "none").exists()


@pytest.mark.parametrize(
    ("stderr", "missing"),
    [
        (
            "remote: Repository not found.\nfatal: repository 'https://h/x.git/' not found",
            True,
        ),
        (
            "ERROR: Repository not found.\nfatal: Could not read from remote repository.",
            True,
        ),
        ("fatal: '/x.git' does not appear to be a git repository", True),
        (
            "fatal: unable to access 'https://h/x.git/': Could not resolve host: h",
            False,
        ),
        (
            "ssh: connect to host h port 22: Network is unreachable\nfatal: Could not read from remote repository.",
            False,
        ),
        (
            "fatal: unable to access 'http://h/x.git/': Failed to connect to h port 80: Connection timed out",
            False,
        ),
        ("git fetch timed out after 120 s", False),
    ],
)
def test_which_fetch_failures_mean_no_such_remote(stderr: str, missing: bool) -> None:
    """git's words for a missing repository (HTTP 404, ssh hosts) versus offline."""
    from kgai_tui.sync.git import _no_such_remote
    from kgai_tui.sync.run import GitRun

    assert _no_such_remote(GitRun(False, b"", stderr)) is missing


def test_rotate_then_git_sync_reconciles_the_retired_shard(
    tmp_path: Path, bare: Path
) -> None:
    """A store copied with ``cp -r`` forks its twin's install id; after ``rotate``
    the copy's next git sync records its local-only decision again under its new
    id, adopts the remote's version of the retired shard (ours kept in the cache),
    and from then on both stores hold every decision either side made."""
    import shutil

    from kgai_tui.core.engine.open import open_engine
    from kgai_tui.core.store.cache_file import store_cache_dir
    from kgai_tui.core.wire.codec import decode_line

    a = make_store(tmp_path / "a", "ana", bare)
    record(a, "Invoices are PDF", "business_object", "invoice")
    sync(a)
    copy = tmp_path / "copy"
    shutil.copytree(a, copy)
    record(a, "Invoices are HTML", "business_object", "invoice")
    sync(a)
    record(copy, "Invoices are plain text", "business_object", "invoice")
    held = (copy / "log").iterdir().__next__()
    held_before = held.read_bytes()
    refused = cli("sync", "--store", str(copy), "--json")
    assert refused.returncode == 1, refused
    assert "shard fork detected" in refused.stderr
    assert "kgai-tui rotate" in refused.stderr
    name = f"log/{held.name}"
    pushed = git("show", f"main:{name}", cwd=bare).encode()
    assert pushed == (a / name).read_bytes()  # the twin's lines were not overwritten
    rotated = ok_json("rotate", "--store", str(copy))
    assert rotated["old_install"] == held.stem != rotated["install"]
    done = cli("sync", "--store", str(copy), "--json")
    assert done.returncode == 0, done.stderr
    assert "reconciled the retired shard" in done.stderr, done.stderr
    assert held.read_bytes() == (a / "log" / held.name).read_bytes()
    kept = list((store_cache_dir(copy) / "retired").iterdir())
    assert [p.read_bytes() for p in kept] == [held_before]
    record(a, "Invoices are numbered per year", "business_object", "invoice")
    sync(a)
    sync(copy)
    sync(a)
    titles = {
        "Invoices are HTML",
        "Invoices are PDF",
        "Invoices are numbered per year",
        "Invoices are plain text",
    }
    for store in (a, copy):
        for p in (open_engine(store).projection, _model_projection(store)):
            recorded = {t for t, h in zip(p.dec_title, p.dec_hash, strict=True) if h}
            assert recorded == titles, (store, recorded)
    assert digest(a) == digest(copy)
    for shard in (copy / "log").glob("*.ndjson"):
        for raw in shard.read_bytes().splitlines():
            line = decode_line(raw)
            assert line.hash_ok and line.decision_id_ok, shard

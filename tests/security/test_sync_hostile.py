"""Issue 15.1, 15.2 and 15.9: a hostile git remote can only ever add foreign lines.

Every case is real git: a store syncs with a bare remote, then a hostile "teammate"
clones that remote, rewrites it (cut or deleted shards, rewritten lines, a committed
``kg.config.json``, ``.gitattributes``, a ``.GIT/hooks`` tree, symlinks, a gitlink)
and pushes, and the store syncs again through the real ``kgai-tui`` console script.
Afterwards every line the store held is still there byte for byte, ``doctor`` is
healthy, the config is ours, the refused paths are named, and later syncs work.

The helpers here (:class:`Hostile`, :func:`make_store`...) are shared with
``test_sync_property.py``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from builders import as_person

from kgai_tui.core.store.config_file import load_config, save_config
from kgai_tui.core.wire.codec import (
    compute_hash,
    decision_id,
    decode_line,
    marshal_event,
)

KGAI_TUI = str(Path(sys.executable).parent / "kgai-tui")
MALLORY = (
    "-c",
    "user.name=mallory",
    "-c",
    "user.email=mallory@evil",
    "-c",
    "commit.gpgsign=false",
)


def cli(
    *args: str, env: dict[str, str] | None = None, timeout: float = 120
) -> subprocess.CompletedProcess[str]:
    """Run the real console script."""
    return subprocess.run(
        [KGAI_TUI, *as_person(args)],
        capture_output=True,
        text=True,
        env={**os.environ, **(env or {})},
        timeout=timeout,
        stdin=subprocess.DEVNULL,
        check=False,
    )


def ok_json(*args: str) -> Any:
    """Run a ``--json`` command that must succeed; return its parsed output."""
    done = cli(*args, "--json")
    assert done.returncode == 0, (args, done.stdout, done.stderr)
    return json.loads(done.stdout)


def git(*args: str, cwd: Path, stdin: bytes | None = None) -> str:
    """Run git as the hostile teammate; it must succeed. Returns stdout."""
    done = subprocess.run(
        ["git", *MALLORY, *args],
        cwd=cwd,
        input=stdin,
        capture_output=True,
        check=False,
        timeout=60,
    )
    assert done.returncode == 0, (args, done.stderr)
    return done.stdout.decode("utf-8", "replace")


def make_store(root: Path, actor: str, remote: Path) -> Path:
    """``kgai-tui init`` a store whose session ``remote`` is ``remote``."""
    ok_json("init", "--store", str(root), "--actor", actor)
    cfg = load_config(root)
    assert cfg is not None
    save_config(root, replace(cfg, remote=str(remote)))
    return root


def record(store: Path, title: str) -> str:
    """Record one decision through the CLI; return its id."""
    doc = {
        "decision": {
            "title": title,
            "rationale": f"{title} (why)",
            "mutations": [{"op": "upsert_element", "kind": "service", "name": title}],
        }
    }
    done = subprocess.run(
        [KGAI_TUI, "record", "--store", str(store), "--json"],
        input=json.dumps(doc),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return str(json.loads(done.stdout)["decisions"][0]["id"])


def sync(store: Path) -> Any:
    """``kgai-tui sync --json``; it must succeed."""
    return ok_json("sync", "--store", str(store))


def install_id(store: Path) -> str:
    """The store's own install id."""
    cfg = load_config(store)
    assert cfg is not None
    return cfg.install_id


def own_shard(store: Path) -> Path:
    """This install's shard file."""
    return store / "log" / f"{install_id(store)}.ndjson"


def assert_healthy(store: Path) -> None:
    """``kgai-tui doctor --json`` finds nothing, and the store is still a store."""
    doctor = ok_json("doctor", "--store", str(store))
    assert doctor["ok"] is True and doctor["problems"] is None, doctor
    assert ok_json("status", "--store", str(store))["ok"] is True


def refused_paths(out: Any) -> list[str]:
    """The paths a ``sync --json`` output says it refused."""
    return [item["path"] for item in out["sync"].get("refused") or []]


def rehashed(line: bytes, title: str) -> bytes:
    """The same event with another title, its decision id and hash made valid again.

    This is what a capable attacker writes: a line every gate accepts on its own.
    """
    event = decode_line(line).event
    assert event.decision is not None
    dec = replace(event.decision, title=title)
    dec = replace(dec, id=decision_id(dec))
    event = replace(event, decision=dec)
    return marshal_event(replace(event, hash=compute_hash(event))) + b"\n"


class Hostile:
    """A clone of the team's remote in the hands of an attacker who can push anything."""

    def __init__(self, bare: Path, work: Path) -> None:
        """Clone ``bare``'s ``main`` into ``work``."""
        self.bare = bare
        self.work = work
        subprocess.run(
            ["git", "clone", "-q", "-b", "main", str(bare), str(work)],
            check=True,
            capture_output=True,
            timeout=60,
        )

    @classmethod
    def existing(cls, bare: Path, work: Path) -> Hostile:
        """The attacker's clone already at ``work`` (a copied test world)."""
        hostile = cls.__new__(cls)
        hostile.bare, hostile.work = bare, work
        return hostile

    def git(self, *args: str, stdin: bytes | None = None) -> str:
        """Run git in the clone."""
        return git(*args, cwd=self.work, stdin=stdin)

    def refresh(self) -> None:
        """Start again from the remote's current ``main`` (what the victim pushed)."""
        self.git("fetch", "-q", "origin")
        self.git("reset", "-q", "--hard", "origin/main")
        self.git("clean", "-q", "-fdx")

    def push(self, message: str) -> None:
        """Commit everything in the clone and force the remote's ``main`` to it."""
        self.git("add", "-A", "-f", ".")
        self.git("commit", "-q", "--allow-empty", "-m", message)
        self.git("push", "-q", "-f", "origin", "HEAD:main")

    def mktree(self, entries: list[str]) -> str:
        """Write a tree of ``git mktree`` lines; return its id.

        Plumbing writes what porcelain refuses (a ``.GIT`` directory, for one).
        """
        return self.git("mktree", stdin=("\n".join(entries) + "\n").encode()).strip()

    def push_tree(self, entries: list[str], message: str) -> None:
        """Push a commit on top of HEAD whose root tree is ``entries``."""
        tree = self.mktree(entries)
        commit = self.git("commit-tree", tree, "-p", "HEAD", "-m", message).strip()
        self.git("push", "-q", "-f", "origin", f"{commit}:main")

    def tree_lines(self, tree: str) -> list[str]:
        """A tree (``HEAD``, ``HEAD:log``) as ``git mktree`` lines."""
        return [line for line in self.git("ls-tree", tree).splitlines() if line]

    def blob(self, data: bytes) -> str:
        """Write a blob; return its id."""
        return self.git("hash-object", "-w", "--stdin", stdin=data).strip()


def remote_blob(bare: Path, path: str) -> bytes:
    """A file of the remote's ``main``."""
    return subprocess.run(
        ["git", "show", f"main:{path}"],
        cwd=bare,
        capture_output=True,
        check=True,
        timeout=60,
    ).stdout


def remote_files(bare: Path) -> list[str]:
    """Every path in the remote's ``main``."""
    out = subprocess.run(
        ["git", "ls-tree", "-r", "--name-only", "main"],
        cwd=bare,
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    ).stdout
    return sorted(out.split())


@pytest.fixture
def bare(tmp_path: Path) -> Path:
    """An empty bare repository: the team's remote."""
    path = tmp_path / "remote.git"
    subprocess.run(["git", "init", "-q", "--bare", str(path)], check=True)
    return path


# ---------------------------------------------------------------- 15.1 deletions


def test_a_remote_cannot_cut_or_delete_our_shard(tmp_path: Path, bare: Path) -> None:
    """Our shard cut to one line, then deleted, then rewritten: every line survives."""
    a = make_store(tmp_path / "a", "ana", bare)
    for n in range(3):
        record(a, f"Decision {n}")
    sync(a)
    shard = own_shard(a)
    held = shard.read_bytes()
    assert held.count(b"\n") == 3
    name = f"log/{shard.name}"
    evil = Hostile(bare, tmp_path / "evil")

    evil.refresh()
    (evil.work / name).write_bytes(held.split(b"\n")[0] + b"\n")
    evil.push("cut ana's shard to one line")
    out = sync(a)
    assert shard.read_bytes() == held
    assert out["sync"]["pulled"] is False and out["applied"] == 0
    assert remote_blob(bare, name) == held  # ours won on the remote too
    assert_healthy(a)

    evil.refresh()
    evil.git("rm", "-q", name)
    evil.push("delete ana's shard")
    sync(a)
    assert shard.read_bytes() == held
    assert_healthy(a)
    assert remote_blob(bare, name) == held

    # A line rewritten so that every gate passes is still not ours to take.
    evil.refresh()
    lines = held.splitlines(keepends=True)
    forged = [lines[0], rehashed(lines[1], "Decision stolen"), lines[2]]
    (evil.work / name).write_bytes(b"".join(forged))
    evil.push("rewrite ana's second decision")
    sync(a)
    assert shard.read_bytes() == held
    assert_healthy(a)
    record(a, "Decision 3")  # the store still writes and syncs
    assert sync(a)["sync"]["pushed"] is True
    assert remote_blob(bare, name) == shard.read_bytes()


def test_a_forged_continuation_of_our_shard_stops_the_sync_and_loses_nothing(
    tmp_path: Path, bare: Path
) -> None:
    """A valid line appended to our own shard on the remote reads as a copied store:
    the sync stops with the fork error before pushing; our shard, the remote's
    tree and our config are as they were (a denial of sync, never a loss)."""
    a = make_store(tmp_path / "a", "ana", bare)
    record(a, "Decision 0")
    sync(a)
    shard = own_shard(a)
    held = shard.read_bytes()
    config = (a / "kg.config.json").read_bytes()
    name = f"log/{shard.name}"
    last = decode_line(held.splitlines()[-1]).event
    assert last.decision is not None
    dec = replace(last.decision, title="Mallory speaks for ana")
    dec = replace(dec, id=decision_id(dec))
    forged = replace(last, decision=dec, lamport=last.lamport + 1, parents=(last.hash,))
    line = marshal_event(replace(forged, hash=compute_hash(forged))) + b"\n"
    evil = Hostile(bare, tmp_path / "evil")
    evil.refresh()
    (evil.work / name).write_bytes(held + line)
    evil.push("continue ana's chain")
    record(a, "Decision 1")
    done = cli("sync", "--store", str(a), "--json")
    assert done.returncode == 1, done
    assert "shard fork detected" in done.stderr and "rotate" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1
    assert shard.read_bytes().startswith(held) and line not in shard.read_bytes()
    assert shard.read_bytes().count(b"\n") == 2
    assert remote_blob(bare, name) == held + line  # nothing pushed
    assert (a / "kg.config.json").read_bytes() == config
    assert_healthy(a)


def test_a_remote_cannot_rewrite_or_cut_a_teammates_shard(
    tmp_path: Path, bare: Path
) -> None:
    """Lines of a foreign shard we hold stay; bad, forged and forked lines are refused."""
    a = make_store(tmp_path / "a", "ana", bare)
    b = make_store(tmp_path / "b", "bo", bare)
    for n in range(3):
        record(b, f"Bo decides {n}")
    sync(b)
    record(a, "Ana decides")
    assert sync(a)["applied"] == 3
    name = f"log/{own_shard(b).name}"
    held = (a / name).read_bytes()
    assert held == own_shard(b).read_bytes()
    evil = Hostile(bare, tmp_path / "evil")

    # Cut Bo's shard and tamper with a line without fixing its hash.
    evil.refresh()
    lines = held.splitlines(keepends=True)
    (evil.work / name).write_bytes(lines[0].replace(b"Bo decides", b"Mallory says"))
    evil.push("cut and tamper with bo's shard")
    out = sync(a)
    assert (a / name).read_bytes() == held
    assert out["applied"] == 0 and out["sync"]["pulled"] is False
    assert name in refused_paths(out)
    assert "bad content hash" in out["sync"]["detail"]
    assert_healthy(a)

    # A forged line with valid hashes that forks Bo's chain is refused too.
    evil.refresh()
    (evil.work / name).write_bytes(
        lines[0] + rehashed(lines[1], "Bo never said this") + lines[2]
    )
    evil.push("fork bo's chain")
    out = sync(a)
    assert (a / name).read_bytes() == held
    assert out["applied"] == 0
    assert name in refused_paths(out)
    assert_healthy(a)
    assert remote_blob(bare, name) == held

    # Bo's genuine new lines still arrive, appended after what Ana held.
    record(b, "Bo decides again")
    out = sync(b)
    assert out["sync"]["pushed"] is True, out
    out = sync(a)
    assert out["applied"] == 1 and out["sync"]["pulled"] is True
    assert (a / name).read_bytes() == own_shard(b).read_bytes()
    assert (a / name).read_bytes().startswith(held)
    assert_healthy(a)


# ---------------------------------------------------------------- 15.2 config


def test_a_remote_cannot_replace_our_config(tmp_path: Path, bare: Path) -> None:
    """A committed kg.config.json is refused: our identity, actor and remote stay."""
    a = make_store(tmp_path / "a", "ana", bare)
    record(a, "Use Postgres")
    sync(a)
    config = (a / "kg.config.json").read_bytes()
    ours = install_id(a)
    trap = tmp_path / "attacker.git"
    subprocess.run(["git", "init", "-q", "--bare", str(trap)], check=True)
    evil = Hostile(bare, tmp_path / "evil")
    evil.refresh()
    stolen = {
        "install_id": "i-stolen",
        "actor": "mallory",
        "remote": str(trap),
        "schema_version": 1,
    }
    (evil.work / "kg.config.json").write_text(json.dumps(stolen, indent=2) + "\n")
    evil.push("take over ana's identity")

    human = cli("sync", "--store", str(a))
    assert human.returncode == 0, human.stderr
    assert "refused" in human.stdout and "kg.config.json" in human.stdout
    assert (a / "kg.config.json").read_bytes() == config
    record(a, "Use Redis")  # the next record writes under our own id
    assert own_shard(a).name == f"{ours}.ndjson"
    assert own_shard(a).read_bytes().count(b"\n") == 2
    assert not (a / "log" / "i-stolen.ndjson").exists()
    out = sync(a)  # and the next plain sync goes to our remote, not the attacker's
    assert out["sync"]["remote"] == str(bare) and out["sync"]["pushed"] is True
    assert "kg.config.json" not in remote_files(bare)
    assert (
        subprocess.run(
            ["git", "for-each-ref"],
            cwd=trap,
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        == ""
    )
    assert (a / "kg.config.json").read_bytes() == config

    evil.refresh()  # once more, with the JSON output
    (evil.work / "kg.config.json").write_text(json.dumps(stolen) + "\n")
    evil.push("again")
    out = sync(a)
    assert "kg.config.json" in refused_paths(out)
    assert "kg.config.json" in out["sync"]["detail"]
    assert (a / "kg.config.json").read_bytes() == config
    assert_healthy(a)


# ---------------------------------------------------------------- 15.9 lower risks


def plant(evil: Hostile, proof: Path) -> None:
    """Push hostile scaffold, symlinks, stray files, a gitlink and a ``.GIT`` tree.

    The hook in ``.GIT/hooks`` would write ``proof`` if git ever ran it.
    """
    evil.refresh()
    (evil.work / ".gitignore").write_text("graph.kuzu*\nlog/\n")
    os.symlink("/dev/null", evil.work / "log" / "ievil.ndjson")
    os.symlink("../kg.config.json", evil.work / "log" / "iconfig.ndjson")
    os.symlink("/etc/passwd", evil.work / "passwd")
    (evil.work / "notes.txt").write_text("not a shard\n")
    (evil.work / "log" / "README").write_text("not a shard either\n")
    (evil.work / "log" / "sub").mkdir()
    (evil.work / "log" / "sub" / "inested.ndjson").write_text("{}\n")
    evil.push("scaffold, symlinks, stray files")
    evil.refresh()
    hook = evil.blob(f"#!/bin/sh\necho pwned > {proof}\n".encode())
    hooks = evil.mktree([f"100755 blob {hook}\tpost-merge"])
    dotgit = evil.mktree([f"040000 tree {hooks}\thooks"])
    head = evil.git("rev-parse", "HEAD").strip()
    log = evil.mktree(
        [*evil.tree_lines("HEAD:log"), f"160000 commit {head}\tisub.ndjson"]
    )
    attrs = evil.blob(
        b"*.ndjson merge=union\n*.ndjson merge=binary working-tree-encoding=UTF-16LE\n"
    )
    root = [
        line
        for line in evil.tree_lines("HEAD")
        if not line.endswith(("\tlog", "\t.gitattributes"))
    ]
    evil.push_tree(
        [
            *root,
            f"100644 blob {attrs}\t.gitattributes",
            f"040000 tree {log}\tlog",
            f"040000 tree {dotgit}\t.GIT",
        ],
        "merge drivers and encodings, a .GIT tree and a gitlink",
    )


def test_hostile_scaffold_hooks_symlinks_and_gitlinks_are_refused(
    tmp_path: Path, bare: Path
) -> None:
    """.gitattributes, a .GIT/hooks tree, symlinks and a gitlink: refused, sync goes on."""
    a = make_store(tmp_path / "a", "ana", bare)
    record(a, "Use Kafka")
    sync(a)
    attributes = (a / ".gitattributes").read_bytes()
    gitignore = (a / ".gitignore").read_bytes()
    evil = Hostile(bare, tmp_path / "evil")

    plant(evil, tmp_path / "pwned")
    out = sync(a)
    refused = refused_paths(out)
    for path in (
        ".gitattributes",
        ".gitignore",
        "log/ievil.ndjson",
        "log/iconfig.ndjson",
        "passwd",
        "notes.txt",
        "log/README",
        "log/sub/inested.ndjson",
        "log/isub.ndjson",
        ".GIT/hooks/post-merge",
    ):
        assert path in refused, (path, refused)
    reasons = {item["path"]: item["reason"] for item in out["sync"]["refused"]}
    assert "symlink" in reasons["log/ievil.ndjson"]
    assert "submodule" in reasons["log/isub.ndjson"]
    assert (a / ".gitattributes").read_bytes() == attributes
    assert (a / ".gitignore").read_bytes() == gitignore
    for planted in ("ievil.ndjson", "iconfig.ndjson", "isub.ndjson", "README", "sub"):
        assert not os.path.lexists(a / "log" / planted), planted
    for planted in ("passwd", "notes.txt", ".GIT"):
        assert not os.path.lexists(a / planted), planted
    assert not (tmp_path / "pwned").exists()
    assert_healthy(a)
    plant(evil, tmp_path / "pwned")  # once more, for the human output
    human = cli("sync", "--store", str(a))
    assert human.returncode == 0, human.stderr
    assert "refused" in human.stdout and ".GIT/hooks/post-merge" in human.stdout

    # Later syncs still work, and the remote holds only our scaffold and shards.
    record(a, "Use Kafka for audit")
    out = sync(a)
    assert out["sync"]["pushed"] is True and "refused" not in out["sync"]
    assert remote_files(bare) == sorted(
        [".gitattributes", ".gitignore", f"log/{own_shard(a).name}"]
    )
    assert remote_blob(bare, ".gitattributes") == attributes
    c = make_store(tmp_path / "c", "cy", bare)
    assert sync(c)["applied"] == 2
    assert_healthy(c)


@pytest.mark.parametrize("url", ["fd::0", "fd::3,4", "ext::sh -c touch% x", "EXT::x"])
def test_fd_and_ext_remotes_are_refused_at_once(
    tmp_path: Path, bare: Path, url: str
) -> None:
    """``fd::`` and ``ext::`` remotes: exit 2 and one line, before any git runs."""
    a = make_store(tmp_path / "a", "ana", bare)
    record(a, "Use Kafka")
    started = time.monotonic()
    done = cli("sync", "--store", str(a), "--remote", url, timeout=20)
    assert time.monotonic() - started < 10
    assert done.returncode == 2 and done.stdout == ""
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "refusing remote" in lines[0], lines
    cfg = load_config(a)
    assert cfg is not None
    save_config(a, replace(cfg, remote=url))  # the same from kg.config.json
    as_json = cli("sync", "--store", str(a), "--json", timeout=20)
    assert as_json.returncode == 2
    assert json.loads(as_json.stdout)["ok"] is False
    assert len(as_json.stderr.strip().splitlines()) == 1


def test_sync_output_shows_remote_text_inertly() -> None:
    """Remote-chosen path names, teammates' titles and git's messages cannot act."""
    from kgai_tui.sync.git import GitOutcome
    from kgai_tui.sync.refusal import Refusal, shown_path
    from kgai_tui.sync.sync import SyncReport, render_sync

    evil = "x\x1b]0;PWNED\x07\x9b2J\u202eevil\u200b"
    group = {
        "element_id": "e_" + evil,
        "heads": ["d_1", "d_2"],
        "kind": "feature",
        "name": evil,
        "titles": [evil, "plain"],
    }
    path = shown_path(("log/" + evil + ".ndjson").encode() + b"\xff")
    assert path.isascii() and path.isprintable()
    report = SyncReport(
        applied=1,
        conflicts=[group],
        new_conflicts=[group],
        outcome=GitOutcome(
            pulled=True,
            detail="push failed: remote: " + evil,
            refused=(Refusal(path, "a symlink: only regular shard files are taken"),),
            refused_total=1,
        ),
        remote="/srv/" + evil,
    )
    text = render_sync(report)
    for ch in text:
        assert ch == "\n" or (ch.isprintable() and ch not in "\u202e\u200b"), repr(ch)
    assert "refused from the remote: log/x\\x1b]0;PWNED\\x07" in text


# ------------------------------------------------ what the reference wrote arrives


def test_shards_the_reference_wrote_arrive_whole(tmp_path: Path, bare: Path) -> None:
    """The reference engine's own shards, pushed by a teammate, are taken line for line.

    The chain rule must not refuse what ``kg`` writes: these shards (from the Go
    engine's own code) chain per shard but are not in lamport order.
    """
    a = make_store(tmp_path / "a", "ana", bare)
    record(a, "Ours")
    sync(a)
    mate = Hostile(bare, tmp_path / "mate")
    vectors = Path(__file__).parents[1] / "fixtures" / "go-vectors" / "log"
    for shard in sorted(vectors.glob("*.ndjson")):
        (mate.work / "log" / shard.name).write_bytes(shard.read_bytes())
    mate.push("a teammate's kg shards")
    out = sync(a)
    assert refused_paths(out) == [], out
    for shard in sorted(vectors.glob("*.ndjson")):
        assert (a / "log" / shard.name).read_bytes() == shard.read_bytes()
    assert_healthy(a)

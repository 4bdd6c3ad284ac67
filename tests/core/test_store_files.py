"""Store scaffold, ``kg.config.json``, machine binding and the lock (spec 1.2-1.5)."""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import re
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from kgai_tui.core.errors import LockTimeoutError, RefusedError
from kgai_tui.core.store.config_file import (
    StoreConfig,
    load_config,
    machine_fingerprint,
    mint_install_id,
    save_config,
)
from kgai_tui.core.store.scaffold import (
    GITATTRIBUTES,
    GITIGNORE,
    glob_match,
    merge_own_file,
)
from kgai_tui.core.write.lock import store_lock
from kgai_tui.core.write.writes import init_store, record


def _files(root: Path) -> dict[str, bytes]:
    """Every file of the store outside .git, by relative path."""
    return {
        str(p.relative_to(root)): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and p.relative_to(root).parts[0] != ".git"
    }


def test_init_lays_out_the_exact_store(tmp_path: Path) -> None:
    """log/ 0755, config 0600 in MarshalIndent form, exact scaffold, git and driver."""
    root = tmp_path / "store"
    result = init_store(root, actor="alice")
    assert stat.S_IMODE((root / "log").stat().st_mode) == 0o755
    assert stat.S_IMODE((root / "kg.config.json").stat().st_mode) == 0o600
    assert re.fullmatch(r"i[0-9a-f]{12}4[0-9a-f]{3}", result.install_id)
    cfg = (root / "kg.config.json").read_text()
    machine = machine_fingerprint()
    assert cfg == (
        "{\n"
        f'  "install_id": "{result.install_id}",\n'
        '  "actor": "alice",\n'
        '  "schema_version": 1,\n'
        f'  "machine": "{machine}"\n'
        "}\n"
    )
    assert (root / ".gitignore").read_text() == GITIGNORE
    assert GITIGNORE.splitlines() == [
        "graph.kuzu*",
        "*.so",
        ".kg.lock",
        "kg.config.json",
        ".autosync-stamp",
        "last-autosync.json",
    ]
    assert (
        (root / ".gitattributes").read_text()
        == GITATTRIBUTES
        == "*.ndjson merge=union\n"
    )
    assert (root / ".kg.lock").read_bytes() == b""
    driver = subprocess.run(
        ["git", "config", "merge.union.driver"],
        cwd=root,
        capture_output=True,
        text=True,
    )
    assert driver.stdout.strip() == "git merge-file --union %A %O %B"
    assert result.to_obj() == {
        "actor": "alice",
        "install_id": result.install_id,
        "ok": True,
        "remote": "",
        "root": str(root),
    }


def test_init_is_idempotent(tmp_path: Path) -> None:
    """A second init keeps the identity and every file byte for byte."""
    root = tmp_path / "store"
    first = init_store(root, actor="alice")
    before = _files(root)
    second = init_store(root)
    assert second.install_id == first.install_id and second.actor == "alice"
    assert second.written == () and not second.created
    assert _files(root) == before


def test_actor_precedence(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """--actor, then the config, then KGAI_ACTOR, then git user.name, then $USER."""
    monkeypatch.setenv("USER", "from-user")
    assert init_store(tmp_path / "a").actor == "from-user"
    (tmp_path / "home" / ".gitconfig").write_text("[user]\n\tname = From Git \n")
    assert init_store(tmp_path / "b").actor == "From Git"
    monkeypatch.setenv("KGAI_ACTOR", "from-env")
    assert init_store(tmp_path / "c").actor == "from-env"
    assert init_store(tmp_path / "c", actor="explicit").actor == "explicit"
    assert init_store(tmp_path / "c").actor == "explicit"  # the config now wins
    monkeypatch.delenv("USER")
    (tmp_path / "home" / ".gitconfig").unlink()
    monkeypatch.delenv("KGAI_ACTOR")
    assert init_store(tmp_path / "d").actor == "unknown"


def test_foreign_gitignore_is_refused_before_anything_is_created(
    tmp_path: Path,
) -> None:
    """A .gitignore without the marker is not ours: refuse and create nothing."""
    root = tmp_path / "store"
    root.mkdir()
    (root / ".gitignore").write_text("node_modules/\n")
    with pytest.raises(
        RefusedError, match=r"refusing to overwrite .*not written by kgai"
    ):
        init_store(root)
    assert sorted(os.listdir(root)) == [".gitignore"]


def test_directory_of_unrelated_files_is_refused(tmp_path: Path) -> None:
    """init will not turn a project directory into a store."""
    (tmp_path / "proj").mkdir()
    (tmp_path / "proj" / "README.md").write_text("hi")
    with pytest.raises(RefusedError, match="already holds other files"):
        init_store(tmp_path / "proj")


def test_merge_keeps_user_lines_but_never_breaks_the_scaffold() -> None:
    """Extra rules survive; un-ignoring the config, ignoring shards, markers do not."""
    existing = (
        "graph.kuzu*\nnode_modules/\n!kg.config.json\n!graph.kuzu.wal\nlog/\n*.ndjson\n"
        "<<<<<<< HEAD\n=======\n>>>>>>> theirs\n  *.so  \n\ntmp/*\nnode_modules/\n"
    )
    merged = merge_own_file(
        existing,
        GITIGNORE,
        "graph.kuzu",
        ["log/i0123456789abcdef.ndjson", "log/x.ndjson"],
    )
    assert merged == GITIGNORE + "node_modules/\ntmp/*\n"
    assert merge_own_file(GITIGNORE, GITIGNORE, "graph.kuzu", []) == GITIGNORE
    assert merge_own_file("mine\n", GITIGNORE, "graph.kuzu", []) is None
    assert merge_own_file(None, GITATTRIBUTES, "*.ndjson merge=union") == GITATTRIBUTES


@pytest.mark.parametrize(
    ("pattern", "path", "matches"),
    [
        ("log/", "log/i1.ndjson", True),
        ("/log/*", "log/i1.ndjson", True),
        ("*.ndjson", "log/i1.ndjson", True),
        ("**", "log/i1.ndjson", True),
        ("i1.ndjson", "log/i1.ndjson", True),
        ("l?g", "log/i1.ndjson", True),
        ("[a-k]og", "log/i1.ndjson", False),
        ("[^a-k]og", "log/i1.ndjson", True),
        ("node_modules/", "log/i1.ndjson", False),
        ("graph.kuzu*", "graph.kuzu.wal", True),
        ("[", "graph.kuzu", False),
    ],
)
def test_glob_match_is_generous(pattern: str, path: str, matches: bool) -> None:
    """The scaffold guard matches whole path, base name and parents (spec 1.3)."""
    assert glob_match(pattern, path) is matches


def test_project_gitignore_gets_the_kgai_block_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The default store of a git project is ignored by the project, once."""
    project = tmp_path / "proj"
    (project / ".git").mkdir(parents=True)
    (project / ".gitignore").write_text("dist")
    monkeypatch.setenv("KGAI_PROJECT", str(project))
    init_store(project / ".kgai" / "store")
    init_store(project / ".kgai" / "store")
    assert (project / ".gitignore").read_text() == (
        "dist\n# kgai per-project knowledge graph store (own git/sync cycle)\n.kgai/\n"
    )


def test_machine_fingerprint_vector(monkeypatch: pytest.MonkeyPatch) -> None:
    """KGAI_MACHINE=laptop-A gives the spec's fingerprint."""
    monkeypatch.setenv("KGAI_MACHINE", "laptop-A")
    assert machine_fingerprint() == "m0f0b2a93b687e858"


def test_moved_store_rotates_its_identity(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A config bound to another machine retires its id and writes a new shard."""
    root = tmp_path / "store"
    monkeypatch.setenv("KGAI_MACHINE", "laptop-A")
    old = init_store(root, actor="alice").install_id
    record(root, '{"decision":{"title":"on A","supersedes_on":["X"]}}')
    monkeypatch.setenv("KGAI_MACHINE", "laptop-B")
    notices: list[str] = []
    record(
        root,
        '{"decision":{"title":"on B","supersedes_on":["X"]}}',
        on_notice=notices.append,
    )
    cfg = load_config(root)
    assert cfg is not None and cfg.install_id != old
    assert cfg.retired_installs == (old,)
    assert cfg.machine == "m" + hashlib.sha256(b"laptop-B").hexdigest()[:16]
    assert any(old in n and "retired" in n for n in notices)
    assert sorted(p.name for p in (root / "log").iterdir()) == sorted(
        [f"{old}.ndjson", f"{cfg.install_id}.ndjson"]
    )


def test_config_round_trips_with_go_decoding(tmp_path: Path) -> None:
    """Keys match case-insensitively, unknown keys go, omitempty fields stay out."""
    (tmp_path / "kg.config.json").write_text(
        json.dumps(
            {
                "INSTALL_ID": "iabc",
                "Actor": "x",
                "extra": 1,
                "remote": None,
                "schema_version": 0,
                "retired_installs": ["i1"],
            }
        )
    )
    cfg = load_config(tmp_path)
    assert cfg == StoreConfig(install_id="iabc", actor="x", retired_installs=("i1",))
    save_config(tmp_path, cfg)
    assert (tmp_path / "kg.config.json").read_text() == (
        '{\n  "install_id": "iabc",\n  "actor": "x",\n  "schema_version": 1,\n'
        '  "retired_installs": [\n    "i1"\n  ]\n}\n'
    )
    assert re.fullmatch(r"i[0-9a-f]{16}", mint_install_id())


def test_lock_wait_is_bounded(tmp_path: Path) -> None:
    """A held lock gives LockTimeoutError after the wait, not a hang."""
    root = tmp_path / "store"
    init_store(root)
    fd = os.open(root / ".kg.lock", os.O_RDWR)
    fcntl.flock(fd, fcntl.LOCK_EX)
    try:
        start = time.monotonic()
        with (
            pytest.raises(LockTimeoutError, match="another writer has held"),
            store_lock(root, timeout=0.3),
        ):
            pass
        assert 0.25 < time.monotonic() - start < 2
    finally:
        os.close(fd)
    with store_lock(root, timeout=1):  # free again, and the abandoned waiter let go
        pass


def test_lock_is_granted_as_soon_as_it_is_released(tmp_path: Path) -> None:
    """A waiter blocks in flock and gets the lock right after another process exits."""
    root = tmp_path / "store"
    init_store(root)
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import fcntl, os, sys, time\n"
            "fd = os.open(sys.argv[1], os.O_RDWR)\n"
            "fcntl.flock(fd, fcntl.LOCK_EX)\n"
            "print('held', flush=True)\n"
            "time.sleep(0.4)\n",
            str(root / ".kg.lock"),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert holder.stdout is not None and holder.stdout.readline() == "held\n"
    start = time.monotonic()
    with store_lock(root, timeout=5):
        waited = time.monotonic() - start
    holder.wait()
    assert 0.2 < waited < 1.5


def test_an_append_is_read_from_the_end_of_a_line_of_the_same_file(
    tmp_path: Path,
) -> None:
    """Every cache reads what was appended through ``scan_appended``: from where a
    line ends (or a torn line starts), in the file it fingerprinted; anything else
    is no append."""
    from builders import ShardWriter, decision

    from kgai_tui.core.store.logscan import scan_appended, scan_file

    w = ShardWriter("i01")
    for k in range(3):
        w.add(decision(f"d{k}"), lamport=k + 1, recorded_at="2026-01-01T00:00:00Z")
    data = w.to_bytes()
    log = tmp_path / "log"
    log.mkdir()
    shard = log / "i01.ndjson"
    shard.write_bytes(data)
    now = scan_file(shard).shard_print()
    first = data.index(b"\n") + 1
    tail = scan_appended(log, now, first, w.events[0].hash)
    assert tail is not None and tail.hashes == [e.hash for e in w.events[1:]]
    assert list(tail.offsets) == [first, data.index(b"\n", first) + 1]
    assert not tail.chain_breaks
    # Inside a line that was torn then: that line is read again from its start.
    torn = scan_appended(log, now, first - 3)
    assert torn is not None and torn.start == 0
    assert torn.hashes == [e.hash for e in w.events]
    # Inside a line that was an event then (all of it but its newline): no append.
    assert scan_appended(log, now, first - 1) is None
    assert scan_appended(log, now, 0) is not None
    other = log / "other.tmp"
    other.write_bytes(data)
    other.replace(shard)  # the same bytes, another file
    assert scan_appended(log, now, first) is None

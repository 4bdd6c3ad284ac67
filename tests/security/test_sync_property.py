"""Issue 15, property: no sequence of hostile remote rounds loses an acknowledged line.

Hypothesis draws a sequence of steps: local records, a genuine teammate recording and
syncing, and hostile rounds in which an attacker with push access rewrites the
team's remote (cut, deleted or rewritten shards, forged lines with valid hashes,
garbage, foreign files, a committed ``kg.config.json``, scaffold changes, symlinks,
an unrelated history) before the store syncs. After every sync, with real git:

* every shard file we held is a prefix of what we hold now (append-only);
* every event ever acknowledged by a local ``record`` is in our shard, byte for
  byte, and verifies;
* ``kg.config.json`` is byte-identical, and nothing but shard files is in ``log/``;
* doctor finds no problem.

A valid forgery of a store's *own* chain reads as a copied store: that sync stops
with the fork error before pushing, which is allowed (a denial, never a loss); the
invariants are checked after it all the same.

The steps run in-process (``record``, ``sync_store``); only git is a subprocess.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import stat
import subprocess
import tempfile
from dataclasses import dataclass, field, replace
from pathlib import Path

from builders import ShardWriter, decision, upsert
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_sync_hostile import Hostile, rehashed

from kgai_tui.core.engine.open import open_engine
from kgai_tui.core.reads.health import doctor_problems
from kgai_tui.core.store.config_file import load_config, save_config
from kgai_tui.core.store.install_ids import shard_install_id
from kgai_tui.core.wire.codec import decode_line
from kgai_tui.core.write.writes import init_store, record
from kgai_tui.sync.s3_protocol import ForkError
from kgai_tui.sync.sync import sync_store

Step = tuple[str, int, int]

#: Paths an attacker plants as regular files (none of them is a shard we take).
FOREIGN_FILES = (
    "notes.txt",
    "log/README",
    "log/sub/inested.ndjson",
    "LOG/iupper.ndjson",
    "log/Ibad.ndjson",
    "kg.config.json",
    ".gitattributes",
    ".gitignore",
    ".kg.lock",
)
#: Symlinks an attacker plants: (path, target).
SYMLINKS = (
    ("log/ilink.ndjson", "/dev/null"),
    ("log/iconf.ndjson", "../kg.config.json"),
    ("passwd", "/etc/passwd"),
)

ATTACKS = (
    "cut",
    "delete",
    "tamper",
    "forge",
    "garbage",
    "continue",
    "newshard",
    "file",
    "config",
    "symlink",
    "orphan",
)

steps = st.lists(
    st.one_of(
        st.tuples(st.just("record"), st.integers(1, 2), st.just(0)),
        st.tuples(st.just("teammate"), st.integers(1, 2), st.just(0)),
        st.tuples(st.sampled_from(ATTACKS), st.integers(0, 1), st.integers(0, 8)),
    ),
    min_size=2,
    max_size=6,
)


def _doc(title: str) -> bytes:
    return json.dumps(
        {
            "decision": {
                "title": title,
                "rationale": "why",
                "mutations": [{"op": "upsert_element", "kind": "svc", "name": title}],
            }
        }
    ).encode()


@dataclass
class World:
    """The victim store ``a``, a genuine teammate ``b``, the remote, the attacker."""

    tmp: Path
    bare: Path = field(init=False)
    a: Path = field(init=False)
    b: Path = field(init=False)
    evil: Hostile = field(init=False)
    acknowledged: list[bytes] = field(default_factory=list)
    config: bytes = b""
    counter: int = 0

    def __post_init__(self) -> None:
        """Point at the remote and both stores (made by :meth:`build`)."""
        self.bare = self.tmp / "remote.git"
        self.a = self.tmp / "a"
        self.b = self.tmp / "b"
        self.evil = Hostile.existing(self.bare, self.tmp / "evil")

    def build(self) -> None:
        """Make the remote and both stores; each records and syncs once."""
        subprocess.run(["git", "init", "-q", "--bare", str(self.bare)], check=True)
        for root, actor in ((self.a, "ana"), (self.b, "bo")):
            init_store(root, actor)
            self.point(root)
        self.teammate(2)
        self.record(1)
        self.sync()
        self.evil = Hostile(self.bare, self.tmp / "evil")

    def point(self, root: Path) -> None:
        """Make ``self.bare`` the store's remote (after a copy, too)."""
        cfg = load_config(root)
        assert cfg is not None
        save_config(root, replace(cfg, remote=str(self.bare)))

    @classmethod
    def copy_of(cls, template: World, tmp: Path) -> World:
        """A fresh world from a built one: copying the directories is much faster."""
        shutil.copytree(template.tmp, tmp, symlinks=True, dirs_exist_ok=True)
        world = cls(tmp, acknowledged=list(template.acknowledged))
        world.counter = template.counter
        for root in (world.a, world.b):
            world.point(root)
        world.config = (world.a / "kg.config.json").read_bytes()
        world.evil.git("remote", "set-url", "origin", str(world.bare))
        return world

    def own(self, root: Path) -> str:
        """``log/<install id>.ndjson`` of a store."""
        cfg = load_config(root)
        assert cfg is not None
        return f"log/{cfg.install_id}.ndjson"

    def record(self, count: int) -> None:
        """Record ``count`` decisions in ``a``; remember every acknowledged line."""
        shard = self.a / self.own(self.a)
        for _ in range(count):
            self.counter += 1
            before = shard.read_bytes() if shard.exists() else b""
            record(self.a, _doc(f"Ana decides {self.counter}"))
            after = shard.read_bytes()
            assert after.startswith(before)
            self.acknowledged += after[len(before) :].splitlines(keepends=True)
        self.config = (self.a / "kg.config.json").read_bytes()

    def teammate(self, count: int) -> None:
        """The genuine teammate records and syncs."""
        for _ in range(count):
            self.counter += 1
            record(self.b, _doc(f"Bo decides {self.counter}"))
        with contextlib.suppress(ForkError):
            sync_store(self.b)

    def shards(self) -> dict[str, bytes]:
        """Every file in ``a``'s log, by name."""
        return {p.name: p.read_bytes() for p in (self.a / "log").iterdir()}

    def sync(self) -> None:
        """Sync ``a`` and check every invariant."""
        before = self.shards()
        with contextlib.suppress(ForkError):
            sync_store(self.a)
        after = self.shards()
        for name, data in before.items():
            assert after[name].startswith(data), name
        own = (self.a / self.own(self.a)).read_bytes()
        lines = set(own.splitlines(keepends=True))
        for line in self.acknowledged:
            assert line in lines
            assert decode_line(line.rstrip(b"\n")).hash_ok
        assert (self.a / "kg.config.json").read_bytes() == self.config
        for entry in os.scandir(self.a / "log"):
            assert shard_install_id(entry.name) is not None, entry.name
            assert stat.S_ISREG(os.lstat(entry.path).st_mode), entry.name
        for planted in ("notes.txt", "passwd", "LOG", ".GIT"):
            assert not os.path.lexists(self.a / planted), planted
        assert doctor_problems(open_engine(self.a)) == []

    # ------------------------------------------------------------------ attacks

    def attack(self, kind: str, who: int, n: int) -> None:
        """One hostile round on the remote (``who`` picks ana's or bo's shard)."""
        evil = self.evil
        evil.refresh()
        target = self.own(self.a if who == 0 else self.b)
        path = evil.work / target
        data = path.read_bytes() if path.exists() else b""
        lines = data.splitlines(keepends=True)
        if kind == "cut":
            path.write_bytes(b"".join(lines[: n % (len(lines) + 1)]))
        elif kind == "delete":
            path.unlink(missing_ok=True)
        elif kind in ("tamper", "forge") and lines:
            i = n % len(lines)
            forged = (
                rehashed(lines[i], f"forged {n}")
                if kind == "forge"
                else lines[i].replace(b"decides", b"yields")
            )
            path.write_bytes(b"".join([*lines[:i], forged, *lines[i + 1 :]]))
        elif kind == "garbage":
            junk = (b"{}\n", b"not json\n", b'{"hash":"sha256:00"}\n', b"{", b"\n\n")
            path.write_bytes(data + junk[n % len(junk)])
        elif kind == "continue" and lines:
            path.write_bytes(data + self._continuation(lines, target, n))
        elif kind == "newshard":
            writer = ShardWriter(f"ievil{n}", "mallory")
            writer.add(
                decision(f"Mallory {n}", [upsert("svc", f"m{n}")], author="mallory"),
                lamport=1 + n,
                recorded_at="2026-01-01T00:00:00Z",
            )
            (evil.work / "log" / f"ievil{n}.ndjson").write_bytes(writer.to_bytes())
        elif kind == "file":
            planted = evil.work / FOREIGN_FILES[n % len(FOREIGN_FILES)]
            planted.parent.mkdir(parents=True, exist_ok=True)
            planted.write_text('{"install_id": "i-stolen", "actor": "mallory"}\n')
        elif kind == "config":
            stolen = {"install_id": "i-stolen", "actor": "mallory", "remote": "x"}
            (evil.work / "kg.config.json").write_text(json.dumps(stolen) + "\n")
            (evil.work / ".gitattributes").write_text("* -merge\n")
        elif kind == "symlink":
            link, dest = SYMLINKS[n % len(SYMLINKS)]
            os.symlink(dest, evil.work / link)
        elif kind == "orphan":
            evil.git("checkout", "-q", "--orphan", f"orphan{self.counter}")
            evil.git("rm", "-r", "-q", "--cached", ".")
            path.write_bytes(b"".join(lines[:1]))
            evil.git("add", "-f", target)
            evil.git("commit", "-q", "-m", "unrelated history")
            evil.git("push", "-q", "-f", "origin", "HEAD:main")
            evil.git("checkout", "-q", "-f", "main")
            self.counter += 1
            return
        evil.push(f"attack {kind}")

    def _continuation(self, lines: list[bytes], target: str, n: int) -> bytes:
        """A forged event that validly extends a shard's chain (accepted on purpose)."""
        tail = decode_line(lines[-1].rstrip(b"\n")).event
        writer = ShardWriter(tail.install_id, "mallory")
        writer.events.append(tail)
        writer.add(
            decision(f"Continued {n}", [upsert("svc", f"c{n}")], author="mallory"),
            lamport=tail.lamport + 1,
            recorded_at="2026-01-02T00:00:00Z",
        )
        del target
        return writer.to_bytes().splitlines(keepends=True)[-1]


#: One built world per test run (keyed by its tmp_path), copied for each example.
_TEMPLATES: dict[Path, World] = {}


@settings(
    max_examples=8,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(steps=steps)
def test_hostile_rounds_never_lose_an_acknowledged_line(
    tmp_path: Path, steps: list[Step]
) -> None:
    """Any interleaving of hostile rounds, records and teammates keeps every line."""
    template = _TEMPLATES.get(tmp_path)
    if template is None:
        template = _TEMPLATES[tmp_path] = World(tmp_path / "template")
        template.build()
    with tempfile.TemporaryDirectory() as tmp:
        world = World.copy_of(template, Path(tmp))
        for kind, a, b in steps:
            if kind == "record":
                world.record(a)
            elif kind == "teammate":
                world.teammate(a)
            else:
                world.attack(kind, a, b)
            world.sync()
        world.record(1)
        world.sync()
        assert world.acknowledged

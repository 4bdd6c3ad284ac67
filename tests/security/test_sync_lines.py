"""The line rules of a sync's pull, on bytes: what a remote copy may add to ours.

``sync_shard.new_lines`` is pure, so every rule is pinned here without git; the
real-git cases are in ``test_sync_hostile.py``.
"""

from __future__ import annotations

from dataclasses import replace

from builders import ShardWriter, decision, upsert

from kgai_tui.core.wire.codec import compute_hash, marshal_event
from kgai_tui.core.wire.model import Event
from kgai_tui.sync.shard import MAX_LAMPORT, new_lines
from kgai_tui.sync.tree import NOT_A_SHARD, TreeEntry, vet_tree

AT = "2026-01-01T00:00:00Z"


def chain(count: int, install: str = "ibo") -> tuple[ShardWriter, list[bytes]]:
    """A genuine shard of ``count`` events and its lines (with newlines)."""
    writer = ShardWriter(install, "bo")
    for n in range(count):
        writer.add(
            decision(f"Bo {n}", [upsert("svc", f"s{n}")]), lamport=n + 1, recorded_at=AT
        )
    return writer, writer.to_bytes().splitlines(keepends=True)


def line(event: Event) -> bytes:
    """An event's line, its hash made valid."""
    return (
        marshal_event(replace(event, hash=compute_hash(replace(event, hash=""))))
        + b"\n"
    )


def test_genuine_new_lines_are_appended_in_order() -> None:
    """Held lines are skipped; the rest extend the chain and are taken."""
    _, lines = chain(4)
    out, take = new_lines(b"".join(lines[:2]), b"".join(lines), "ibo")
    assert [o + b"\n" for o in out] == lines[2:]
    assert take.appended == 2 and not take.refused
    out, take = new_lines(b"", b"".join(lines), "ibo")  # a shard new to us
    assert take.appended == 4


def test_cut_deleted_and_reordered_copies_add_nothing() -> None:
    """A remote copy that lost or moved lines has nothing new: nothing is refused."""
    _, lines = chain(3)
    held = b"".join(lines)
    for remote in (b"", lines[0], lines[2] + lines[0] + lines[1]):
        out, take = new_lines(held, remote, "ibo")
        assert out == [] and not take.refused


def test_each_rule_refuses_its_line() -> None:
    """Bad hash, bad id, another install, a fork, lamports, garbage, a torn tail."""
    writer, lines = chain(2)
    tail = writer.events[-1]
    held = b"".join(lines)
    nxt = Event(
        hash="",
        op="assert",
        actor="bo",
        install_id="ibo",
        lamport=3,
        recorded_at=AT,
        parents=(tail.hash,),
        decision=decision("Bo 2", [upsert("svc", "s2")]),
    )
    good = line(nxt)
    cases = {
        "bad content hash": good.replace(b"Bo 2", b"Mo 2"),
        "decision id does not match its content": line(
            replace(nxt, decision=replace(nxt.decision, title="Other"))  # type: ignore[arg-type]
        ),
        "written by another install than the shard's": line(
            replace(nxt, install_id="imal")
        ),
        "does not extend the shard's hash chain": line(
            replace(nxt, parents=(writer.events[0].hash,))
        ),
        "lamport above 2^53": line(replace(nxt, lamport=MAX_LAMPORT + 1)),
        "malformed event": b'{"hash": 1}\n',
        "not an event line": b"hello\n",
        "incomplete last line": good.rstrip(b"\n"),
    }
    for reason, bad in cases.items():
        out, take = new_lines(held, held + bad, "ibo")
        assert out == [] and take.refused == {reason: 1}, (reason, take.refused)
        assert reason in take.reason()
    out, take = new_lines(held, held + b"\n  \n" + good, "ibo")
    assert out == [good.rstrip(b"\n")] and not take.refused
    # Lamport order inside a shard is the writer's business, as in the reference
    # (its own test shards are not in lamport order): a chained line is taken.
    low = line(replace(nxt, lamport=1))
    out, take = new_lines(held, held + low, "ibo")
    assert out == [low.rstrip(b"\n")] and not take.refused


def test_a_fork_blocks_only_itself_and_what_chains_to_it() -> None:
    """A forged line with valid hashes that forks the chain, and its successors."""
    writer, lines = chain(3)
    forked = ShardWriter("ibo", "mallory")
    forked.events.append(writer.events[0])
    for n in range(2):
        forked.add(
            decision(f"Forged {n}", [upsert("svc", "x")]), lamport=9 + n, recorded_at=AT
        )
    fork = forked.to_bytes().splitlines(keepends=True)[1:]
    out, take = new_lines(b"".join(lines), b"".join([lines[0], *fork]), "ibo")
    assert out == [] and take.refused == {"does not extend the shard's hash chain": 2}


def test_the_tree_rules() -> None:
    """Only regular log/<install-id>.ndjson blobs of other installs are read."""
    oid = "0" * 40

    def entry(path: bytes, mode: str = "100644", kind: str = "blob") -> TreeEntry:
        return TreeEntry(mode, kind, oid, 10 if kind == "blob" else None, path)

    vetted = vet_tree(
        [
            entry(b"log/ibo.ndjson"),
            entry(b"log/iana.ndjson"),
            entry(b"log/iold.ndjson"),
            entry(b"log/same.txt"),
            entry(b"kg.config.json"),
            entry(b"log/Ibad.ndjson"),
            entry(b"log/a/ib.ndjson"),
            entry(b"log/ilink.ndjson", "120000"),
            entry(b"log/isub.ndjson", "160000", "commit"),
            entry(b".GIT/hooks/x", "100755"),
        ],
        frozenset(("iana", "iold")),
        {b"log/same.txt": ("100644", oid)},
    )
    assert [s.name for s in vetted.foreign] == ["ibo.ndjson"]
    assert [s.name for s in vetted.own] == ["iana.ndjson", "iold.ndjson"]
    reasons = {r.path: r.reason for r in vetted.refused}
    assert reasons.pop("log/ilink.ndjson").startswith("a symlink")
    assert reasons.pop("log/isub.ndjson").startswith("a submodule")
    assert set(reasons.values()) == {NOT_A_SHARD}
    assert sorted(reasons) == [
        ".GIT/hooks/x",
        "kg.config.json",
        "log/Ibad.ndjson",
        "log/a/ib.ndjson",
    ]
    assert vetted.refused_total == 6

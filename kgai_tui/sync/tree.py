"""Which paths of a remote's tree a sync may read: only foreign shard files.

The remote's commit is never checked out or merged; its tree is listed with
``git ls-tree`` and each entry is judged here. A remote may only ever add lines to
``log/<install-id>.ndjson`` regular files (spec 1.2) of another install: config,
scaffold, ``.gitattributes``, symlinks, submodules, nested or oddly named files and
anything outside ``log/`` are refused, and so is every shard this install wrote
(its own id and its retired ids), whose only copy that counts is ours.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

from kgai_tui.core.store.install_ids import shard_install_id
from kgai_tui.sync.refusal import MAX_LISTED, Refusal, shown_path
from kgai_tui.sync.run import must

__all__ = [
    "MAX_REMOTE_SHARD",
    "RemoteShard",
    "TreeEntry",
    "Vetted",
    "list_tree",
    "vet_tree",
]

#: The largest shard blob a sync reads from a remote (it is held in memory).
MAX_REMOTE_SHARD: Final = 512 * 1024 * 1024
_REGULAR: Final = frozenset(("100644", "100755"))
NOT_A_SHARD: Final = "not a shard: a remote may only add log/<install-id>.ndjson files"
OWN_SHARD: Final = "this install's own shard: only our copy counts, ours is kept"


@dataclass(frozen=True, slots=True)
class TreeEntry:
    """One ``git ls-tree -r -l`` entry: mode, type, object id, size, raw path."""

    mode: str
    kind: str
    oid: str
    size: int | None
    path: bytes


@dataclass(frozen=True, slots=True)
class RemoteShard:
    """A shard file in the remote's tree: ``log/<name>``, its blob and size."""

    name: str
    install_id: str
    oid: str
    size: int

    @property
    def path(self) -> str:
        """The path in the tree (and under the store root)."""
        return f"log/{self.name}"


@dataclass(slots=True)
class Vetted:
    """A remote tree, judged: foreign shards to read, our own shards, refusals."""

    foreign: list[RemoteShard] = field(default_factory=list)
    own: list[RemoteShard] = field(default_factory=list)
    refused: list[Refusal] = field(default_factory=list)
    refused_total: int = 0

    def refuse(self, path: str, reason: str) -> None:
        """Count a refusal; keep the first :data:`MAX_LISTED` for the report."""
        self.refused_total += 1
        if len(self.refused) < MAX_LISTED:
            self.refused.append(Refusal(path, reason))


def list_tree(root: Path, rev: str) -> Iterator[TreeEntry]:
    """Every entry of ``rev``'s tree, recursively (trees themselves are not listed).

    Raises:
        SyncError: git could not list the tree.
    """
    out = must(root, "ls-tree", "-r", "-l", "-z", "--full-tree", rev).out
    for record in out.split(b"\0"):
        if not record:
            continue
        meta, _, path = record.partition(b"\t")
        mode, kind, oid, size = meta.decode("ascii", "replace").split(None, 3)
        size = size.strip()
        yield TreeEntry(mode, kind, oid, int(size) if size.isdigit() else None, path)


def _mode_reason(entry: TreeEntry) -> str:
    """Why an entry that is not a regular file is refused ("" when it is one)."""
    if entry.kind == "blob" and entry.mode in _REGULAR:
        return ""
    if entry.mode == "120000":
        return "a symlink: only regular shard files are taken"
    if entry.mode == "160000":
        return "a submodule (gitlink): only regular shard files are taken"
    return f"mode {entry.mode} {entry.kind}: only regular shard files are taken"


def vet_tree(
    entries: Iterable[TreeEntry],
    ours: frozenset[str],
    held: Mapping[bytes, tuple[str, str]],
) -> Vetted:
    """Sort a remote tree into foreign shards, our own shards and refusals.

    An entry identical to ours (same path, mode and blob) is skipped: there is
    nothing to take or refuse, and the remote normally holds our last push.

    Args:
        entries: the remote tree (:func:`list_tree`).
        ours: this install's id and its retired ids.
        held: our committed tree, path -> ``(mode, object id)``.
    """
    vetted = Vetted()
    for entry in entries:
        if held.get(entry.path) == (entry.mode, entry.oid):
            continue
        shown = shown_path(entry.path)
        why = _mode_reason(entry)
        if why:
            vetted.refuse(shown, why)
            continue
        head, _, name = entry.path.partition(b"/")
        text = name.decode("ascii", "replace") if name.isascii() else ""
        install = shard_install_id(text) if head == b"log" else None
        if install is None or entry.size is None:
            vetted.refuse(shown, NOT_A_SHARD)
            continue
        shard = RemoteShard(text, install, entry.oid, entry.size)
        if install in ours:
            vetted.own.append(shard)
        elif entry.size > MAX_REMOTE_SHARD:
            vetted.refuse(
                shown,
                f"{entry.size} bytes: a remote shard may hold at most "
                f"{MAX_REMOTE_SHARD} bytes",
            )
        else:
            vetted.foreign.append(shard)
    return vetted

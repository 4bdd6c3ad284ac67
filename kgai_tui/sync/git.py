"""The git transport of ``kg sync`` (spec 7.1), hardened so a remote can only add lines.

The reference merges ``origin/main`` into the store's working tree, which lets a
remote delete our shard, replace ``kg.config.json`` or plant ``.gitattributes`` and
symlinks. Here git never writes the working tree with remote content:

1. Stage only ``.gitignore``, ``.gitattributes`` and ``log/<install-id>.ndjson``
   regular files, untracking everything else (``kg.config.json`` holds the cloud
   token); commit as the actor with ``kgai@local`` when the tree changed.
2. No remote: stop, committed locally only.
3. Point ``origin`` at the remote; ``git fetch``. A failure is a detail (offline),
   unless git reached the remote and found no repository there: an error.
4. List ``origin/main``'s tree without checking it out (:mod:`kgai_tui.sync.tree`);
   for each foreign shard that differs from ours, read its blob and append its new
   verified, chained lines to our copy (:mod:`kgai_tui.sync.shard`). Every other
   path, and every shard this install wrote, is refused and reported.
5. Record our tree as a merge of ``HEAD`` and ``origin/main`` (or fast-forward when
   the trees are equal), so the push is a fast-forward and our copy of every file
   wins on the remote too.
6. ``git branch -M main``; ``git push -u origin main``. A failure is a detail.

Never a rebase, never a force push. The caller holds the store lock and has put
the scaffold back.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from kgai_tui.core.reads.health import redact
from kgai_tui.core.store.install_ids import shard_install_id
from kgai_tui.core.store.scaffold import MERGE_DRIVER
from kgai_tui.sync.refusal import Refusal
from kgai_tui.sync.retired import Reemit, chain_ok, reconcile_retired
from kgai_tui.sync.run import NETWORK_TIMEOUT, GitRun, SyncError, git, must
from kgai_tui.sync.shard import held_bytes, take_foreign
from kgai_tui.sync.tree import (
    MAX_REMOTE_SHARD,
    OWN_SHARD,
    RemoteShard,
    Vetted,
    list_tree,
    vet_tree,
)

__all__ = ["GitOutcome", "SyncError", "git_sync"]

COMMIT_EMAIL: Final = "kgai@local"
NO_REMOTE: Final = "no remote configured; committed locally only"
SCAFFOLD: Final = (".gitignore", ".gitattributes")
_REMOTE: Final = "refs/remotes/origin/main"
_NOT_FOUND: Final = re.compile(r"repository not found|repository '[^'\n]*' not found")

Notice = Callable[[str], None]


@dataclass(frozen=True, slots=True)
class GitOutcome:
    """What the transport did.

    ``pulled``: foreign lines were appended; ``pushed``; ``committed``: this
    install's changes were committed. ``detail`` explains a soft failure (no
    remote, offline, push refused); the sync is still ``ok`` then. ``refused``
    lists (the first 100 of ``refused_total``) paths or lines not taken.
    """

    pulled: bool = False
    pushed: bool = False
    committed: bool = False
    detail: str = ""
    refused: tuple[Refusal, ...] = ()
    refused_total: int = 0


def _prepare(root: Path, actor: str) -> None:
    """Check the store's own repository; set the identity and the union driver."""
    if not (root / ".git").exists():
        # Without its own .git, git would walk up into the project's repository.
        raise SyncError(
            f"{root} has no git repository of its own; run `kgai-tui init --store "
            f"{root}` (it needs git installed)"
        )
    must(root, "config", "user.name", actor or "kgai")
    must(root, "config", "user.email", COMMIT_EMAIL)
    if not git(root, "config", "--get", "merge.union.driver").ok:
        must(root, "config", "merge.union.driver", MERGE_DRIVER)


def _is_regular(path: Path) -> bool:
    try:
        return stat.S_ISREG(os.lstat(path).st_mode)
    except OSError:
        return False


def _shareable(root: Path) -> list[str]:
    """The files this transport commits: the scaffold and the shards (regular files)."""
    names = [n for n in SCAFFOLD if _is_regular(root / n)]
    try:
        listed = sorted(os.listdir(root / "log"))
    except OSError:
        listed = []
    names += [
        f"log/{n}"
        for n in listed
        if shard_install_id(n) is not None and _is_regular(root / "log" / n)
    ]
    return names


def _stage(root: Path) -> str:
    """Make the index hold exactly the shareable files; return its tree id."""
    keep = _shareable(root)
    if keep:
        must(
            root,
            "add",
            "-A",
            "--force",  # the list is exact: an ignore rule elsewhere cannot drop a shard
            "--pathspec-from-file=-",
            "--pathspec-file-nul",
            stdin=b"\0".join(p.encode() for p in keep),
        )
    wanted = {p.encode() for p in keep}
    tracked = must(root, "ls-files", "-z").out.split(b"\0")
    extra = sorted({p for p in tracked if p and p not in wanted})
    if extra:
        must(
            root,
            "update-index",
            "--force-remove",
            "-z",
            "--stdin",
            stdin=b"\0".join(extra) + b"\0",
        )
    return must(root, "write-tree").text.strip()


def _rev(root: Path, rev: str) -> str:
    run = git(root, "rev-parse", "-q", "--verify", rev)
    return run.text.strip() if run.ok else ""


def _is_ancestor(root: Path, older: str, newer: str) -> bool:
    return git(root, "merge-base", "--is-ancestor", older, newer).ok


def _commit_tree(root: Path, tree: str, parents: list[str], message: str) -> None:
    """Make ``HEAD`` a new commit of ``tree`` (no hooks, no signing prompt)."""
    args = ["commit-tree", "--no-gpg-sign", tree, "-m", message]
    for parent in parents:
        args += ["-p", parent]
    commit = must(root, *args).text.strip()
    head = parents[0] if parents else ""
    must(root, "update-ref", "-m", message, "HEAD", commit, head)


def _commit(root: Path) -> bool:
    """Stage the shareable files; commit ``kg sync`` when the tree changed."""
    tree = _stage(root)
    head = _rev(root, "HEAD")
    if head and _rev(root, "HEAD^{tree}") == tree:
        return False
    _commit_tree(root, tree, [head] if head else [], "kg sync")
    return True


def _record(root: Path, remote: str) -> None:
    """Record our tree as the merge of ``HEAD`` and ``remote``; fast-forward if equal."""
    tree = _stage(root)
    head = _rev(root, "HEAD")
    merged = bool(head) and _is_ancestor(root, remote, head)
    if merged and _rev(root, "HEAD^{tree}") == tree:
        return
    behind = not head or _is_ancestor(root, head, remote)
    if behind and _rev(root, f"{remote}^{{tree}}") == tree:
        must(root, "update-ref", "-m", "kg sync: fast-forward", "HEAD", remote, head)
        return
    parents = ([head] if head else []) + ([] if merged else [remote])
    message = "kg sync merge" if len(parents) == 2 else "kg sync"
    _commit_tree(root, tree, parents, message)


def _held(root: Path) -> dict[bytes, tuple[str, str]]:
    """Our committed tree (``HEAD``, just committed): path -> ``(mode, blob id)``."""
    if not _rev(root, "HEAD"):
        return {}
    return {e.path: (e.mode, e.oid) for e in list_tree(root, "HEAD")}


def _blob(root: Path, oid: str) -> bytes:
    return must(root, "cat-file", "blob", oid).out


def _own_differs(root: Path, shard: RemoteShard) -> bool:
    """Whether the remote's copy of our shard is anything but a prefix of ours.

    A prefix is our last push, not yet updated: not worth a word.
    """
    if shard.size > MAX_REMOTE_SHARD:
        return True
    try:
        local = held_bytes(root / shard.path)
    except OSError:
        return True
    return not local.startswith(_blob(root, shard.oid))


def _fork(root: Path, shard: RemoteShard) -> str:
    """How the remote's copy of our own shard shows a twin writing under our id
    (``""`` when it does not): a whole, verified chain of our install that is
    not a prefix of ours. A copy that does not verify as such a chain is a
    tampered one, refused and overwritten by our push as before."""
    from kgai_tui.core.store.shards import read_shard
    from kgai_tui.sync.s3_protocol import SegmentError, verify_segment

    if shard.size > MAX_REMOTE_SHARD:
        return ""
    try:
        remote = verify_segment(_blob(root, shard.oid), shard.install_id)
    except SegmentError:
        return ""
    if not remote or not chain_ok(remote, shard.install_id):
        return ""
    local = [e.decoded for e in read_shard(root / "log" / shard.name).events]
    if len(remote) > len(local):
        return (
            f"the remote holds {len(remote)} events for this install but only "
            f"{len(local)} exist locally"
        )
    for n, (theirs, ours) in enumerate(zip(remote, local, strict=False), start=1):
        if theirs.hash != ours.event_hash:
            return (
                f"remote event {n} is {theirs.hash[:19]} but the local event at "
                f"that position is {ours.event_hash[:19]}"
            )
    return ""


def _reconcile(
    root: Path, shard: RemoteShard, reemit: Reemit, on_notice: Notice
) -> tuple[str, bool]:
    """Align a diverged retired shard with the remote's: ``(why it was kept, or
    "")`` and whether our copy was replaced by the remote's version."""
    from kgai_tui.core.store.shards import read_shard
    from kgai_tui.sync.s3_protocol import SegmentError, verify_segment

    try:
        remote = verify_segment(_blob(root, shard.oid), shard.install_id)
    except SegmentError as exc:
        return f"{exc}; the retired shard was kept", False
    local = [e.decoded for e in read_shard(root / "log" / shard.name).events]
    done = reconcile_retired(root, shard.install_id, local, remote, reemit)
    if isinstance(done, str):
        return done, False
    if done.kept_at is None:
        return "", False  # ours is a prefix: the rest is appended as usual
    on_notice(
        f"reconciled the retired shard {shard.install_id} with the remote: "
        f"{done.reemitted} decision(s) it never received recorded again under "
        f"this install; our copy is kept at {done.kept_at}"
    )
    return "", True


def _pull(
    root: Path,
    vetted: Vetted,
    on_notice: Notice,
    retired: frozenset[str] = frozenset(),
    reemit: Reemit | None = None,
) -> bool:
    """Append the foreign shards' new lines (a diverged retired shard reconciled
    first); return whether any line was appended or replaced."""
    for shard in vetted.own:
        if _own_differs(root, shard):
            vetted.refuse(shard.path, OWN_SHARD)
    appended = 0
    for shard in vetted.foreign:
        if shard.install_id in retired and reemit is not None:
            why, replaced = _reconcile(root, shard, reemit, on_notice)
            if why:
                vetted.refuse(shard.path, why)
                continue
            if replaced:
                appended += 1  # replaced by the remote's version: nothing left to take
                continue
        take = take_foreign(
            root / "log" / shard.name, _blob(root, shard.oid), shard.install_id
        )
        if take.note:
            on_notice(take.note)
        if take.reason():
            vetted.refuse(shard.path, take.reason())
        appended += take.appended
    return appended > 0


def _ignore(_: str) -> None:
    return None


def git_sync(
    root: Path,
    url: str,
    *,
    actor: str,
    ours: frozenset[str],
    retired: frozenset[str] = frozenset(),
    reemit: Reemit | None = None,
    on_notice: Notice = _ignore,
) -> GitOutcome:
    """Commit, fetch, take foreign lines, record the merge and push (spec 7.1).

    Args:
        root: the store directory (its own git repository).
        url: the remote; ``""`` commits locally only.
        actor: the committer name (``kgai`` when empty).
        ours: this install's id; nothing is taken for it.
        retired: the ids this store wrote as before a rotation: the remote's copy
            extends ours, or (diverged) ours is reconciled with it
            (:mod:`kgai_tui.sync.retired`, the orphans recorded again by ``reemit``).
        on_notice: receives notices (a repaired torn tail of a foreign shard).

    Raises:
        SyncError: no git, no repository, a failed git step.
        ForkError: the remote holds a verified chain of our own install that ours
            does not extend: the store was copied (``rotate``); nothing pushed.
        WriteError: a foreign shard could not be appended to (it is as it was).
    """
    _prepare(root, actor)
    committed = _commit(root)
    if not url:
        return GitOutcome(committed=committed, detail=NO_REMOTE)
    _point_origin(root, url)
    fetched = git(
        root,
        "fetch",
        "-q",
        "--no-tags",
        "--prune",
        "--no-recurse-submodules",
        "origin",
        timeout=NETWORK_TIMEOUT,
    )
    if not fetched.ok:
        if _no_such_remote(fetched):
            raise SyncError(
                f"no git repository at the remote {redact(url)} (committed locally "
                f"only): {fetched.why(url)}"
            )
        return GitOutcome(
            committed=committed,
            detail=f"fetch failed (offline?): {fetched.why(url)}",
        )
    vetted = Vetted()
    pulled = False
    remote = _rev(root, _REMOTE)
    if remote:
        vetted = vet_tree(list_tree(root, remote), ours, _held(root))
        for shard in vetted.own:
            detail = _fork(root, shard) if _own_differs(root, shard) else ""
            if detail:
                from kgai_tui.sync.s3_protocol import fork_error

                raise fork_error(shard.install_id, detail)
        pulled = _pull(root, vetted, on_notice, retired, reemit)
        _record(root, remote)
    git(root, "branch", "-M", "main")
    pushed = git(root, "push", "-q", "-u", "origin", "main", timeout=NETWORK_TIMEOUT)
    return GitOutcome(
        pulled=pulled,
        pushed=pushed.ok,
        committed=committed,
        detail="" if pushed.ok else f"push failed: {pushed.why(url)}",
        refused=tuple(vetted.refused),
        refused_total=vetted.refused_total,
    )


def _no_such_remote(fetched: GitRun) -> bool:
    """Whether a failed fetch reached the remote's host and found no repository there.

    A path that does not exist or is no repository, git's and the hosts' "repository
    not found" (HTTP 404, GitHub over ssh): an error. Anything else (no network, DNS,
    refused or timed-out connections, and what cannot be told apart from them) is
    offline. Git's messages are English: it runs under ``LC_ALL=C``.
    """
    said = fetched.err.lower()
    return "does not appear to be a git repository" in said or bool(
        _NOT_FOUND.search(said)
    )


def _point_origin(root: Path, url: str) -> None:
    current = git(root, "remote", "get-url", "origin")
    if not current.ok:
        must(root, "remote", "add", "origin", url)
    elif current.text.strip() != url:
        must(root, "remote", "set-url", "origin", url)

"""``kgai-tui sync`` over S3: the reference's stateless segment protocol (spec 7.2).

Under the store lock: list every segment under ``<prefix>/segments/``; check that
the remote's copy of this install's shard is a prefix of ours (else the store was
copied: the fork error, nothing pushed); push our events past the remote's count as
the next write-once segment; pull, for every other install, the segments we do not
hold, a few fetched ahead at a time. Each segment is verified once and taken whole
or not at all: every line must verify, name its install, extend the shard's hash
chain and pass the shard gates (:func:`kgai_tui.sync.shard.append_pulled`); then
it is appended in one ``write()`` of whole lines and one ``fsync``. Nothing held is
ever rewritten. Being offline is a ``detail`` with ``ok: true``. After a pull the
read model catches up at once (extended when the pulled events all sort after
what it holds, rebuilt otherwise: spec 7.5), and the conflicts are reported as
the git sync reports them (:class:`kgai_tui.sync.sync.SyncReport`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

from kgai_tui.core.errors import KgaiError, UsageError
from kgai_tui.core.model.read import read_store
from kgai_tui.core.reads.kg import conflict_groups
from kgai_tui.core.store.config_file import StoreConfig, save_config
from kgai_tui.core.store.scaffold import ensure_scaffold
from kgai_tui.core.store.shards import read_shard
from kgai_tui.core.wire.codec import DecodedLine, marshal_event
from kgai_tui.core.write.session_engine import release_engine
from kgai_tui.core.write.writes import own_shard, write_session
from kgai_tui.sync.git import GitOutcome
from kgai_tui.sync.refusal import MAX_LISTED, Refusal
from kgai_tui.sync.retired import Reemit, reconcile_retired
from kgai_tui.sync.run import SyncError
from kgai_tui.sync.s3_client import (
    Bucket,
    RemoteError,
    SegmentExists,
    fetch_in_order,
    open_bucket,
)
from kgai_tui.sync.s3_counts import load_counts, save_counts
from kgai_tui.sync.s3_protocol import (
    SegmentError,
    SegmentKey,
    fork_error,
    group_segments,
    parse_key,
    parse_s3_url,
    plan_pull,
    plan_push,
    segment_key,
    segments_prefix,
    twin_seq,
    verify_segment,
)
from kgai_tui.sync.s3_remote import is_s3, resolve_remote
from kgai_tui.sync.shard import HeldShard, PulledLine, append_pulled, hold_shard
from kgai_tui.sync.sync import SyncReport, session_reemit

if TYPE_CHECKING:
    from kgai_tui.core.replay.projection_view import ProjectionView

__all__ = ["S3Outcome", "run_segments", "s3_sync_store"]

Notice = Callable[[str], None]


@dataclass(slots=True)
class S3Outcome:
    """What one round of the protocol did, and what it refused or could not do."""

    pulled: bool = False
    pushed: bool = False
    problems: list[str] = field(default_factory=list)
    refused: list[Refusal] = field(default_factory=list)

    def refuse(self, path: str, reason: str) -> None:
        """Note a refused segment (or an install's lines)."""
        self.refused.append(Refusal(path, reason))

    def as_git(self, scaffold: str = "") -> GitOutcome:
        """The git sync's outcome shape, so the JSON and the rendering are one."""
        detail = "; ".join(self.problems)
        if scaffold:
            detail = f"{detail} — {scaffold}" if detail else scaffold
        return GitOutcome(
            pulled=self.pulled,
            pushed=self.pushed,
            detail=detail,
            refused=tuple(self.refused[:MAX_LISTED]),
            refused_total=len(self.refused),
        )


def _ignore(_: str) -> None:
    return None


# ------------------------------------------------------------------------ push


def _verify_own(
    bucket: Bucket, install: str, segs: list[SegmentKey], local: list[DecodedLine]
) -> None:
    """The remote's copy of our shard must be a prefix of ours (``verifyOwnShard``).

    Raises:
        ForkError: it is not (a copied store, or two racing copies).
        SyncError: the last segment could not be read; nothing is pushed.
    """
    twin = twin_seq(segs)
    if twin is not None:
        raise fork_error(install, f"two segments on the remote share seq {twin:06d}")
    total = sum(s.count for s in segs)
    if total > len(local):
        raise fork_error(
            install, f"the remote holds {total} events, this store {len(local)}"
        )
    last = segs[-1]
    try:
        events = verify_segment(bucket.get(last.key), install)
    except RemoteError as exc:
        raise SyncError(
            f"cannot verify shard integrity of install {install} ({exc}); nothing "
            "was pushed — retry the sync"
        ) from exc
    except SegmentError as exc:
        raise fork_error(install, f"segment {last.key}: {exc}") from exc
    if len(events) != last.count:
        raise fork_error(
            install,
            f"segment {last.key} holds {len(events)} events, its name says {last.count}",
        )
    if events[-1].hash != local[total - 1].event.hash:
        raise fork_error(install, f"event {total} differs from the remote's {last.key}")


def _unpushable(events: list[DecodedLine], install: str) -> str:
    """Why these events would be refused by every puller (``""`` when they would not)."""
    for decoded in events:
        ev = decoded.event
        if (
            not decoded.hash_ok
            or not decoded.decision_id_ok
            or ev.install_id != install
        ):
            return (
                f"event {ev.hash[:80]} of log/{install}.ndjson does not verify "
                "(kgai-tui doctor); teammates would refuse the whole segment"
            )
    return ""


def _push(
    bucket: Bucket,
    prefix: str,
    install: str,
    segs: list[SegmentKey],
    local: list[DecodedLine],
    out: S3Outcome,
) -> None:
    if segs:
        _verify_own(bucket, install, segs, local)
    try:
        plan = plan_push(len(local), segs)
    except ValueError as exc:
        raise fork_error(install, str(exc)) from exc
    if plan is None:
        return
    start, seq = plan
    todo = local[start:]
    why = _unpushable(todo, install)
    if why:
        out.problems.append(f"push skipped: {why}")
        return
    key = segment_key(prefix, install, seq, len(todo))
    body = b"".join(marshal_event(d.event) + b"\n" for d in todo)
    try:
        bucket.put_new(key, body)
    except SegmentExists as exc:
        raise fork_error(
            install,
            f"segment {key} already exists on the remote (concurrent push from "
            "another copy of this store)",
        ) from exc
    except RemoteError as exc:
        out.problems.append(f"push failed: {exc}")
        return
    out.pushed = True
    try:  # counts differ, so keys differ: a racing copy's put may have won too
        listed = bucket.list_keys(key[: key.rindex("-") + 1])
    except RemoteError as exc:
        out.problems.append(f"pushed, but could not check for a concurrent push: {exc}")
        return
    twins = [k for k in listed if (s := parse_key(k)) is not None and s.seq == seq]
    if len(twins) > 1:
        raise fork_error(
            install, f"another copy of this store pushed seq {seq:06d} at the same time"
        )


# ------------------------------------------------------------------------ pull


def _folder(seg: SegmentKey) -> str:
    """The key prefix of an install's segments (``<prefix>/segments/<id>/``)."""
    return seg.key[: seg.key.rindex("/") + 1]


def _pull_plans(
    root: Path,
    groups: dict[str, list[SegmentKey]],
    own: str,
    out: S3Outcome,
    on_notice: Notice,
) -> tuple[list[HeldShard], list[tuple[HeldShard, SegmentKey, int]]]:
    """Our copy of every teammate's shard on the remote, and every segment to fetch
    (in install then seq order) with the copy it extends."""
    known = load_counts(root)
    helds: list[HeldShard] = []
    plans: list[tuple[HeldShard, SegmentKey, int]] = []
    for install in sorted(groups):
        if install == own:
            continue
        segs = groups[install]
        twin = twin_seq(segs)
        if twin is not None:  # two copies of one store pushed it: the counts lie
            out.refuse(
                _folder(segs[0]),
                f"two segments share seq {twin:06d} (two copies of one store "
                "pushed); nothing from it on was pulled",
            )
            segs = [s for s in segs if s.seq < twin]
        name = f"{install}.ndjson"
        held = hold_shard(root / "log" / name, install, known.get(name))
        helds.append(held)
        if held.note:
            on_notice(held.note)
        if not held.regular:
            out.refuse(
                _folder(segs[0]),
                f"install {install}: our copy is not a regular file; nothing appended",
            )
            continue
        plans += [(held, seg, skip) for seg, skip in plan_pull(held.lines, segs)]
    return helds, plans


def _pull(
    root: Path,
    bucket: Bucket,
    groups: dict[str, list[SegmentKey]],
    own: str,
    out: S3Outcome,
    on_notice: Notice,
) -> None:
    """Fetch the segments we lack and append each whole, verified one to its shard.

    A segment that fails to arrive, to verify or to extend our copy stops its
    install's pull there; what was appended before it stays (whole segments).
    """
    helds, plans = _pull_plans(root, groups, own, out, on_notice)
    stopped: set[str] = set()
    bodies = fetch_in_order(bucket.get, [seg.key for _, seg, _ in plans])
    for (held, seg, skip), body in zip(plans, bodies, strict=True):
        if held.install_id in stopped:
            continue
        why = _take_segment(held, seg, skip, body)
        if why is None:
            out.pulled = True
            continue
        stopped.add(held.install_id)
        if isinstance(body, RemoteError):
            out.problems.append(why)
        else:
            out.refuse(seg.key, why)
    save_counts(root, helds)


def _take_segment(
    held: HeldShard, seg: SegmentKey, skip: int, body: bytes | RemoteError
) -> str | None:
    """Verify one segment and append its events past ``skip``; else say why not."""
    if isinstance(body, RemoteError):
        return f"get failed: {body}"
    try:
        lines = verify_segment(body, held.install_id)
    except SegmentError as exc:
        return str(exc)
    if len(lines) != seg.count:
        return f"holds {len(lines)} events, its name says {seg.count}"
    why = append_pulled(held, lines[skip:])
    return f"{why}; the segment was not applied" if why else None


# ------------------------------------------------------------------------ round


def _reconcile(
    root: Path,
    bucket: Bucket,
    groups: dict[str, list[SegmentKey]],
    config: StoreConfig,
    reemit: Reemit,
    out: S3Outcome,
    on_notice: Notice,
) -> None:
    """Align every retired shard the remote holds with it (:mod:`.retired`)."""
    for install in config.retired_installs:
        segs = groups.get(install)
        if not segs or twin_seq(segs) is not None:
            continue
        local = [
            e.decoded for e in read_shard(root / "log" / f"{install}.ndjson").events
        ]
        remote: list[PulledLine] = []
        for seg, body in zip(
            segs, fetch_in_order(bucket.get, [s.key for s in segs]), strict=True
        ):
            if isinstance(body, RemoteError):
                out.problems.append(f"reconcile {install}: get failed: {body}")
                break
            try:
                remote += verify_segment(body, install)
            except SegmentError as exc:
                out.refuse(seg.key, f"{exc}; the retired shard was kept")
                break
        else:
            done = reconcile_retired(root, install, local, remote, reemit)
            if isinstance(done, str):
                out.refuse(_folder(segs[0]), done)
            elif done.kept_at is not None:
                out.pulled = True  # our copy changed: the caches catch up
                on_notice(
                    f"reconciled the retired shard {install} with the remote: "
                    f"{done.reemitted} decision(s) it never received recorded again "
                    f"under this install; our copy is kept at {done.kept_at}"
                )


def run_segments(
    bucket: Bucket,
    prefix: str,
    root: Path,
    config: StoreConfig,
    on_notice: Notice = _ignore,
    reemit: Reemit | None = None,
) -> S3Outcome:
    """One round of list, retired-shard reconciliation, fork check, push and pull;
    the caller holds the lock (``reemit`` records events again under its session).

    Raises:
        ForkError: this install's remote shard is not a prefix of ours.
        SyncError: the fork check could not read the remote, or no such bucket.
        WriteError: a foreign shard could not be appended to (it is as it was).
    """
    out = S3Outcome()
    try:
        keys = bucket.list_keys(segments_prefix(prefix))
    except RemoteError as exc:
        out.problems.append(f"list failed (offline / no access?): {exc}")
        return out
    groups, odd = group_segments(keys)
    for key in odd:
        out.refuse(key, "not an install id: never a shard file name")
    install = config.install_id
    if reemit is not None and config.retired_installs:
        _reconcile(root, bucket, groups, config, reemit, out, on_notice)
    local = read_shard(own_shard(root, install)).events
    _push(
        bucket,
        prefix,
        install,
        groups.get(install, []),
        [e.decoded for e in local],
        out,
    )
    _pull(root, bucket, groups, install, out, on_notice)
    return out


def _scaffold(root: Path) -> str:
    """Put the scaffold back; a failure is only a note (this transport commits nothing)."""
    try:
        ensure_scaffold(root)
    except KgaiError as exc:
        return " ".join(str(exc).split())
    return ""


def _applied(projection: ProjectionView) -> int:
    """Events projected."""
    return projection.applied_count


def s3_sync_store(
    root: Path,
    remote: str | None = None,
    *,
    lock_timeout: float | None = None,
    on_notice: Notice | None = None,
) -> SyncReport:
    """Sync the store at ``root`` with its ``s3://`` remote (spec 7, 7.2).

    ``remote`` (``--remote``) is remembered in ``kg.config.json`` once the round
    has run, so a later ``kgai-tui sync`` uses it.

    Raises:
        StoreNotFoundError: no store at ``root``.
        UsageError: the effective remote is not a usable ``s3://`` URL.
        ForkError: the store was copied (see :func:`fork_error`); nothing pushed.
        SyncError: boto3 or the AWS configuration is missing, no such bucket, or
            the fork check could not read the remote.
        LockTimeoutError, WriteError: the store could not be locked or written.
    """
    notices: list[str] = []

    def note(message: str) -> None:
        notices.append(message)
        if on_notice is not None:
            on_notice(message)

    with write_session(root, lock_timeout=lock_timeout, on_notice=note) as session:
        cfg = session.config
        url, _ = resolve_remote(remote, cfg.remote)
        if not is_s3(url):
            raise UsageError(f"not an s3:// remote: {url!r}")
        target = parse_s3_url(url)
        old = set(session.engine.projection.contested)
        applied_before = _applied(session.engine.projection)
        scaffold = _scaffold(root)

        outcome = run_segments(
            open_bucket(target), target.prefix, root, cfg, note, session_reemit(session)
        )
        wanted = (remote or "").strip()
        if wanted and wanted != cfg.remote:
            save_config(root, replace(cfg, remote=wanted))
        if outcome.pulled:
            # Let go of the model before extending it, as a record does: a read
            # connection closed after the extension would change the files the
            # extension sealed, and the next open would rebuild the model.
            release_engine(session.engine)
            after = read_store(root)  # the model extended with what was pulled
            try:
                applied = _applied(after.projection) - applied_before
                groups = conflict_groups(after.projection)
            finally:
                release_engine(after)
        else:  # nothing pulled: no graph work (spec 7.5 step 2)
            applied, groups = 0, conflict_groups(session.engine.projection)
    fresh = [g for g in groups if g["element_id"] not in old]
    return SyncReport(applied, groups, fresh, outcome.as_git(scaffold), url, notices)

"""Replay determinism properties over event sets the tests generate themselves.

The generator writes what kgai writers really produce (2-4 install shards, upserts with
props, last-writer-wins ``set_prop`` across shards, link churn, supersedes of earlier,
later and never-recorded decisions, provenance-only and legacy decisions, colliding
lamports, back-dated ``recorded_at``) and the properties pin that the canonical export
depends on the set of events only, never on how they are laid out in files, and that
``as-of(t)`` is a fresh replay of exactly the events recorded up to ``t``.
"""

from __future__ import annotations

import os
import random
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from typing import Any, TypeVar

from builders import ShardWriter, decision, link, set_prop, upsert, write_store
from hypothesis import given, settings
from hypothesis import strategies as st

from kgai_tui.core.engine.open import open_engine
from kgai_tui.core.reads.as_of import as_of_obj, project_as_of
from kgai_tui.core.reads.export import export_digest, export_parts
from kgai_tui.core.reads.kg import conflicts_obj, heads_obj
from kgai_tui.core.replay.order import replay
from kgai_tui.core.wire.codec import marshal_event
from kgai_tui.core.wire.ids import element_id
from kgai_tui.core.wire.model import Decision, Event, Mutation

T = TypeVar("T")

# --------------------------------------------------------------------------- pools

ELEMENTS: list[tuple[str, str]] = [
    ("feature", "Invoice"),
    ("feature", "  invoice "),  # same id as feature:Invoice, other spelling
    ("service", "Billing"),
    ("concept", "İstanbul"),
    ("feature", "ΑΣ"),
    ("module", "日本語 サービス"),
    ("concept", "naïve résumé"),
    ("feature", "a<b>&c\u2028d"),
]
GHOST = element_id("feature", "never upserted ghost")
PROP_KEYS = ["paths", "owner", "tier", " spaced key ", "a=b", ""]
PROP_VALUES = ["src/billing/*", "alice", "x ", " y", "", "two\nlines", "ü"]
LINK_KINDS = ["DEPENDS_ON", "PART_OF"]
TITLES = ["Use X", "Use Y", "Split billing", "Ünïcode ß title", "same"]
RATIONALES = ["", "because", "why\nnot", " raw  spaces "]
AUTHORS = ["alice", "bob", " Alice "]
FAKE_ID = "d_" + "f" * 24  # a decision that is never recorded: a stub
BASE_TIME = datetime(2026, 3, 1, tzinfo=UTC)
SHARD_NAMES = [
    "a.ndjson",
    "zz.ndjson",
    "M.ndjson",
    "é-writer.ndjson",
    "i0000.ndjson",
    "install-b.ndjson",
    "~last.ndjson",
    "0.ndjson",
]


# --------------------------------------------------------------------------- drawing


class Chooser:
    """Choices the generator makes, from hypothesis (shrinkable) or a seeded Random."""

    def __init__(
        self,
        draw: Callable[[st.SearchStrategy[Any]], Any] | None = None,
        rnd: random.Random | None = None,
    ) -> None:
        """Wrap a hypothesis ``draw`` or a ``random.Random``."""
        self._draw = draw
        self._rnd = rnd

    def integer(self, lo: int, hi: int) -> int:
        """An integer in ``[lo, hi]``."""
        if self._draw is not None:
            return int(self._draw(st.integers(lo, hi)))
        assert self._rnd is not None
        return self._rnd.randint(lo, hi)

    def choice(self, items: Sequence[T]) -> T:
        """One of ``items``."""
        return items[self.integer(0, len(items) - 1)]

    def chance(self, percent: int) -> bool:
        """True with about ``percent`` % probability."""
        return self.integer(0, 99) < percent

    def subset(self, items: Sequence[T], percent: int) -> list[T]:
        """Each item kept with about ``percent`` % probability, in order."""
        return [item for item in items if self.chance(percent)]

    def permutation(self, items: Sequence[T]) -> list[T]:
        """A permutation of ``items``."""
        if self._draw is not None:
            return list(self._draw(st.permutations(list(items))))
        assert self._rnd is not None
        out = list(items)
        self._rnd.shuffle(out)
        return out


# --------------------------------------------------------------------------- generator


@dataclass
class Generated:
    """A generated store: each writer's events, with the moment each was recorded."""

    writers: list[str]
    shards: dict[str, list[Event]]
    moments: dict[str, datetime | None]  # event hash -> recorded moment (None: no time)

    def all_events(self) -> list[Event]:
        """Every event, writer by writer."""
        return [ev for w in self.writers for ev in self.shards[w]]

    def files(self) -> dict[str, bytes]:
        """One shard file per writer, named after its install id."""
        return {f"{w}.ndjson": lines(self.shards[w]) for w in self.writers}


def lines(events: Sequence[Event]) -> bytes:
    """Shard bytes for events in the given order."""
    return b"".join(marshal_event(ev) + b"\n" for ev in events)


def _mutation(c: Chooser) -> Mutation:
    kind, name = c.choice(ELEMENTS)
    op = c.choice(["upsert", "upsert", "set", "set", "add", "retire"])
    if op == "upsert":
        keys = c.subset(PROP_KEYS, 25)
        props = {k: c.choice(PROP_VALUES) for k in keys}
        return upsert(kind, name, **props)
    if op == "set":
        return set_prop(kind, name, c.choice(PROP_KEYS[:3]), c.choice(PROP_VALUES))
    other = c.choice(ELEMENTS)
    return link(
        "add_link" if op == "add" else "retire_link",
        (kind, name),
        other,
        c.choice(LINK_KINDS),
    )


def _moment_text(c: Chooser, moment: datetime) -> tuple[str, datetime | None]:
    """Render a moment as ``recorded_at``; some forms are not RFC3339 (no as-of time)."""
    style = c.integer(0, 99)
    if style < 85:
        return moment.strftime("%Y-%m-%dT%H:%M:%SZ"), moment
    if style < 93:
        local = moment.astimezone(timezone(timedelta(hours=2)))
        return local.strftime("%Y-%m-%dT%H:%M:%S+02:00"), moment
    if style < 97:
        return moment.strftime("%Y-%m-%dT%H:%M:%S"), None  # naive: not RFC3339
    return "", None


def generate(
    c: Chooser, *, min_decisions: int = 5, max_decisions: int = 40
) -> Generated:
    """Generate a store the way kgai writers would have produced it."""
    writers = [f"i-{chr(ord('a') + i)}" for i in range(c.integer(2, 4))]
    count = c.integer(min_decisions, max_decisions)

    # 1. Decision contents (ids do not depend on supersedes, shapes or targets).
    contents: list[Decision] = []
    for _ in range(count):
        if contents and c.chance(10):
            contents.append(c.choice(contents))  # same content recorded again
            continue
        muts: tuple[Mutation, ...] | None = tuple(
            _mutation(c) for _ in range(c.integer(0, 4))
        )
        if not muts and c.chance(50):
            muts = None
        mode = c.choice(["normal", "normal", "subset", "provenance", "legacy", "ghost"])
        base = decision(
            c.choice(TITLES),
            muts,
            rationale=c.choice(RATIONALES),
            author=c.choice(AUTHORS),
        )
        touched = list(base.shapes)
        if mode == "subset":
            base = decision(
                base.title,
                muts,
                rationale=base.rationale,
                author=base.author,
                targets=c.subset(touched, 50),
                provenance_only=False,
            )
        elif mode == "provenance":
            base = decision(
                base.title,
                muts,
                rationale=base.rationale,
                author=base.author,
                targets=[],
                provenance_only=True,
            )
        elif mode == "legacy":
            base = decision(
                base.title,
                muts,
                rationale=base.rationale,
                author=base.author,
                targets=[],
                provenance_only=False,
            )
        elif mode == "ghost":
            base = decision(
                base.title,
                muts,
                rationale=base.rationale,
                author=base.author,
                shapes=[*touched, GHOST],
                targets=[*touched, GHOST],
            )
        contents.append(base)

    # 2. Supersedes: earlier ids, later (not yet recorded) ids, and never-recorded ids.
    ids = [d.id for d in contents]
    decisions = []
    for i, d in enumerate(contents):
        sup: set[str] = set()
        if i and c.chance(35):
            sup.add(ids[c.integer(0, i - 1)])
        if i + 1 < count and c.chance(8):
            sup.add(ids[c.integer(i + 1, count - 1)])
        if c.chance(5):
            sup.add(FAKE_ID)
        sup.discard(d.id)
        decisions.append(replace(d, supersedes=tuple(sorted(sup))))

    # 3. Events: lamports rise per shard and collide across shards; time is mostly
    #    forward with back-dated events, in several recorded_at forms.
    shard_writers = {w: ShardWriter(w, actor=f"actor-{w}") for w in writers}
    last_lamport = dict.fromkeys(writers, 0)
    hours = 0
    moments: dict[str, datetime | None] = {}
    for d in decisions:
        w = c.choice(writers)
        last_lamport[w] += c.integer(1, 3)
        if c.chance(80):
            hours += c.integer(0, 12)
            at = hours
        else:
            at = c.integer(0, hours)  # back-dated: out of lamport order
        text, moment = _moment_text(c, BASE_TIME + timedelta(hours=at))
        ev = shard_writers[w].add(
            None if c.chance(3) else d, lamport=last_lamport[w], recorded_at=text
        )
        moments[ev.hash] = moment
    return Generated(writers, {w: shard_writers[w].events for w in writers}, moments)


@st.composite
def stores(draw: Callable[[st.SearchStrategy[Any]], Any]) -> Generated:
    """Hypothesis strategy for generated stores."""
    return generate(Chooser(draw=draw))


# --------------------------------------------------------------------------- helpers


@contextmanager
def temp_store(files: dict[str, bytes]) -> Iterator[Path]:
    """A throwaway store directory holding ``files`` under ``log/``."""
    root = Path(tempfile.mkdtemp(prefix="kgai-prop-"))
    try:
        write_store(root, files)
        yield root
    finally:
        shutil.rmtree(root, ignore_errors=True)


def digest_of(files: dict[str, bytes]) -> str:
    """The canonical export digest of a store holding ``files``."""
    with temp_store(files) as root:
        return export_digest(export_parts(open_engine(root).projection))


def split_files(
    c: Chooser, events: Sequence[Event], names: Sequence[str]
) -> dict[str, bytes]:
    """Shuffle events and cut them into up to ``len(names)`` files."""
    order = c.permutation(list(events))
    parts = c.integer(1, min(len(names), max(1, len(order))))
    cuts = sorted(c.integer(0, len(order)) for _ in range(parts - 1))
    bounds = [0, *cuts, len(order)]
    chosen = c.permutation(list(names))[:parts]
    return {
        name: lines(order[bounds[i] : bounds[i + 1]]) for i, name in enumerate(chosen)
    }


# --------------------------------------------------------------------------- properties

PROPERTY_SETTINGS = settings(max_examples=30, deadline=None)


@PROPERTY_SETTINGS
@given(gen=stores(), data=st.data())
def test_digest_ignores_shard_file_names(gen: Generated, data: st.DataObject) -> None:
    """The export digest is unchanged when shard files are renamed (new listing order)."""
    baseline = gen.files()
    names = data.draw(st.permutations(SHARD_NAMES).map(lambda ns: ns[: len(baseline)]))
    renamed = dict(zip(names, baseline.values(), strict=True))
    assert digest_of(renamed) == digest_of(baseline)


@PROPERTY_SETTINGS
@given(gen=stores(), data=st.data())
def test_digest_ignores_resplit_and_duplicates(
    gen: Generated, data: st.DataObject
) -> None:
    """Any re-split of the events into files, and repeated lines, give the same digest."""
    c = Chooser(draw=data.draw)
    events = gen.all_events()
    expected = digest_of(gen.files())

    resplit = split_files(c, events, SHARD_NAMES)
    assert digest_of(resplit) == expected

    # Repeat some event lines in another shard and within the same shard.
    dup_files = dict(gen.files())
    repeated = c.subset(events, 30) or [events[0]]
    dup_files["dup-copy.ndjson"] = lines(c.permutation(repeated))
    first = next(iter(dup_files))
    dup_files[first] += lines(c.subset(events, 20))
    assert digest_of(dup_files) == expected

    # Both at once: a re-split in which every event appears once or twice.
    doubled = [*events, *c.subset(events, 50)]
    assert digest_of(split_files(c, doubled, SHARD_NAMES)) == expected


def _cuts(gen: Generated, c: Chooser) -> list[datetime]:
    """Cut moments: before everything, event moments (ties), +-1 s, after everything."""
    known = sorted({m for m in gen.moments.values() if m is not None})
    cuts = [BASE_TIME - timedelta(days=1)]
    if known:
        cuts.append(known[-1] + timedelta(days=1))
        for m in c.subset(known, 40)[:6] or [known[len(known) // 2]]:
            cuts += [m, m - timedelta(seconds=1), m + timedelta(seconds=1)]
    return cuts


@PROPERTY_SETTINGS
@given(gen=stores(), data=st.data())
def test_as_of_is_replay_of_events_recorded_by_then(
    gen: Generated, data: st.DataObject
) -> None:
    """as-of(t) equals a fresh replay of exactly the events recorded at or before t."""
    c = Chooser(draw=data.draw)
    files = gen.files()
    # Read the log with some events repeated: as-of applies each hash once.
    files["dup.ndjson"] = lines(c.subset(gen.all_events(), 30))
    with temp_store(files) as root:
        shards = open_engine(root).shards
        for cut in _cuts(gen, c):
            kept = [
                ev
                for w in gen.writers
                for ev in gen.shards[w]
                if (m := gen.moments[ev.hash]) is not None and m <= cut
            ]
            at = project_as_of(shards, cut)
            fresh = replay(sorted(kept, key=lambda ev: (ev.lamport, ev.hash)))
            assert export_parts(at) == export_parts(fresh), cut
            assert as_of_obj(at, cut) == as_of_obj(fresh, cut), cut
            assert conflicts_obj(at) == conflicts_obj(fresh), cut
            assert heads_obj(at) == heads_obj(fresh), cut


@settings(max_examples=20, deadline=None)
@given(gen=stores(), data=st.data())
def test_as_of_matches_engine_opened_on_filtered_store(
    gen: Generated, data: st.DataObject
) -> None:
    """as-of(t) equals Engine.open of a store whose files hold only events up to t."""
    c = Chooser(draw=data.draw)
    with temp_store(gen.files()) as root:
        shards = open_engine(root).shards
        cut = c.choice(_cuts(gen, c))
        filtered = {
            f"{w}.ndjson": lines(
                [
                    ev
                    for ev in gen.shards[w]
                    if (m := gen.moments[ev.hash]) is not None and m <= cut
                ]
            )
            for w in gen.writers
        }
        with temp_store(filtered) as small:
            fresh = open_engine(small).projection
        at = project_as_of(shards, cut)
        assert export_digest(export_parts(at)) == export_digest(export_parts(fresh))
        assert as_of_obj(at, cut) == as_of_obj(fresh, cut)


def test_as_of_after_everything_equals_full_replay() -> None:
    """When every recorded_at is RFC3339, as-of after the last event is the full replay."""
    for seed in range(15):
        gen = generate(Chooser(rnd=random.Random(seed)))
        if any(m is None for m in gen.moments.values()):
            continue
        with temp_store(gen.files()) as root:
            engine = open_engine(root)
            end = max(m for m in gen.moments.values() if m is not None)
            at = project_as_of(engine.shards, end)
            assert export_parts(at) == export_parts(engine.projection)


def test_generator_exercises_the_interesting_cases() -> None:
    """Generated stores contain conflicts, stubs, links, duplicates and lamport ties."""
    seen = {"conflict": 0, "stub": 0, "link": 0, "dup_id": 0, "lamport_tie": 0}
    for seed in range(40):
        gen = generate(Chooser(rnd=random.Random(seed)))
        p = replay(sorted(gen.all_events(), key=lambda ev: (ev.lamport, ev.hash)))
        seen["conflict"] += bool(p.contested)
        seen["stub"] += any(
            not t and not lam for t, lam in zip(p.dec_title, p.dec_lamport, strict=True)
        )
        seen["link"] += p.graph.number_of_edges() > 0
        ids = [ev.decision.id for ev in gen.all_events() if ev.decision]
        seen["dup_id"] += len(ids) != len(set(ids))
        lamports = [(ev.lamport, ev.install_id) for ev in gen.all_events()]
        seen["lamport_tie"] += len({lam for lam, _ in lamports}) < len(lamports)
    assert all(n >= 3 for n in seen.values()), seen


# --------------------------------------------------------------------------- hash seed

SEEDS = ("0", "1", "12345")
READS_SCRIPT = """
import sys
from click.testing import CliRunner
from kgai_tui.cli.main import main
store = sys.argv[1]
runner = CliRunner()
for args in (
    ["export", "--canonical", "--json"],
    ["conflicts", "--json"],
    ["heads", "--json"],
    ["status", "--json"],
    ["context", "--json", "--about", "billing invoice", "--paths", "src/billing/x"],
    ["context", "--json"],
    ["as-of", "--json", "2026-03-04"],
    ["history", "--json", "feature:Invoice"],
):
    result = runner.invoke(main, [*args, "--store", store])
    sys.stdout.buffer.write(repr(args).encode() + b"\\n")
    sys.stdout.buffer.write(str(result.exit_code).encode() + b"\\n")
    sys.stdout.buffer.write(result.stdout_bytes)
"""


def _kgai_tui() -> str:
    return str(Path(sys.executable).parent / "kgai-tui")


def _seeded_env(seed: str) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONHASHSEED"] = seed
    return env


def test_export_digest_is_identical_across_hash_seeds(tmp_path: Path) -> None:
    """`kgai-tui export --canonical --json` prints the same bytes for any PYTHONHASHSEED."""
    gen = generate(Chooser(rnd=random.Random(7)), min_decisions=30)
    root = write_store(tmp_path / "store", gen.files())
    outputs = set()
    for seed in SEEDS:
        proc = subprocess.run(
            [_kgai_tui(), "export", "--canonical", "--json", "--store", str(root)],
            capture_output=True,
            env=_seeded_env(seed),
            check=False,
        )
        assert proc.returncode == 0, proc.stderr
        outputs.add(proc.stdout)
    assert len(outputs) == 1
    assert b'"digest": "sha256:' in outputs.pop()


def test_reads_are_identical_across_hash_seeds(tmp_path: Path) -> None:
    """Every read's --json bytes are independent of PYTHONHASHSEED (two stores)."""
    for n, seed in enumerate((11, 23)):
        gen = generate(Chooser(rnd=random.Random(seed)), min_decisions=30)
        root = write_store(tmp_path / f"store{n}", gen.files())
        outputs = set()
        for hash_seed in SEEDS:
            proc = subprocess.run(
                [sys.executable, "-c", READS_SCRIPT, str(root)],
                capture_output=True,
                env=_seeded_env(hash_seed),
                check=False,
            )
            assert proc.returncode == 0, proc.stderr
            outputs.add(proc.stdout)
        assert len(outputs) == 1

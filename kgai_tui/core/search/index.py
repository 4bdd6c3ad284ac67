"""SearchIndex: the search index of one store, opened for queries.

It reuses the cached index, extends it after appends or builds it
(:mod:`.writer`), and answers a query from the live index (elements and decisions
in force) or the history index (every decision event). docs/search.md has the design.
"""

from __future__ import annotations

from collections.abc import Container, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

import tantivy

from kgai_tui.core.errors import WriteError
from kgai_tui.core.gosem.gotext import normalize
from kgai_tui.core.search.analysis import Analysed, analyse
from kgai_tui.core.search.backend import (
    EXACT_FIELD,
    MUST,
    MUST_NOT,
    SCHEMA,
    SHOULD,
    STAMP,
    Backend,
    DocType,
    Q,
    any_term,
    filter_clause,
    stored_fields,
    tantivy_failure,
    term_query,
)
from kgai_tui.core.search.bounds import BOUND_MIN_DOCS, Freqs, bounded_top, match_bound
from kgai_tui.core.search.cache import (
    IndexState,
    cache_dir_for,
    load_state,
    prints_from_disk,
    wait_for_writer,
    write_lock,
)
from kgai_tui.core.search.docs import LIVE_KEYS
from kgai_tui.core.search.forgiving import ForgivingSearch
from kgai_tui.core.search.hits import hit_of
from kgai_tui.core.search.model import SearchHit, hit_order
from kgai_tui.core.search.moment import (
    Moment,
    MomentCache,
)
from kgai_tui.core.search.plan import Filters, plan_query
from kgai_tui.core.search.query import ParsedQuery, parse_query
from kgai_tui.core.search.rank import Cand, top_k
from kgai_tui.core.search.snippet import Matcher
from kgai_tui.core.search.vocab import (
    Vocabulary,
    bridge_query,
)
from kgai_tui.core.search.writer import (
    IndexInfo,
    build_in_memory,
    build_persisted,
    engine_prints,
    extend_persisted,
    no_gc,
    open_part,
)
from kgai_tui.core.store.shard_print import ShardPrint, compare_prints
from kgai_tui.core.wire.ids import resolve_ref

if TYPE_CHECKING:
    from kgai_tui.core.engine.engine import Engine
    from kgai_tui.core.replay.projection_view import ProjectionView

__all__ = ["MAX_LIMIT", "SearchIndex"]

#: The largest ``limit`` a search honours (tantivy allocates per requested hit).
MAX_LIMIT: Final = 10_000
_LOCK_WAIT: Final = 120.0
#: A ranked candidate: (its source's position, the candidate, its stored fields).
_Ranked = tuple[int, Cand, dict[str, Any]]
_Tier = tuple[tuple[tantivy.Occur, tantivy.Query], ...]


@dataclass(frozen=True, slots=True)
class _Source:
    """One index read for one query: which documents, with which restrictions."""

    index: tantivy.Index
    doctypes: tuple[DocType, ...]
    clauses: tuple[tuple[tantivy.Occur, tantivy.Query], ...] = ()
    allowed: Container[int] | None = None
    keys: tuple[int, int] = (0, 1 << 64)
    #: Whether the index mixes document types (has a ``doctype`` field to filter on).
    typed: bool = True


class SearchIndex(ForgivingSearch):
    """A search index over one store, opened for queries.

    Obtain one with :meth:`for_engine` (builds or updates as needed) or
    :meth:`open_cached` (only if the cache is current; no log reading), then call
    :meth:`search`.
    """

    def __init__(
        self,
        live: tantivy.Index,
        history: tantivy.Index,
        info: IndexInfo,
        *,
        root: Path | None,
        engine: Engine | None,
    ) -> None:
        """Wrap opened indexes (use the class methods instead)."""
        self._live = live
        self._history = history
        self.info = info
        #: Failed a search and dropped from the cache (:mod:`.damage`): not reused.
        self.forgotten = False
        self._at = MomentCache(root, engine)
        self._vocab: tuple[tuple[int, int], Vocabulary] | None = None

    # ------------------------------------------------------------ opening

    @classmethod
    def for_engine(
        cls, engine: Engine, *, cache_base: Path | None = None
    ) -> SearchIndex:
        """Open the index of an engine's store, building or updating it if needed.

        The cached index is reused when the shard fingerprint is unchanged, extended
        when shards were only appended to, and rebuilt from scratch otherwise or when
        it is missing, corrupt, half-written or foreign. An engine without a store
        path (built from shards in memory) gets an in-memory index.

        Args:
            engine: The opened store.
            cache_base: Override for the user cache directory (tests).

        Returns:
            The opened index. When the cache directory cannot be written (a
            read-only home) or another process holds its lock for over two minutes,
            the index is built in memory instead (same answers, not persisted).
        """
        with no_gc():
            if engine.root is None:
                return cls._in_memory(engine)
            root = engine.root.resolve()
            cache = cache_dir_for(root, cache_base)
            try:
                return cls._persisted(engine, root, cache)
            except (OSError, WriteError):
                return cls._in_memory(engine)

    @classmethod
    def _persisted(cls, engine: Engine, root: Path, cache: Path) -> SearchIndex:
        prints = engine_prints(engine)
        opened = cls._reuse(cache, str(root), prints, engine)
        if opened is not None:
            return opened
        with write_lock(cache, timeout=_LOCK_WAIT):
            opened = cls._caught_up(cache, root, prints, engine.projection, engine)
            if opened is not None:
                return opened
            built = build_persisted(cache, str(root), prints, engine)
            return cls(*built, root=Path(str(root)), engine=engine)

    @classmethod
    def extended(
        cls,
        root: Path,
        prints: tuple[ShardPrint, ...],
        projection: ProjectionView,
        *,
        cache_base: Path | None = None,
    ) -> SearchIndex | None:
        """The cached index of the store at ``root`` for the log ``prints`` describe
        (with line counts): reused, or extended with the lines appended since it
        was written and its live documents taken from ``projection`` (the read
        model of that log). ``None`` when only a build from the whole store would
        do (no index yet, a log rewritten, a busy or read-only cache)."""
        root = root.resolve()
        cache = cache_dir_for(root, cache_base)
        with no_gc():
            opened = cls._reuse(cache, str(root), prints, None)
            if opened is not None:
                return opened
            try:
                with write_lock(cache, timeout=_LOCK_WAIT):
                    return cls._caught_up(cache, root, prints, projection, None)
            except (OSError, WriteError):
                return None

    @classmethod
    def _caught_up(
        cls,
        cache: Path,
        root: Path,
        prints: tuple[ShardPrint, ...],
        projection: ProjectionView,
        engine: Engine | None,
    ) -> SearchIndex | None:
        """Under the write lock: the recorded index as it is, or extended by an
        append; ``None`` when it must be built."""
        opened = cls._reuse(cache, str(root), prints, engine)
        if opened is not None:
            return opened
        state = load_state(cache, STAMP, str(root))
        if (
            state is None
            or compare_prints(state.shards, prints, root / "log") != "append"
        ):
            return None
        try:
            appended = extend_persisted(cache, state, prints, projection, root / "log")
        except BaseException as exc:
            if not tantivy_failure(exc) or isinstance(exc, OSError):
                raise
            return None
        if appended is None:
            return None
        return cls(*appended, root=Path(state.store), engine=engine)

    @classmethod
    def open_cached(
        cls, root: Path, *, cache_base: Path | None = None
    ) -> SearchIndex | None:
        """Open the cached index if it matches the store exactly, without reading logs.

        Args:
            root: The store directory.
            cache_base: Override for the user cache directory (tests).

        Returns:
            The index, or ``None`` when there is no trustworthy index for the store as
            it is now (then use :meth:`for_engine`).
        """
        root = root.resolve()
        cache = cache_dir_for(root, cache_base)
        state = load_state(cache, STAMP, str(root))
        if state is None:
            return None
        now = prints_from_disk(root, cache_base)
        if len(now) != len(state.shards) or not all(
            a.same_file(b) for a, b in zip(state.shards, now, strict=True)
        ):
            return None
        return cls._open_state(cache, state, "cached", None, root)

    @classmethod
    def once_built(
        cls, root: Path, *, cache_base: Path | None = None, timeout: float = 1800.0
    ) -> SearchIndex | None:
        """When another process is building the store's index now (it holds the
        write lock: a first read's detached build does after the read model), wait
        for it and open what it built; ``None`` when none was being built or it
        does not match the log. Building a second one beside it would replay the
        whole store again: at 10M decisions 16 GB while the builder holds as much.
        """
        cache = cache_dir_for(root.resolve(), cache_base)
        if not wait_for_writer(cache, timeout):
            return None
        return cls.open_cached(root, cache_base=cache_base)

    @classmethod
    def _open_state(
        cls, cache: Path, state: IndexState, how: str, engine: Engine | None, root: Path
    ) -> SearchIndex | None:
        live = open_part(cache, state.live)
        history = open_part(cache, state.history)
        if live is None or history is None:
            return None
        info = IndexInfo(how, state.history.docs, state.live.docs, cache)
        return cls(live, history, info, root=root, engine=engine)

    @classmethod
    def _reuse(
        cls,
        cache: Path,
        store: str,
        prints: tuple[ShardPrint, ...],
        engine: Engine | None,
    ) -> SearchIndex | None:
        state = load_state(cache, STAMP, store)
        if (
            state is None
            or compare_prints(state.shards, prints, Path(store) / "log") != "same"
        ):
            return None
        return cls._open_state(cache, state, "cached", engine, Path(store))

    @classmethod
    def _in_memory(cls, engine: Engine) -> SearchIndex:
        return cls(*build_in_memory(engine), root=None, engine=engine)

    # ------------------------------------------------------------ searching

    def search(
        self,
        query: str,
        *,
        limit: int = 20,
        include_all: bool = False,
        as_of: datetime | None = None,
        projection_at: ProjectionView | None = None,
    ) -> list[SearchHit] | None:
        """Search elements and decisions.

        Args:
            query: User text (see :mod:`kgai_tui.core.search.query` for the syntax).
            limit: How many hits at most (``<= 0`` means the default 20; at most
                :data:`MAX_LIMIT`).
            include_all: Also search superseded decisions and dead ends.
            as_of: Only what had been recorded by then (decisions recorded at or
                before it, elements that existed then, and, without ``include_all``,
                the decisions in force then).
            projection_at: The projection at ``as_of`` if the caller already has it
                (``as_of.project_as_of`` or a time slider's cache); otherwise the
                log is replayed up to ``as_of`` once and the result cached.

        Returns:
            The hits, best first; ``None`` when the query has nothing to search for
            (only stopwords, punctuation or nothing), like kg's ``"hits": null``.
        """
        vocab = self._vocabulary()
        pq = bridge_query(parse_query(query), vocab)
        analysed = analyse(pq)
        if not analysed.scoring and not pq.has_filters:
            return None
        limit = 20 if limit <= 0 else min(limit, MAX_LIMIT)
        if as_of is not None and as_of.tzinfo is None:
            as_of = as_of.replace(tzinfo=UTC)
        if as_of is not None and projection_at is not None:
            self._at.remember(as_of, projection_at)
        moment = None if as_of is None else self._at.moment(as_of)
        try:
            hits = self._run(pq, analysed, limit, include_all, as_of, moment)
            if len(hits) < limit and analysed.words:
                hits = self._typo_tier(
                    pq, vocab, hits, limit, include_all, as_of, moment
                )
            if not hits and analysed.words:
                hits = self._run(
                    pq, analysed, limit, include_all, as_of, moment, fuzzy=True
                )
        finally:
            if moment is not None:
                moment.close()
        return hits

    def _run(
        self,
        pq: ParsedQuery,
        a: Analysed,
        limit: int,
        include_all: bool,
        as_of: datetime | None,
        moment: Moment | None,
        *,
        fuzzy: bool = False,
    ) -> list[SearchHit]:
        filters = self._filter_clauses(pq)
        if filters is None:
            return []
        sources = self._sources(pq, include_all, as_of, moment, filters.clauses)
        exact = () if fuzzy else a.exact
        if not exact:
            cut = self._ranked(sources, a, limit, fuzzy, filters, (), {})[:limit]
        else:
            # Two tiers (docs/search.md#determinism): the documents with an exact
            # (unstemmed) form of a query word first, then those matching only by
            # stem, each in the usual order. A key ranked in the first tier (a
            # decision with an exact event) is left out of the second.
            either = any_term(EXACT_FIELD, exact)
            has_exact = replace(
                filters,
                terms=(*filters.terms, tuple((EXACT_FIELD, t) for t in exact)),
            )
            first = self._ranked(
                sources, a, limit, fuzzy, has_exact, (filter_clause(either),), {}
            )
            cut = first[:limit]
            if len(cut) < limit:
                seen: dict[int, set[int]] = {}
                for at, cand, _ in first:
                    seen.setdefault(at, set()).add(cand[1])
                rest = self._ranked(
                    sources,
                    a,
                    limit - len(cut),
                    fuzzy,
                    filters,
                    ((MUST_NOT, either),),
                    seen,
                )
                cut.extend(rest[: limit - len(cut)])
        matcher = Matcher(
            frozenset(a.words) | {t for p in a.phrases for _, t in p}, a.prefixes, fuzzy
        )
        # The current names of the elements the decisions shaped, in one lookup.
        names = self._element_names(
            {
                eid
                for _, _, disp in cut
                if "kind" not in disp and "elements" not in disp
                for eid in disp["shapes"]
            }
        )
        return [hit_of(score, disp, matcher, names) for _, (score, _, _), disp in cut]

    def _ranked(
        self,
        sources: Sequence[_Source],
        a: Analysed,
        k: int,
        fuzzy: bool,
        filters: Filters,
        tier: _Tier,
        seen: dict[int, set[int]],
    ) -> list[_Ranked]:
        """The first ``k`` matches of every source with the ``tier`` clauses, merged
        in hit order; keys in ``seen`` (by source position) are left out."""
        cands: list[_Ranked] = []
        for at, source in enumerate(sources):
            searcher = source.index.searcher()
            plan = plan_query(
                a,
                searcher,
                source.doctypes,
                (*source.clauses, *tier),
                fuzzy,
                source.typed,
                filters.subset,
            )
            if plan is None:
                continue
            skip = seen.get(at, set())
            want = k + len(skip)  # the first k keys not in skip are among them
            backend = Backend(searcher, source.keys)
            docs = backend.doc_count
            big = docs >= BOUND_MIN_DOCS
            doc_freq = Freqs(searcher)
            expect = match_bound(doc_freq, plan, filters) if big else docs
            top = None
            if plan.scored and big:
                top = bounded_top(backend, plan, want, source.allowed, expect, doc_freq)
            if top is None:
                top = top_k(
                    backend,
                    plan.query,
                    want,
                    scored=plan.scored,
                    allowed=source.allowed,
                    expect=expect,
                )
            cands.extend(
                (at, cand, stored_fields(searcher, cand[2]))
                for cand in top
                if cand[1] not in skip
            )
        # Cut the sources' merged candidates first: a hit's snippet and element
        # names cost more than ordering by the stored fields.
        cands.sort(
            key=lambda c: hit_order(
                c[1][0], c[2]["id"], "element" if "kind" in c[2] else "decision"
            )
        )
        return cands

    def _sources(
        self,
        pq: ParsedQuery,
        include_all: bool,
        as_of: datetime | None,
        moment: Moment | None,
        common: list[tuple[tantivy.Occur, tantivy.Query]],
    ) -> list[_Source]:
        want = set(pq.hit_kinds) or {"decision", "element"}
        if pq.authors:
            want.discard("element")
        out = []
        if as_of is None and not include_all:
            doctypes: tuple[DocType, ...] = tuple(
                dt for dt in ("decision", "element") if dt in want
            )
            if doctypes:
                keys = LIVE_KEYS[doctypes]
                out.append(_Source(self._live, doctypes, tuple(common), None, keys))
            return out
        if "element" in want:
            allowed = None if moment is None else moment.element_keys
            keys = LIVE_KEYS[("element",)]
            out.append(_Source(self._live, ("element",), tuple(common), allowed, keys))
        if "decision" in want:
            clauses = list(common)
            allowed = None
            if as_of is None:
                clauses.append((MUST_NOT, term_query("flags", "badid")))
            else:
                cut = int(as_of.timestamp())
                window = Q.range_query(
                    SCHEMA,
                    "time",
                    tantivy.FieldType.Integer,
                    None,
                    cut,
                    True,
                    True,
                    False,
                )
                clauses.append(filter_clause(window))
                if not include_all and moment is not None:
                    allowed = moment.head_keys
            out.append(
                _Source(
                    self._history, ("decision",), tuple(clauses), allowed, typed=False
                )
            )
        return out

    def _filter_clauses(self, pq: ParsedQuery) -> Filters | None:
        """Required clauses for ``kind:``, ``author:`` and ``element:``; ``None``
        when a filter cannot match anything."""
        out = []
        terms: list[tuple[tuple[str, str], ...]] = []
        subset: tuple[tantivy.Query, int] | None = None
        if pq.kinds:
            kinds = [normalize(k) for k in pq.kinds]
            out.append(filter_clause(any_term("f_kind", kinds)))
            terms.append(tuple(("f_kind", k) for k in kinds))
        if pq.authors:
            values = [normalize(v) for v in pq.authors]
            either = Q.boolean_query(
                [
                    (SHOULD, any_term("f_author", values)),
                    (SHOULD, any_term("f_writer", values)),
                ]
            )
            out.append(filter_clause(either))
            terms.append(
                tuple((f, v) for f in ("f_author", "f_writer") for v in values)
            )
        for value in pq.elements:
            ids = self._element_ids(value)
            if not ids:
                return None
            either = any_term("f_el", ids)
            out.append(filter_clause(either))
            terms.append(tuple(("f_el", i) for i in ids))
            if subset is None or len(ids) < subset[1]:
                subset = (either, len(ids))
        return Filters(out, None if subset is None else subset[0], tuple(terms))

    def _element_ids(self, value: str) -> list[str]:
        """Resolve an ``element:`` value (id, ``kind:name`` or name) to element ids."""
        ids = {value} if value.startswith("el_") else set()
        if ":" in value:
            ids.add(resolve_ref(value)[2])
        name = normalize(value)
        if name:
            searcher = self._live.searcher()
            query = Q.boolean_query(
                [
                    (MUST, term_query("f_name", name)),
                    (MUST, term_query("doctype", "element")),
                ]
            )
            hits = searcher.search(query, 1000, count=False).hits
            for _, addr in hits:
                ids.add(stored_fields(searcher, addr)["id"])
        return sorted(ids)

    # ------------------------------------------------------------ hits

    def _element_names(self, ids: set[str]) -> dict[str, str]:
        """The current name of each element in ``ids`` that exists, from the live
        index (an element's document has its id as its only ``f_el`` term)."""
        if not ids:
            return {}
        searcher = self._live.searcher()
        query = Q.boolean_query(
            [
                (MUST, any_term("f_el", sorted(ids))),
                (MUST, term_query("doctype", "element")),
            ]
        )
        hits = searcher.search(query, len(ids) + 8, count=False).hits
        docs = (stored_fields(searcher, addr) for _, addr in hits)
        return {doc["id"]: doc["name"] for doc in docs}

"""The tantivy side of search: the schema, query building blocks, and the backend
the ranking runs on (:class:`Backend`, see :mod:`kgai_tui.core.search.rank`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Final, Literal

import orjson
import tantivy

from kgai_tui.core.search.analysis import ANALYZER, EXACT, EXACT_ANALYZER, TEXT
from kgai_tui.core.search.docs import KEY_BIN_SHIFT

__all__ = [
    "DISMAX_TIE",
    "EXACT_FIELD",
    "FIELDS",
    "FILTER_FIELDS",
    "MUST",
    "MUST_NOT",
    "SCHEMA",
    "SCHEMA_VERSION",
    "SHOULD",
    "STAMP",
    "Backend",
    "DocType",
    "Q",
    "Restrictable",
    "any_term",
    "dismax",
    "filter_clause",
    "register",
    "stored_fields",
    "tantivy_failure",
    "term_query",
]

#: Bumped whenever documents, fields or analysis change; an index with another stamp
#: is foreign and rebuilt.
#: 5: recorded times read with ASCII digits only (Go's time.Parse).
SCHEMA_VERSION: Final = "kgai-search-6"
STAMP: Final = f"{SCHEMA_VERSION}/tantivy-{getattr(tantivy, '__version__', '?')}"
#: Text fields and their weights, per document type (the reference's weights).
FIELDS: Final = {
    "decision": (("title", 3.0), ("elnames", 1.5), ("body", 1.0), ("meta", 0.5)),
    "element": (("name", 3.0), ("kind", 2.0), ("props", 1.0)),
}
FILTER_FIELDS: Final = ("doctype", "f_kind", "f_author", "f_writer", "f_el", "f_name")
#: Every text field of a document, unstemmed (:data:`~.analysis.EXACT`), indexed
#: without frequencies or positions: it only decides which documents match a query
#: word exactly (they rank first), never a score.
EXACT_FIELD: Final = "exact"
DISMAX_TIE: Final = 0.1
#: A key range over fewer ``kbin`` values than this is found through their terms.
_NARROW_BINS: Final = 256
DocType = Literal["decision", "element"]


def tantivy_failure(exc: BaseException) -> bool:
    """Whether an exception is an error from tantivy (including a Rust panic)."""
    return isinstance(exc, Exception) or type(exc).__module__ == "pyo3_runtime"


def _schema() -> tantivy.Schema:
    sb = tantivy.SchemaBuilder()
    for fields in FIELDS.values():
        for name, _ in fields:
            sb.add_text_field(name, tokenizer_name=ANALYZER)
    sb.add_text_field(EXACT_FIELD, tokenizer_name=EXACT_ANALYZER, index_option="basic")
    for name in (*FILTER_FIELDS, "flags"):
        sb.add_text_field(name, tokenizer_name="raw", index_option="basic")
    # Fast fields only: ranges over them scan the column. Indexed, each document
    # added a unique term to each, which cost tantivy more than all the text fields;
    # "kbin" (see KEY_BIN_SHIFT) finds the documents of a narrow key range instead.
    sb.add_unsigned_field("key", fast=True)
    sb.add_unsigned_field("kbin", indexed=True)
    sb.add_integer_field("time", fast=True)
    sb.add_bytes_field("disp", stored=True)
    return sb.build()


SCHEMA: Final = _schema()


def register(index: tantivy.Index) -> tantivy.Index:
    """Register the custom analyzers (they are not persisted: after every open)."""
    index.register_tokenizer(ANALYZER, TEXT)
    index.register_tokenizer(EXACT_ANALYZER, EXACT)
    return index


Q = tantivy.Query
SHOULD, MUST, MUST_NOT = (
    tantivy.Occur.Should,
    tantivy.Occur.Must,
    tantivy.Occur.MustNot,
)


def term_query(field: str, value: str) -> tantivy.Query:
    return Q.term_query(SCHEMA, field, value)


def any_term(field: str, values: Iterable[str]) -> tantivy.Query:
    clauses = [(SHOULD, term_query(field, v)) for v in dict.fromkeys(values) if v]
    return Q.boolean_query(clauses) if clauses else Q.empty_query()


def dismax(queries: Sequence[tantivy.Query]) -> tantivy.Query:
    if len(queries) == 1:
        return queries[0]
    return Q.disjunction_max_query(list(queries), DISMAX_TIE)


def filter_clause(query: tantivy.Query) -> tuple[tantivy.Occur, tantivy.Query]:
    """A required clause that does not change scores."""
    return (MUST, Q.const_score_query(query, 0.0))


@dataclass(frozen=True, slots=True)
class Restrictable:
    """A plan's query with the way to limit its scoring leaves to a subset."""

    query: tantivy.Query
    restricted: Callable[[tantivy.Query], tantivy.Query] | None


class Backend:
    """The :class:`~kgai_tui.core.search.rank.Backend` of one tantivy searcher.

    Queries are tantivy queries or :class:`Restrictable` plans.
    """

    def __init__(self, searcher: tantivy.Searcher, keys: tuple[int, int]) -> None:
        self.searcher = searcher
        self.bounds = keys

    def top(self, query: Any, n: int) -> Sequence[tuple[float, Any]]:
        return self.searcher.search(_plain(query), n, count=False).hits

    @property
    def doc_count(self) -> int:
        return int(self.searcher.num_docs)

    def keys(self, addrs: Sequence[Any]) -> list[int]:
        values = self.searcher.fast_field_values("key", list(addrs))
        return [int(v) if v is not None else 0 for v in values]

    @property
    def key_range(self) -> tuple[int, int]:
        return self.bounds

    def counted(self, query: Any, n: int) -> tuple[Sequence[tuple[float, Any]], int]:
        found = self.searcher.search(_plain(query), n, count=True)
        return found.hits, _count(found)

    def by_key(self, query: Any, n: int) -> Sequence[Any]:
        found = self.searcher.search(
            _plain(query), n, count=False, order_by_field="key", order=tantivy.Order.Asc
        )
        return [addr for _, addr in found.hits]

    def restrict(self, query: Any, low: int, high: int) -> Any:
        """Exact on the ``key`` column; a narrow range also requires its ``kbin``
        terms, so tantivy checks the column only for the few documents they hold
        (a wide range scans the column: cheaper than thousands of terms)."""
        unsigned = tantivy.FieldType.Unsigned
        window = Q.range_query(SCHEMA, "key", unsigned, low, high, True, True, False)
        clauses = [(MUST, _plain(query)), filter_clause(window)]
        first, last = low >> KEY_BIN_SHIFT, high >> KEY_BIN_SHIFT
        if last - first < _NARROW_BINS:
            bins = Q.range_query(
                SCHEMA, "kbin", unsigned, first, last, True, True, True
            )
            if isinstance(query, Restrictable) and query.restricted is not None:
                # Each scoring leaf limited to the bins as well (same scores).
                clauses[0] = (MUST, query.restricted(bins))
            clauses.append(filter_clause(bins))
        return Q.boolean_query(clauses)


def _plain(query: Any) -> tantivy.Query:
    """The tantivy query of a query or a :class:`Restrictable` plan."""
    return query.query if isinstance(query, Restrictable) else query


def _count(found: tantivy.SearchResult) -> int:
    # The bundled stubs omit SearchResult.count, which tantivy-py has.
    return int(found.count)  # type: ignore[attr-defined]


def stored_fields(searcher: tantivy.Searcher, addr: Any) -> dict[str, Any]:
    """A document's stored display fields (the ``disp`` JSON; ``{}`` without)."""
    value = searcher.doc(addr).get_first("disp")
    obj = orjson.loads(value if isinstance(value, bytes) else b"{}")
    return obj if isinstance(obj, dict) else {}

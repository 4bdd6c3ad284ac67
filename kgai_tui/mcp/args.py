"""The MCP tools' arguments: each one's type, limits and published description.

Types are strict: pydantic's lax mode would take ``"yes"`` or ``1`` for true and
``"15"`` for 15, and an agent's mistaken type must come back as an error, not as a
guess. The bounds are the CLI's: ``context --max`` has no upper one and ``search
--limit`` stops at the search index's 10,000; the CLI reads 0 or less as "the
default" (kg's rule), which a tool refuses, since leaving the argument out says so.
"""

from __future__ import annotations

from typing import Annotated, Final

from pydantic import Field

from kgai_tui.mcp.record_doc import Decision

__all__ = [
    "SEARCH_LIMIT_MAX",
    "About",
    "AsOf",
    "ConflictElement",
    "Decisions",
    "DryRun",
    "Element",
    "IncludeAll",
    "Keep",
    "MaxItems",
    "OneDecision",
    "Paths",
    "Query",
    "Rationale",
    "SearchLimit",
    "Timestamp",
    "Title",
    "Topic",
]

#: ``kgai_tui.core.search.index.MAX_LIMIT``, the cap ``search --limit`` applies
#: (importing it would load tantivy when the server starts; a test keeps them equal).
SEARCH_LIMIT_MAX: Final = 10_000

_ELEMENT: Final = (
    '"kind:name" (e.g. "feature:Invoice"; the kind defaults to concept) or an '
    "element_id from "
)
_MOMENT: Final = (
    'RFC3339 ("2026-03-31T12:00:00Z") or YYYY-MM-DD (the end of that day, UTC)'
)

Paths = Annotated[
    list[str] | str | None,
    Field(
        description="Repository-relative file paths or globs you are about to touch, "
        'e.g. ["src/billing/pdf.go", "src/billing/*"]; one comma-separated string '
        "works too."
    ),
]
Topic = Annotated[
    str,
    Field(description='A topic in a few words, e.g. "invoice rendering".'),
]
MaxItems = Annotated[
    int,
    Field(
        ge=1,
        strict=True,
        description="At most this many elements (default 15; no upper bound, as "
        "`kgai-tui context --max`).",
    ),
]
Query = Annotated[
    str,
    Field(
        min_length=1,
        description='Free text: words match anywhere, "a phrase" in order, invoi* '
        "is a prefix; kind:feature, author:alice and element:Invoice filter.",
    ),
]
SearchLimit = Annotated[
    int,
    Field(
        ge=1,
        le=SEARCH_LIMIT_MAX,
        strict=True,
        description=f"At most this many hits (default 20, at most {SEARCH_LIMIT_MAX},"
        " as `kgai-tui search --limit`).",
    ),
]
IncludeAll = Annotated[
    bool,
    Field(
        strict=True,
        description="Also search superseded decisions, not only those in force.",
    ),
]
AsOf = Annotated[
    str | None,
    Field(description=f"Only what had been recorded by then: {_MOMENT}."),
]
Element = Annotated[
    str,
    Field(min_length=1, description=f"The element: {_ELEMENT}recall or search."),
]
About = Annotated[
    str,
    Field(
        description="Only elements whose name contains this (case-insensitive); "
        "empty for all."
    ),
]
Timestamp = Annotated[
    str,
    Field(min_length=1, description=f"The moment: {_MOMENT}."),
]
DryRun = Annotated[
    bool,
    Field(
        strict=True, description="Check and show what would be recorded; write nothing."
    ),
]
ConflictElement = Annotated[
    str,
    Field(min_length=1, description=f"The contested element: {_ELEMENT}conflicts."),
]
Keep = Annotated[
    str | None,
    Field(
        description="The winning decision's id, or a unique prefix of at least 4 "
        "characters (instead of title)."
    ),
]
Title = Annotated[
    str | None,
    Field(description="The title of a new deciding decision (instead of keep)."),
]
Rationale = Annotated[
    str,
    Field(description="Why, for a new deciding decision (only with title)."),
]
OneDecision = Annotated[Decision | None, Field(description="One decision to record.")]
Decisions = Annotated[
    list[Decision] | None,
    Field(description="Several decisions, recorded in order as one batch."),
]
Cypher = Annotated[
    str,
    Field(
        min_length=1,
        description="One read-only Cypher query over kg's schema (see the tool "
        "description), e.g. MATCH (e:Element) RETURN e.kind, count(*) AS n.",
    ),
]
QueryLimit = Annotated[
    int,
    Field(
        ge=1,
        strict=True,
        description="At most this many rows (default 100); the answer's `dropped` "
        "says how many more there were.",
    ),
]

"""The saved queries of the explorer's Query view, offered in the palette."""

from __future__ import annotations

from typing import Final

QUERY_EXAMPLES: Final[tuple[tuple[str, str], ...]] = (
    ("links between elements", "MATCH (a:Element)-[r:LINK]->(b:Element) "
     "RETURN a.name, r.kind, b.name"),
    ("elements nobody decided on", "MATCH (e:Element) WHERE NOT EXISTS "
     "{ MATCH (:Decision)-[:SHAPES]->(e) } RETURN e.name, e.id"),
    ("decisions later replaced", "MATCH (n:Decision)-[:SUPERSEDES]->(d:Decision) "
     "RETURN d.title, d.author, n.title AS replaced_by, d.id ORDER BY d.lamport"),
    ("decisions per author", "MATCH (d:Decision) WHERE d.author IS NOT NULL "
     "RETURN d.author, count(*) AS decisions ORDER BY decisions DESC"),
    ("what depends on each element", "MATCH (a:Element)-[:LINK]->(b:Element) "
     "RETURN b.name, collect(a.name) AS depended_on_by, b.id"),
)  # fmt: skip
"""A name and the Cypher of each saved query (palette: "query: <name>")."""

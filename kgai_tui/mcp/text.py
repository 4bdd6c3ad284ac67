"""What the MCP server tells an agent: its instructions and each tool's description.

The descriptions are the only manual an agent reads, so they say *when* to call each
tool, not only what it returns. Kept apart from the code so they can be reviewed as
prose.
"""

from __future__ import annotations

from typing import Final

from kgai_tui.core.agents.policy import RECORD_WHEN

INSTRUCTIONS: Final = """\
kgai is this team's decision memory: an append-only log of engineering decisions \
(what was decided, why, by whom, and what it replaced), projected into elements \
(services, features, modules, concepts...) and the decisions in force on each.

Workflow:
1. Before reading or changing code, call `recall` with the file paths you are about \
to touch (and/or a topic). Follow the decisions it returns; they are the team's \
current rules for those elements.
2. If `recall` comes back empty or thin, do not conclude that nothing was decided. \
Its `hints` name the store's elements nearest to your words: call `recall` again \
with the first hint's `name` as the topic. If there are no hints, rephrase in the \
store's own vocabulary: run `search` with a few words, take the element names and \
kinds from its hits (or from `status`), and call `recall` again with them.
3. Before implementing in an area, check `conflicts`: an element with two decisions \
in force is an open disagreement. Ask the person which side wins; never pick silently.
4. Use `history` to learn why an element changed and what a decision replaced.

Every answer is deterministic: the same store and the same arguments give the same \
bytes, identical to `kgai-tui <command> --json`, so you may quote and compare them."""

RECALL: Final = """\
Recall the decisions in force for the code you are about to touch. Call this FIRST, \
before reading or editing files, with the repository-relative paths you will work on \
(`paths`, e.g. ["src/billing/pdf.go"]; globs such as "src/billing/*" work) and/or a \
`topic` in a few words ("invoice rendering"). `max` caps the elements returned \
(default 15).

Returns the JSON of `kgai-tui context --json`: {ok, items: [{element_id, name, kind, \
props, links: [{dir, kind, neighbor}], why: [{title, rationale, when, is_head}], \
score}], shown, omitted, total, note?, hints?}. Each item's `why` lists the decisions \
in force on that element (newest first, at most 4).

When fewer than 3 elements match a topic, the answer adds `hints`: [{kind, name, \
element_id, why}], best first, the store's elements nearest to your words (shared \
word forms, decisions using your words, initials such as CDN, WordNet synonyms such \
as image for picture), each with the words that matched. Retry ONCE with the first hint's `name` as the topic (e.g. topic \
"EventBus" after "message queue" missed); try the next hint if that is not what you \
meant. Hints are suggestions, not answers: only `items` carry decisions. If there \
are no hints either, call `search` (or `status`) to learn the element names and \
kinds the team uses, then call `recall` again with those names as the topic. With \
no paths and no topic it lists the whole element graph."""

SEARCH: Final = """\
Full-text search over element names, kinds and properties and over decision titles \
and rationales (BM25, deterministic order). Use it to find the store's vocabulary \
when a `recall` comes back empty (then recall again with the element names found \
here), or to find a decision by its words. `query` is free text: words may match \
anywhere, "a phrase" must match in order, invoi* is a prefix, and kind:feature, \
author:alice or element:Invoice filter. Any casing of a compound name finds it \
(postgresql finds PostgreSQL) and a word with one typo finds what the word finds, \
ranked after exact matches. `limit` caps the hits (default 20, at most 10000). By \
default only decisions in force are searched; `include_all` adds superseded ones. \
`as_of` (RFC3339 or YYYY-MM-DD) limits it to what had been recorded by then. Returns \
the JSON of `kgai-tui search --json`: {hits: [{kind, id, name, extra?, elements?, \
score?, snippet?}] | null, ok, notes?, did_you_mean?}: `notes` says why little matched \
(a word no decision holds, superseded decisions that would match with include_all); \
`did_you_mean` is the query corrected, to search again with."""

HISTORY: Final = """\
Every decision that ever shaped one element, oldest first, including superseded \
ones (`is_head` marks those still in force). Use it to learn why an element is the \
way it is and what a decision replaced before proposing to change it. `element` is \
"kind:name" (e.g. "feature:Invoice"; kind defaults to concept) or an element_id from \
`recall`/`search`. Returns the JSON of `kgai-tui history --json`; an element no \
decision touches is an error."""

CONFLICTS: Final = """\
Elements with two or more decisions in force: open disagreements in the team. Check \
it before implementing in an area; if an element you are touching is listed, show \
both sides to the person and ask which one wins instead of picking one. `about` \
keeps elements whose name contains it (case-insensitive). Returns the JSON of \
`kgai-tui conflicts --json`: {conflicts: [{element_id, name, kind, heads, titles}] \
| null, count, ok}."""

AS_OF: Final = """\
The element graph as it stood at a past moment: element names, links, the decisions \
in force and the conflicts then. Use it to explain how things were when older code \
was written. `timestamp` is RFC3339 ("2026-03-31T12:00:00Z") or YYYY-MM-DD (the end \
of that day, UTC). Returns the JSON of `kgai-tui as-of --json`."""

STATUS: Final = """\
Summary of the store: where it is, this install and actor, and the number of \
events, elements, decisions and open conflicts. Call it once at the start of a \
session to check that decision memory is available. Returns the JSON of \
`kgai-tui status --json`."""

PEOPLE: Final = """\
Who decided what: one row per author, most decisions first, with how many of \
their decisions are in force, superseded or dead ends, how many elements they \
shaped, the open conflicts they are part of, their first and last decision and the \
installs they wrote from. Use it to find who to ask about an area. `as_of` counts \
as of a past moment (RFC3339 or YYYY-MM-DD). Returns the JSON of \
`kgai-tui people --json`."""

RECORD: Final = (
    (
        "Record new decisions in the team's log (append-only; nothing is ever "
        "overwritten). " + RECORD_WHEN + " "
    )
    + """\
Give exactly one of `decision` (one object) or `decisions` (a list), each \
{title, rationale?, author?, date?, refs?, supersedes_on?: ["kind:name"], mutations: \
[{op: "upsert_element", kind, name, props?} | {op: "set_prop", element, key, value} \
| {op: "add_link" | "retire_link", from, to, link}]}, the document `kgai-tui record` \
reads (the input schema describes every field). A decision on an element supersedes the decisions in force there. \
`dry_run` shows what would be written. Returns the JSON of `kgai-tui record --json`."""
)

RESOLVE_CONFLICT: Final = """\
End a conflict on one element by recording a decision that supersedes every side \
(both stay in history). Only call it after the person chose the outcome. `element` \
is "kind:name" or an element_id from `conflicts`. Give `keep` (the id, or a unique \
prefix of at least 4 characters, of the decision that wins) OR `title` (and an \
optional `rationale`) for a new deciding decision. Returns the JSON of \
`kgai-tui resolve-conflict --json`."""

QUERY: Final = """\
Ask the decision graph anything no other tool answers, in read-only Cypher (kg's \
`kg query`; the engine is Kuzu's dialect). Schema: node Element(id, kind, name, \
props: "key=value" lines sorted by key); node Decision(id, title, rationale, \
author, refs, summary, recorded_at TIMESTAMP, lamport INT64, install_id, \
event_hash); rel LINK(Element->Element, kind, created_by); rel SHAPES(Decision->\
Element, authority BOOLEAN: true where the decision changed the element); rel \
SUPERSEDES(Decision->Decision, newer to older). A decision is in force on an \
element when it SHAPES it with authority and no decision superseding it does too. \
Examples: MATCH (a:Element)-[r:LINK]->(b:Element) RETURN a.name, r.kind, b.name; \
MATCH (d:Decision)-[:SHAPES]->(e:Element {name:'Invoice'}) RETURN d.title, \
d.rationale ORDER BY d.recorded_at; MATCH (e:Element) WHERE NOT EXISTS { MATCH \
(:Decision)-[:SHAPES]->(e) } RETURN e.name. `as_of` answers over the graph as it \
stood then. Returns the JSON of `kgai-tui query`: {ok, rows: [{<RETURN column as \
written>: value}] or null, dropped?}; timestamps RFC3339 UTC; rows without ORDER BY \
are sorted by their JSON. Writes (CREATE, MERGE, SET, DELETE...) and file clauses \
(COPY, LOAD, EXPORT...) are refused; a syntax error names its position."""

#: Each tool's human title (clients show it in lists and approval prompts).
TITLES: Final = {
    "recall": "Recall the decisions for code",
    "search": "Search the decision memory",
    "history": "History of an element",
    "conflicts": "Open conflicts",
    "as_of": "The graph at a past moment",
    "status": "Decision memory status",
    "people": "Who decided what",
    "query": "Query the graph (Cypher)",
    "record": "Record decisions",
    "resolve_conflict": "Resolve a conflict",
}

"""Where the read model lives, its tables, and the header that must match to trust it."""

from __future__ import annotations

import os
import sqlite3
import sys
from pathlib import Path
from typing import Final
from urllib.parse import quote

from kgai_tui import __version__
from kgai_tui.core.store.cache_file import store_cache_dir

#: Bumped whenever the tables or what a column holds change.
FORMAT: Final = (
    # 4: the people tables; 5: the moments (at_el, at_link, at_dec, at_multi);
    # 6: ``meta`` a rowid table, the ``el_names`` index; 7: recorded times read with
    # ASCII digits only (Go's time.Parse); 8: per-author step arrays (at_person);
    # 9: each shard's broken hash chains (``breaks`` in the shard states);
    # 10: heads and links at a cut from checkpointed change logs (at_block, at_state);
    # 11: each shard's line digest (``digest`` in the shard states, for doctor);
    # 12: the graph's log of operations since its state (``graph_op``);
    # 13: the recall element delta file (``recall`` ``delta_file``), which an
    # earlier release would not read
    13
)

# One row per decision index: the projection's decision columns. Lists are JSON
# (NULL when empty); ``time`` is NULL for a stub or Go's zero time.
# One row per element in graph order (``seq``): its node attributes, the decisions
# shaping it (JSON ``[[index, authority], ...]`` in SHAPES creation order, NULL when
# none) and its heads (JSON sorted indices, NULL when it never had one), with the
# position of each in the projection's dicts (``shapes_seq``, ``heads_seq``).
# One row per author (the people read): what their recorded decisions (not the
# placeholders a supersedes creates) add up to, kept exact by every update; per
# author and element, how many of their decisions shape it (rows with n > 0 only;
# ``person.elements`` counts them); per author and install id, how many they wrote
# from it (n > 0 only); per element and head, the head's author (NULL for a
# placeholder) and whether it is superseded: the el.heads lists, with what people
# needs of each head's decision row, in a table small enough to read whole (el rows
# carry the long shapes lists). See :mod:`kgai_tui.core.model.people_rows`.
# The moments (what ``as-of`` reads, :mod:`kgai_tui.core.model.moments`), empty until
# the first ``as-of`` that opened the whole store writes them: per element in id
# order its record-low touches (marshal); per link its ends (by element number, -1
# never touched); the element heads and link liveness as step functions, kept as
# checkpointed logs of changes (:mod:`kgai_tui.core.model.frames`); the decisions
# whose title or lamport change with time. Per author, the
# sorted times ``people --as-of`` bisects (int64 arrays; the writers marshal),
# empty until the first of those reads (:mod:`kgai_tui.core.model.people_steps`).
# ``meta`` holds everything small: counts, the fingerprint, shard states, the
# graph's state for the NetworkX consumers; ``graph_op`` what updates did to that
# graph since (:mod:`kgai_tui.core.model.graph_log`). It is a rowid table: in a WITHOUT ROWID
# table the graph's value (18 MB at 10M decisions) is a key of the b-tree, and a
# lookup of any key that compares with it reads all of its overflow pages (~30 ms
# for ``header`` on every read at 10M); here the key index holds the keys alone.
DDL: Final = """
CREATE TABLE meta (k TEXT PRIMARY KEY, v BLOB NOT NULL);
CREATE TABLE dec (
    ix INTEGER PRIMARY KEY,
    id TEXT NOT NULL,
    title TEXT NOT NULL,
    rationale TEXT NOT NULL,
    author TEXT NOT NULL,
    refs TEXT NOT NULL,
    summary TEXT NOT NULL,
    time INTEGER,
    lamport INTEGER NOT NULL,
    install TEXT NOT NULL,
    hash TEXT NOT NULL,
    shapes TEXT,
    supersedes TEXT,
    superseded_by TEXT
);
CREATE TABLE graph_op (n INTEGER PRIMARY KEY, ops INTEGER NOT NULL, v BLOB NOT NULL);
CREATE TABLE link (
    src TEXT NOT NULL,
    dst TEXT NOT NULL,
    key TEXT NOT NULL,
    PRIMARY KEY (src, dst, key)
) WITHOUT ROWID;
CREATE TABLE el (
    id TEXT PRIMARY KEY,
    seq INTEGER NOT NULL,
    kind TEXT NOT NULL,
    name TEXT NOT NULL,
    props TEXT NOT NULL,
    shapes_seq INTEGER,
    shapes TEXT,
    heads_seq INTEGER,
    heads TEXT,
    max_auth INTEGER NOT NULL
) WITHOUT ROWID;
CREATE TABLE person (
    author TEXT PRIMARY KEY,
    decisions INTEGER NOT NULL,
    superseded INTEGER NOT NULL,
    elements INTEGER NOT NULL,
    first INTEGER,
    last INTEGER
) WITHOUT ROWID;
CREATE TABLE person_el (
    author TEXT NOT NULL,
    eid TEXT NOT NULL,
    n INTEGER NOT NULL,
    PRIMARY KEY (author, eid)
) WITHOUT ROWID;
CREATE TABLE person_writer (
    author TEXT NOT NULL,
    install TEXT NOT NULL,
    n INTEGER NOT NULL,
    PRIMARY KEY (author, install)
) WITHOUT ROWID;
CREATE TABLE head (
    eid TEXT NOT NULL,
    ix INTEGER NOT NULL,
    author TEXT,
    superseded INTEGER NOT NULL,
    PRIMARY KEY (eid, ix)
) WITHOUT ROWID;
CREATE TABLE at_el (
    n INTEGER PRIMARY KEY,
    eid TEXT NOT NULL,
    touch BLOB NOT NULL
);
CREATE TABLE at_link (
    id INTEGER PRIMARY KEY,
    src INTEGER NOT NULL,
    dst INTEGER NOT NULL,
    kind TEXT NOT NULL
);
CREATE TABLE at_block (
    id INTEGER PRIMARY KEY,
    first INTEGER NOT NULL,
    t BLOB NOT NULL,
    e BLOB NOT NULL,
    v BLOB NOT NULL
);
CREATE TABLE at_state (id INTEGER PRIMARY KEY, state BLOB NOT NULL);
CREATE UNIQUE INDEX at_el_eid ON at_el (eid);
CREATE INDEX at_link_ends ON at_link (src, dst, kind);
CREATE TABLE at_dec (g INTEGER PRIMARY KEY, stable INTEGER NOT NULL, steps BLOB NOT NULL);
CREATE TABLE at_multi (i INTEGER PRIMARY KEY, gs BLOB NOT NULL);
CREATE TABLE at_person (
    author TEXT PRIMARY KEY,
    nulls INTEGER NOT NULL,
    times BLOB NOT NULL,
    writers BLOB NOT NULL,
    elements BLOB NOT NULL,
    superseded BLOB NOT NULL
);
"""
#: Built after the bulk insert (cheaper than maintaining it row by row).
#: ``el_names`` covers the reads of every element's names or authority lamport
#: (``SELECT id, kind, name``, ``SELECT id, max_auth``): a scan of its ~5 MB at
#: 10M decisions instead of the element rows' 160 MB of shapes lists.
INDEXES: Final = (
    "CREATE UNIQUE INDEX dec_id ON dec (id); CREATE INDEX link_dst ON link (dst);"
    " CREATE INDEX head_ix ON head (ix);"
    " CREATE INDEX el_names ON el (kind, name, max_auth);"
)

DEC_COLUMNS: Final = (
    "id",
    "title",
    "rationale",
    "author",
    "refs",
    "summary",
    "time",
    "lamport",
    "install",
    "hash",
    "shapes",
    "supersedes",
    "superseded_by",
)
#: Columns holding JSON lists (decoded on fetch).
LIST_COLUMNS: Final = frozenset({"shapes", "supersedes", "superseded_by"})


def model_path(root: Path, base: Path | None = None) -> Path:
    """The model file of the store at ``root`` (``KGAI_TUI_CACHE_DIR`` overrides the base)."""
    return store_cache_dir(root, base) / "model.sqlite"


def header(root: Path) -> dict[str, object]:
    """What a model must have been built for: this format, Python, package and store."""
    return {
        "format": FORMAT,
        "python": sys.version,
        "kgai_tui": __version__,
        "root": os.fsdecode(root.resolve()),
    }


def model_enabled() -> bool:
    """Whether reads and writes go through the model (``KGAI_TUI_READ_MODEL=off``:
    every open replays the log into memory instead, as before the model)."""
    return os.environ.get("KGAI_TUI_READ_MODEL", "").lower() not in ("off", "0", "no")


#: How long a connection to the model waits for another's write (seconds).
BUSY_SECONDS: Final = 60.0


def connect_model(
    path: Path, *, write: bool, any_thread: bool = False
) -> sqlite3.Connection:
    """A connection to the model at ``path`` in autocommit mode: read-only unless
    ``write`` (a read never creates or changes the file), usable from any thread
    with ``any_thread`` (the explorer's workers)."""
    if write:
        return sqlite3.connect(path, isolation_level=None, timeout=BUSY_SECONDS)
    return sqlite3.connect(
        f"file:{quote(str(path))}?mode=ro",
        uri=True,
        isolation_level=None,
        timeout=BUSY_SECONDS,
        check_same_thread=not any_thread,
    )

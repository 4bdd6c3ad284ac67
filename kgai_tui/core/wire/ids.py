"""Content-derived ids: element ids, decision ids, event hashes (spec 2.4-2.6)."""

from __future__ import annotations

import hashlib

from kgai_tui.core.gosem.gotext import go_string, go_trim_space, normalize


def element_id(kind: str, name: str) -> str:
    """Return ``el_`` + 20 hex of sha256(Normalize(kind) NUL Normalize(name))."""
    digest = hashlib.sha256(
        (normalize(kind) + "\x00" + normalize(name)).encode("utf-8")
    ).hexdigest()
    return "el_" + digest[:20]


def decision_id_from_parts(
    title: str, rationale: str, author: str, mutations_json: bytes
) -> str:
    """Return the decision id for already-marshalled mutations (the fast path)."""
    head = (
        normalize(title)
        + "\x00"
        + go_string(rationale)
        + "\x00"
        + normalize(author)
        + "\x00"
    )
    digest = hashlib.sha256(head.encode("utf-8") + mutations_json).hexdigest()
    return "d_" + digest[:24]


def resolve_ref(token: str) -> tuple[str, str, str]:
    """Resolve an element reference ``kind:name`` (or a bare name) as spec 5.2 does.

    Returns:
        ``(kind, name, element_id)``; an empty token gives ``("", "", "")``.
    """
    token = go_trim_space(token)
    if not token:
        return ("", "", "")
    colon = token.find(":")
    if colon > 0:
        kind = go_trim_space(token[:colon])
        name = go_trim_space(token[colon + 1 :])
    else:
        kind, name = "concept", token
    return (kind, name, element_id(kind, name))

"""A shard's line digest: every parsed line's hash and gates, chained.

The model trusts a shard it already holds by its fingerprint (size, first and last
64 KiB), so an append-only log can be extended without reading it again. ``doctor``
is where that trust is checked: it verifies every byte and compares the digest of
what it read with the digest the model keeps. A chain, not one hash of the whole
shard, so the model extends it with the lines appended, never reading the old ones.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import Final

__all__ = ["extend_digest"]

_BYTE: Final = [bytes((i,)) for i in range(256)]


def extend_digest(prev: str, hashes: Sequence[str], flags: bytes | bytearray) -> str:
    """The digest after the lines ``hashes`` (with their gate ``flags``) follow the
    lines whose digest is ``prev`` (``""``: none), as hex."""
    sha, byte = hashlib.sha256, _BYTE
    d = bytes.fromhex(prev)
    for h, f in zip(hashes, flags, strict=True):
        d = sha(d + h.encode("utf-8", "surrogatepass") + byte[f]).digest()
    return d.hex()

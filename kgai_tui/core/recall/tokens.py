"""Tokenizing many texts at once, exactly as :func:`~kgai_tui.core.recall.scoring.tokenize`.

ASCII texts go through one ``bytes.translate`` and ``split`` (camelCase runs cut like
the engine); other texts through ``tokenize`` itself. Also the array types and the
UTF-8 encoding the recall index shares.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Final

import numpy as np
import numpy.typing as npt

from kgai_tui.core.recall.scoring import STOPWORDS, tokenize

__all__ = ["F64", "I32", "I64", "tokenize_many", "utf8"]

I32 = npt.NDArray[np.int32]
I64 = npt.NDArray[np.int64]
F64 = npt.NDArray[np.float64]


def utf8(s: str) -> bytes:
    """Encode like scoring does (lone surrogates never raise)."""
    return s.encode("utf-8", "surrogatepass")


def _ascii_table(lower: bool) -> bytes:
    """A ``bytes.translate`` table: letters and digits kept, \x01 kept, rest space."""
    out = bytearray(b" " * 256)
    for c in b"0123456789abcdefghijklmnopqrstuvwxyz":
        out[c] = c
    for c in b"ABCDEFGHIJKLMNOPQRSTUVWXYZ":
        out[c] = c + 32 if lower else c
    out[1] = 1
    return bytes(out)


_KEEP_LOWER: Final = _ascii_table(lower=True)
_KEEP_CASE: Final = _ascii_table(lower=False)
_CAMEL: Final = re.compile(rb"[a-z][A-Z]")
_CAMEL_SPLIT: Final = re.compile(rb"(?<=[a-z])(?=[A-Z])")
_STOP_BYTES: Final = frozenset(w.encode() for w in STOPWORDS)
_SEP_ID: Final = -1
_DROP_ID: Final = -2
_MULTI_BASE: Final = -3  # ids <= this index a list of token ids (camelCase runs)
#: Distinct texts split into runs at a time.
TOKENIZE_CHUNK: Final = 1 << 15


def _piece_ids(
    pieces: Sequence[bytes], vocab: dict[bytes, int], camel: bool
) -> tuple[dict[bytes, int], list[list[int]]]:
    """Map each distinct ASCII run to a token id, a marker, or a camelCase list."""
    ids: dict[bytes, int] = dict.fromkeys(pieces, _DROP_ID)
    multi: list[list[int]] = []
    for piece in ids:
        if piece == b"\x01":
            ids[piece] = _SEP_ID
            continue
        parts = _CAMEL_SPLIT.split(piece) if camel and _CAMEL.search(piece) else None
        if parts is None:
            low = piece.lower()
            if len(low) >= 2 and low not in _STOP_BYTES:
                ids[piece] = vocab.setdefault(low, len(vocab))
            continue
        kept = [
            vocab.setdefault(low, len(vocab))
            for low in (part.lower() for part in parts)
            if len(low) >= 2 and low not in _STOP_BYTES
        ]
        if len(kept) == 1:
            ids[piece] = kept[0]
        elif kept:
            ids[piece] = _MULTI_BASE - len(multi)
            multi.append(kept)
    return ids, multi


def tokenize_many(texts: Sequence[str], vocab: dict[bytes, int]) -> tuple[I32, I32]:
    """Tokenize many texts at once, exactly as ``tokenize`` would one by one.

    Distinct texts are tokenized once. ASCII texts (without ``\x01``) go through
    ``bytes.translate`` and ``split`` (letters and digits kept, camelCase runs cut
    like the engine); other texts through :func:`tokenize` itself.

    Args:
        texts: The texts.
        vocab: UTF-8 token -> id, extended in place with ids ``len(vocab), ...``.

    Returns:
        ``(owner, tid)``: one row per token of a text (text index, token id),
        grouped by text index; a text's repeated token may appear more than once.
        Both int32 (a text index and a token id are below 2**31): one row per
        token, so at 10M decisions of real text hundreds of millions of rows.
    """
    n = len(texts)
    empty = np.zeros(0, dtype=np.int32)
    if n == 0:
        return empty, empty.copy()
    uniq = dict.fromkeys(texts)
    ulist: list[str] = list(uniq) if len(uniq) != n else list(texts)
    text_uid: I64 | None = None
    if len(ulist) != n:
        uid_of = dict(zip(ulist, range(len(ulist)), strict=True))
        text_uid = np.fromiter(map(uid_of.__getitem__, texts), np.int64, count=n)
        del uid_of
    del uniq
    joined = "\x01".join(ulist)
    if joined.isascii() and joined.count("\x01") == len(ulist) - 1:
        fast, slow = ulist, []
        fast_pos: I64 | None = None
    else:
        ok = [t.isascii() and "\x01" not in t for t in ulist]
        fast = [t for t, good in zip(ulist, ok, strict=True) if good]
        slow = [i for i, good in enumerate(ok) if not good]
        fast_pos = np.flatnonzero(np.asarray(ok, dtype=np.bool_))
    del joined
    owners: list[I32] = []
    tids: list[I32] = []
    mixed = bool(slow)  # tokens not in text order: sorted at the end
    # A chunk of texts at a time: the runs of a million titles, split at once, were
    # ~290 MB of bytes objects (the peak of a model's first build at 1M). Chunks
    # give the same ids in the same order: each new token takes the next id where
    # it first appears, and a chunk without camelCase splits as the whole would.
    for base in range(0, len(fast), TOKENIZE_CHUNK):
        raw = "\x01".join(fast[base : base + TOKENIZE_CHUNK]).encode("ascii")
        camel = _CAMEL.search(raw) is not None
        table = _KEEP_CASE if camel else _KEEP_LOWER
        pieces = raw.translate(table).replace(b"\x01", b" \x01 ").split()
        del raw
        piece_id, multi = _piece_ids(pieces, vocab, camel)
        ids = np.fromiter(
            map(piece_id.__getitem__, pieces), dtype=np.int64, count=len(pieces)
        )
        del pieces, piece_id
        which = np.cumsum(ids == _SEP_ID) + base
        if fast_pos is not None:
            which = fast_pos[which]
        keep = ids >= 0
        owners.append(which[keep].astype(np.int32))
        tids.append(ids[keep].astype(np.int32))
        if multi:
            mixed = True
            at = np.flatnonzero(ids <= _MULTI_BASE)
            o: list[int] = []
            k: list[int] = []
            for w, m in zip(which[at].tolist(), ids[at].tolist(), strict=True):
                for t in multi[_MULTI_BASE - m]:
                    o.append(w)
                    k.append(t)
            owners.append(np.asarray(o, dtype=np.int32))
            tids.append(np.asarray(k, dtype=np.int32))
    if slow:
        o = []
        k = []
        for i in slow:
            for tok in tokenize(ulist[i]):
                o.append(i)
                k.append(vocab.setdefault(utf8(tok), len(vocab)))
        owners.append(np.asarray(o, dtype=np.int32))
        tids.append(np.asarray(k, dtype=np.int32))
    u_owner = np.concatenate(owners) if owners else empty
    del owners
    u_tid = np.concatenate(tids) if tids else empty
    del tids
    if mixed:
        order = np.argsort(u_owner, kind="stable")
        u_owner, u_tid = u_owner[order], u_tid[order]
        del order
    if text_uid is None:
        return u_owner, u_tid
    return _expand(u_owner, u_tid, text_uid, len(ulist))


#: Texts whose tokens :func:`_expand` gathers at a time.
_EXPAND_TEXTS: Final = 1 << 16


def _expand(u_owner: I32, u_tid: I32, text_uid: I64, n_unique: int) -> tuple[I32, I32]:
    """Every text's tokens, text ``i`` holding those of its distinct text
    ``text_uid[i]`` (whose tokens are ``u_owner``/``u_tid``, grouped by it).

    Gathered a block of texts at a time: whole-length index arrays were four
    int64 arrays as long as the result (at 10M decisions, gigabytes)."""
    u_ptr = np.zeros(n_unique + 1, dtype=np.int64)
    np.cumsum(np.bincount(u_owner, minlength=n_unique), out=u_ptr[1:])
    del u_owner
    counts = u_ptr[text_uid + 1] - u_ptr[text_uid]
    at = np.zeros(len(text_uid) + 1, dtype=np.int64)  # where each text's run starts
    np.cumsum(counts, out=at[1:])
    owner = np.repeat(np.arange(len(text_uid), dtype=np.int32), counts)
    tid = np.empty(int(at[-1]), dtype=np.int32)
    for a in range(0, len(text_uid), _EXPAND_TEXTS):
        b = min(a + _EXPAND_TEXTS, len(text_uid))
        lo, hi = int(at[a]), int(at[b])
        shift = np.repeat(u_ptr[text_uid[a:b]] - at[a:b], counts[a:b])
        shift += np.arange(lo, hi, dtype=np.int64)
        tid[lo:hi] = u_tid[shift]
    return owner, tid

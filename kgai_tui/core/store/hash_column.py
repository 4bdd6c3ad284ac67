"""Event hashes held as their 32 raw bytes: :class:`HashColumn`.

Every event hash is ``sha256:`` and 64 lowercase hex digits. A million of them as
``str`` cost ~120 MB (71 characters and a 49-byte header each), and a cold open
held them three ways at once: its keys, its shards' scans and its decisions. As
raw bytes they cost 32 MB a column; each value is made when read.
"""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Final, overload

from kgai_tui.core.store.packed_column import PackedColumn

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

__all__ = ["HashColumn"]

PREFIX: Final = "sha256:"
#: Bytes of one hash.
WIDTH: Final = 32
_ZERO: Final = bytes(WIDTH)
_ZERO_HEX: Final = "0" * (2 * WIDTH)
#: Values made at a time by a pass over a column.
_CHUNK: Final = 65536


class HashColumn(PackedColumn):
    """Hashes as ``WIDTH`` raw bytes each, then the values appended after.

    All-zero bytes stand for the empty value: a decision known only as superseded
    has no event of its own. No event hashes to zero (that would be a SHA-256
    preimage), and :meth:`from_hex` refuses one that claims to.
    """

    __slots__ = ("_raw",)

    def __init__(self, raw: bytes = b"") -> None:
        """``raw``: the hashes' bytes end to end (a multiple of ``WIDTH``)."""
        if len(raw) % WIDTH:
            raise ValueError("a hash column's bytes are not whole hashes")
        super().__init__()
        self._raw = raw

    @classmethod
    def from_hex(cls, digits: npt.NDArray[np.uint8]) -> HashColumn | None:
        """From an ``(n, 64)`` array of ASCII hex digits (the part after
        ``sha256:``); ``None`` unless every digit is lowercase hex and no hash is
        zero (such a line is no canonical event: the caller reads it exactly)."""
        import numpy as np

        if digits.ndim != 2 or digits.shape[1] != 2 * WIDTH:
            return None
        nibbles = _nibbles()[digits]
        if (nibbles > 15).any():
            return None
        raw = (nibbles[:, 0::2] << 4) | nibbles[:, 1::2]
        if len(raw) and not raw.any(axis=1).all():
            return None
        return cls(np.ascontiguousarray(raw, dtype=np.uint8).tobytes())

    @classmethod
    def of(cls, values: Iterable[str]) -> HashColumn:
        """From hashes' text, each ``sha256:`` and 64 lowercase hex digits.

        Raises:
            ValueError: a value is not such a hash (or is zero).
        """
        raw = bytearray()
        for value in values:
            digest = _digest(value)
            if digest is None:
                raise ValueError(f"not an event hash: {value[:80]!r}")
            raw += digest
        return cls(bytes(raw))

    @classmethod
    def joined(cls, columns: Iterable[HashColumn]) -> HashColumn:
        """The columns one after another (none with appended values)."""
        parts = []
        for c in columns:
            if c._tail:
                raise ValueError("a hash column with appended values cannot be joined")
            parts.append(c._raw)
        return cls(b"".join(parts))

    def take(self, at: npt.NDArray[np.int64]) -> HashColumn:
        """The hashes at ``at`` (-1: the empty value), as a new column."""
        import numpy as np

        rows = np.frombuffer(self._raw, dtype=np.uint8).reshape(-1, WIDTH)
        picked = np.zeros((len(at), WIDTH), dtype=np.uint8)
        some = at >= 0
        picked[some] = rows[at[some]]
        return HashColumn(picked.tobytes())

    @property
    def raw(self) -> bytes:
        """The hashes' bytes (not the appended values)."""
        return self._raw

    def _held(self) -> int:
        return len(self._raw) // WIDTH

    def _packed(self, i: int) -> str:
        row = self._raw[i * WIDTH : (i + 1) * WIDTH]
        return "" if row == _ZERO else PREFIX + row.hex()

    @overload
    def __getitem__(self, i: int) -> str: ...
    @overload
    def __getitem__(self, i: slice) -> list[str]: ...
    def __getitem__(self, i: int | slice) -> str | list[str]:
        if isinstance(i, slice):
            start, stop, step = i.indices(len(self))
            n = len(self._raw) // WIDTH
            if step == 1 and stop <= n:
                return self._run(start, stop) if start < stop else []
        return super().__getitem__(i)

    def _run(self, start: int, stop: int) -> list[str]:
        """The values ``start:stop`` of the bytes, made from one ``hex()`` of them."""
        text, step = self._raw[start * WIDTH : stop * WIDTH].hex(), 2 * WIDTH
        return [
            "" if h == _ZERO_HEX else PREFIX + h
            for h in (text[j : j + step] for j in range(0, len(text), step))
        ]

    def __iter__(self) -> Iterator[str]:
        n = len(self._raw) // WIDTH
        for at in range(0, n, _CHUNK):
            yield from self._run(at, min(at + _CHUNK, n))
        yield from self._tail

    def index(self, value: object, start: int = 0, stop: int | None = None) -> int:
        """Where ``value`` first is at or after ``start`` (before ``stop``), as
        ``list.index``: the bytes are searched, no value is made."""
        n, total = len(self._raw) // WIDTH, len(self)
        start = max(start + total if start < 0 else start, 0)
        stop = total if stop is None else min(stop + total if stop < 0 else stop, total)
        digest = _digest(value)
        if digest is not None and start < n:
            pos = self._raw.find(digest, start * WIDTH, min(stop, n) * WIDTH)
            while pos >= 0 and pos % WIDTH:  # across two hashes: look on
                pos = self._raw.find(digest, pos + 1, min(stop, n) * WIDTH)
            if pos >= 0:
                return pos // WIDTH
        for i in range(max(start, n), stop):
            if self._tail[i - n] == value:
                return i
        raise ValueError(f"{value!r} is not in the column")

    def __contains__(self, value: object) -> bool:
        try:
            self.index(value)
        except ValueError:
            return False
        return True

    def __eq__(self, other: object) -> bool:
        if isinstance(other, HashColumn):
            return self._raw == other._raw and self._tail == other._tail
        if isinstance(other, Sequence) and not isinstance(other, (str, bytes)):
            return len(self) == len(other) and all(
                a == b for a, b in zip(self, other, strict=True)
            )
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]  # mutable, as a list

    def lines_digest(self) -> bytes:
        """SHA-256 of the values joined by newlines, as of a list of them:
        made with NumPy, no value made one by one."""
        if self._tail or self._has_empty():
            return hashlib.sha256("\n".join(self).encode()).digest()
        import numpy as np

        n = len(self._raw) // WIDTH
        if not n:
            return hashlib.sha256(b"").digest()
        lines = np.empty((n, len(PREFIX) + 2 * WIDTH + 1), dtype=np.uint8)
        lines[:, : len(PREFIX)] = np.frombuffer(PREFIX.encode(), dtype=np.uint8)
        hexed = np.frombuffer(self._raw.hex().encode(), dtype=np.uint8)
        lines[:, len(PREFIX) : -1] = hexed.reshape(n, 2 * WIDTH)
        lines[:, -1] = ord("\n")
        return hashlib.sha256(lines.tobytes()[:-1]).digest()

    def _has_empty(self) -> bool:
        """Whether some hash is the empty value (all zeros)."""
        raw = self._raw
        pos = raw.find(_ZERO)
        while pos >= 0:
            if pos % WIDTH == 0:
                return True
            pos = raw.find(_ZERO, pos + 1)
        return False


def _digest(value: object) -> bytes | None:
    """The raw bytes of a hash's text; ``None`` for anything else (no stored
    hash equals it but the empty value, which is all zeros)."""
    if value == "":
        return _ZERO
    if not isinstance(value, str) or len(value) != len(PREFIX) + 2 * WIDTH:
        return None
    if not value.startswith(PREFIX):
        return None
    digits = value[len(PREFIX) :]
    if digits != digits.lower() or not digits.isascii():
        return None
    try:
        raw = bytes.fromhex(digits)
    except ValueError:
        return None
    if len(raw) != WIDTH or raw == _ZERO:  # fromhex skips spaces; zero reads ""
        return None
    return raw


@functools.cache
def _nibbles() -> npt.NDArray[np.uint8]:
    """Per byte value, its hex digit's value; 255 for anything but ``0-9a-f``."""
    import numpy as np

    table = np.full(256, 255, dtype=np.uint8)
    table[ord("0") : ord("9") + 1] = np.arange(10, dtype=np.uint8)
    table[ord("a") : ord("f") + 1] = np.arange(10, 16, dtype=np.uint8)
    return table

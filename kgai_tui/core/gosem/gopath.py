"""Go's ``path.Match``, ported byte for byte (runes decoded only for ``?`` and classes)."""

from __future__ import annotations

from typing import Final

_RUNE_ERROR: Final = 0xFFFD
_STAR: Final = ord("*")
_QUESTION: Final = ord("?")
_LBRACKET: Final = ord("[")
_RBRACKET: Final = ord("]")
_BACKSLASH: Final = ord("\\")
_CARET: Final = ord("^")
_DASH: Final = ord("-")
_SLASH: Final = ord("/")


def _utf8(s: str) -> bytes:
    """Encode like a Go string conversion; lone surrogates never raise."""
    return s.encode("utf-8", "surrogatepass")


def _decode_rune(s: bytes) -> tuple[int, int]:
    """Decode the first rune of non-empty bytes like Go's ``DecodeRuneInString``."""
    c = s[0]
    if c < 0x80:
        return c, 1
    if c < 0xC2 or c > 0xF4:
        return _RUNE_ERROR, 1
    width = 2 if c < 0xE0 else 3 if c < 0xF0 else 4
    try:
        ch = s[:width].decode("utf-8")
    except UnicodeDecodeError:
        return _RUNE_ERROR, 1
    return ord(ch), width


def _scan_chunk(pattern: bytes) -> tuple[bool, bytes, bytes]:
    """Split off leading stars and the following star-free chunk (Go ``scanChunk``)."""
    star = False
    while pattern and pattern[0] == _STAR:
        pattern = pattern[1:]
        star = True
    in_range = False
    i = 0
    while i < len(pattern):
        c = pattern[i]
        if c == _BACKSLASH:
            if i + 1 < len(pattern):
                i += 1
        elif c == _LBRACKET:
            in_range = True
        elif c == _RBRACKET:
            in_range = False
        elif c == _STAR and not in_range:
            break
        i += 1
    return star, pattern[:i], pattern[i:]


def _get_esc(chunk: bytes) -> tuple[int, bytes, bool]:
    """Read one possibly escaped class character (Go ``getEsc``); flag bad patterns."""
    if not chunk or chunk[0] in (_DASH, _RBRACKET):
        return 0, chunk, True
    if chunk[0] == _BACKSLASH:
        chunk = chunk[1:]
        if not chunk:
            return 0, chunk, True
    r, n = _decode_rune(chunk)
    bad = r == _RUNE_ERROR and n == 1
    rest = chunk[n:]
    return r, rest, bad or not rest


def _match_chunk(chunk: bytes, s: bytes) -> tuple[bytes, bool, bool]:
    """Match a chunk at the start of ``s`` (Go ``matchChunk``): ``(rest, ok, bad)``."""
    failed = False
    while chunk:
        if not failed and not s:
            failed = True
        c = chunk[0]
        if c == _LBRACKET:
            r = 0
            if not failed:
                r, n = _decode_rune(s)
                s = s[n:]
            chunk = chunk[1:]
            negated = False
            if chunk and chunk[0] == _CARET:
                negated = True
                chunk = chunk[1:]
            matched = False
            nrange = 0
            while True:
                if chunk and chunk[0] == _RBRACKET and nrange > 0:
                    chunk = chunk[1:]
                    break
                lo, chunk, bad = _get_esc(chunk)
                if bad:
                    return b"", False, True
                hi = lo
                if chunk[0] == _DASH:
                    hi, chunk, bad = _get_esc(chunk[1:])
                    if bad:
                        return b"", False, True
                if lo <= r <= hi:
                    matched = True
                nrange += 1
            if matched == negated:
                failed = True
        elif c == _QUESTION:
            if not failed:
                if s[0] == _SLASH:
                    failed = True
                _, n = _decode_rune(s)
                s = s[n:]
            chunk = chunk[1:]
        else:
            if c == _BACKSLASH:
                chunk = chunk[1:]
                if not chunk:
                    return b"", False, True
            if not failed:
                if chunk[0] != s[0]:
                    failed = True
                s = s[1:]
            chunk = chunk[1:]
    if failed:
        return b"", False, False
    return s, True, False


def _go_match(pattern: bytes, name: bytes) -> tuple[bool, bool]:
    """Port of Go's ``path.Match`` on bytes: ``(matched, ErrBadPattern)``."""
    while pattern:
        star, chunk, pattern = _scan_chunk(pattern)
        if star and not chunk:
            # A trailing star matches the rest unless it holds a slash.
            return _SLASH not in name, False
        t, ok, bad = _match_chunk(chunk, name)
        if ok and (not t or pattern):
            name = t
            continue
        if bad:
            return False, True
        if star:
            advanced = False
            # Skip i+1 bytes (not runes, as Go does); a star cannot skip a slash.
            i = 0
            while i < len(name) and name[i] != _SLASH:
                t, ok, bad = _match_chunk(chunk, name[i + 1 :])
                if ok:
                    if not pattern and t:
                        i += 1
                        continue
                    name = t
                    advanced = True
                    break
                if bad:
                    return False, True
                i += 1
            if advanced:
                continue
        # Before failing, Go checks that the rest of the pattern is well formed.
        while pattern:
            _, chunk, pattern = _scan_chunk(pattern)
            if _match_chunk(chunk, b"")[2]:
                return False, True
        return False, False
    return not name, False


def go_path_match(pattern: str, name: str) -> bool:
    """Report whether ``name`` matches ``pattern`` exactly like Go's ``path.Match``.

    ``*`` matches any run of non-``/`` characters, ``?`` one non-``/`` character,
    ``[...]`` is a class with ``a-z`` ranges negated by a leading ``^`` (``!`` is a
    literal), and ``\\`` escapes the next character. Like Go, the match runs on the
    UTF-8 bytes, so a star may stop inside a multi-byte character and ``?`` or a class
    then consumes one stray byte as U+FFFD. A malformed pattern (Go's
    ``ErrBadPattern``) never matches.

    Args:
        pattern: The shell pattern.
        name: The path to test; the pattern must match all of it.

    Returns:
        True on a match, False on a mismatch or a malformed pattern.
    """
    matched, _ = _go_match(_utf8(pattern), _utf8(name))
    return matched

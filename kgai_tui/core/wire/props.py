"""The element props blob: ``key=value`` lines, sorted by key (spec 4.1)."""

from __future__ import annotations

from kgai_tui.core.gosem.gotext import go_trim_space


def _clean_key(key: str) -> str:
    """A prop key as setProp stores it: trimmed, one line, no ``=``."""
    return go_trim_space(key).replace("\n", " ").replace("\r", " ").replace("=", "-")


# Keys repeat across a log (a store has a few dozen); their cleaned form is cached.
_KEYS: dict[str, str] = {}
#: The cache, for the replay's inlined lookups (:func:`clean_key` on a miss).
CLEAN_KEYS: dict[str, str] = _KEYS


def clean_key(key: str) -> str:
    """:func:`_clean_key`, cached."""
    clean = _KEYS.get(key)
    if clean is None:
        clean = _clean_key(key)
        if len(_KEYS) < 4096:
            _KEYS[key] = clean
    return clean


def set_prop(blob: str, key: str, value: str) -> str:
    """Return the blob with ``key`` set to ``value``, as the reference's setProp."""
    key = _clean_key(key)
    value = value.replace("\n", " ").replace("\r", " ")
    new_line = key + "=" + value
    lines: list[tuple[str, str]] = []
    replaced = False
    for raw in blob.split("\n"):
        line = go_trim_space(raw)
        if not line:
            continue
        line_key = line.split("=", 1)[0]
        if line_key == key:
            lines.append((key, new_line))
            replaced = True
        else:
            lines.append((line_key, line))
    if not replaced:
        lines.append((key, new_line))
    lines.sort(key=lambda kv: kv[0])
    return "\n".join(line for _, line in lines)


def parse_props(blob: str) -> dict[str, str]:
    """Read a props blob into a dict (lines without ``=`` are ignored)."""
    out: dict[str, str] = {}
    for raw in blob.split("\n"):
        line = go_trim_space(raw)
        if "=" not in line:
            continue
        k, v = line.split("=", 1)
        out[k] = v
    return out


class ElementProps:
    """One element's props as lines by key: :func:`set_prop` without re-parsing.

    ``set_prop`` re-reads and trims every line of the blob on each write, which costs
    most of a big replay. The only lasting effect of that re-read is that each line
    is trimmed once a later write happens, so this keeps the lines by key and
    remembers the one line (the latest) that may still carry outer white space.
    ``blob()`` equals what the same sequence of ``set_prop`` calls returns.
    """

    __slots__ = ("_lines", "_untrimmed")

    def __init__(self) -> None:
        """Start with no props."""
        self._lines: dict[str, str] = {}
        self._untrimmed: str | None = None

    @classmethod
    def from_blob(cls, blob: str) -> ElementProps:
        """Read a blob written by ``set_prop`` (lines kept as they are)."""
        props = cls()
        for raw in blob.split("\n"):
            line = go_trim_space(raw)
            if not line:
                continue
            key = line.split("=", 1)[0]
            props._lines[key] = raw
            if raw != line:
                props._untrimmed = key
        return props

    def set(self, key: str, value: str) -> None:
        """Apply one ``set_prop(blob, key, value)``."""
        if self._untrimmed is not None:
            old = self._untrimmed
            self._lines[old] = go_trim_space(self._lines[old])
            self._untrimmed = None
        clean = clean_key(key)
        if "\n" in value or "\r" in value:
            value = value.replace("\n", " ").replace("\r", " ")
        line = clean + "=" + value
        self._lines[clean] = line
        # The key is trimmed, so only the value's end can leave the line untrimmed;
        # a printable ASCII last character cannot be white space.
        last = value[-1:]
        if last and not " " < last <= "~" and go_trim_space(line) != line:
            self._untrimmed = clean

    def blob(self) -> str:
        """The blob, lines sorted by key."""
        lines = self._lines
        if len(lines) == 1:
            return next(iter(lines.values()))
        return "\n".join(lines[k] for k in sorted(lines))

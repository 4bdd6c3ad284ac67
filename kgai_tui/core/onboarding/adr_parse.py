"""Read one architecture decision record: Nygard/adr-tools or MADR 2, 3 and 4.

Nygard (adr-tools)::

    # 7. Invoices are rendered with Typst
    Date: 2024-03-01
    ## Status
    Accepted
    Supersedes [3. Invoices are HTML pages](0003-invoices-are-html-pages.md)
    ## Context / ## Decision / ## Consequences

MADR 3/4 put ``status``, ``date`` and ``decision-makers`` (MADR 3: ``deciders``) in a
YAML front matter and use ``## Context and Problem Statement``, ``## Considered
Options`` and ``## Decision Outcome``; MADR 2 writes ``* Status:``, ``* Deciders:``
and ``* Date:`` bullets under the title instead.

Relations are ``<verb> [text](NNNN-file.md)`` in the status (or a ``## Links``
section): ``Supersedes``, ``Superseded by``, ``Amends``, ``Amended by`` and any
other verb (``Clarifies``). A relation "by" the other record is kept as it was
written; :mod:`kgai_tui.core.onboarding.adr_import` turns both sides into one fact.

Parsing is pure: no file system, no store. A record that cannot be read raises
:class:`AdrSyntaxError` with the 1-based line of the problem.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Final

from kgai_tui.core.gosem.gotext import go_trim_space, parse_recorded
from kgai_tui.core.onboarding.frontmatter import (
    FrontMatterError,
    Value,
    parse_front_matter,
)

_FENCE: Final = re.compile(r"\s{0,3}(```|~~~)")
_H1: Final = re.compile(r"#\s+(.*?)\s*#*\s*\Z")
_H2: Final = re.compile(r"##\s+(.*?)\s*#*\s*\Z")
_NUMBERED_TITLE: Final = re.compile(
    r"(?:ADR[-\s_]*)?(\d{1,9})\s*(?:[.:)]|\s-)?\s+(\S.*)\Z", re.IGNORECASE
)
_FILE_NUMBER: Final = re.compile(r"(\d{1,9})(?:[-_.]|\Z)")
_PREAMBLE: Final = re.compile(r"\s*(?:[*-]\s+)?([A-Za-z][A-Za-z -]*?)\s*:\s*(.*)\Z")
_LINK: Final = re.compile(r"\[([^\]]*)\]\(([^)\s]*)[^)]*\)")
_TEXT_NUMBER: Final = re.compile(r"(?:ADR[-\s_]*)?0*(\d{1,9})\b", re.IGNORECASE)
_COMMENT: Final = re.compile(r"<!--.*?-->", re.DOTALL)
_LIST_ITEM: Final = re.compile(r"\s{0,3}(?:[*+-]|\d+[.)])\s+(.*)\Z")
_BLANKS: Final = re.compile(r"\n{3,}")
_BLOCK_START: Final = re.compile(r"\s*(?:[*+>|#-]|\d+[.)]\s)")

CONTEXT_SECTIONS: Final = (
    "context",
    "context and problem statement",
    "problem statement",
    "background",
)
DECISION_SECTIONS: Final = ("decision", "decision outcome")
OPTION_SECTIONS: Final = ("considered options", "options considered", "options")
LINK_SECTIONS: Final = ("links", "related decisions", "related adrs")
PROSE_SECTIONS: Final = ("more information", "notes")
CORE_VERBS: Final = ("supersedes", "superseded by", "amends", "amended by")
LIFECYCLE: Final = (
    "accepted",
    "proposed",
    "rejected",
    "deprecated",
    "draft",
    "approved",
    "superseded",
)
_AUTHOR_KEYS: Final = ("decision-makers", "deciders", "authors", "author")


class AdrSyntaxError(ValueError):
    """A record that cannot be read; ``line`` is 1-based."""

    def __init__(self, line: int, message: str) -> None:
        """Remember where the problem is."""
        super().__init__(message)
        self.line = line
        self.message = message


@dataclass(frozen=True, slots=True)
class Relation:
    """``verb [text](href)`` as written, with the ADR number it points at."""

    verb: str  # lower case, e.g. "supersedes", "superseded by", "amends"
    target: int
    line: int


@dataclass(frozen=True, slots=True)
class AdrRecord:
    """Everything the importer uses from one record."""

    number: int
    title: str
    date: str  # as written ("" when the record has none)
    status: str  # lifecycle word ("accepted", ...) or "" when unknown
    deciders: tuple[str, ...]
    context: str
    decision: str
    options: tuple[str, ...]
    relations: tuple[Relation, ...]
    style: str  # "nygard" or "madr"
    notes: tuple[str, ...] = field(default=())

    @property
    def label(self) -> str:
        """``ADR-0007``: the element name (four digits at least)."""
        return adr_label(self.number)

    def rationale(self) -> str:
        """The decision's rationale: context, then the decision, then the options."""
        parts = [p for p in (self.context, self.decision) if p]
        if self.options:
            parts.append("Considered options: " + "; ".join(self.options) + ".")
        return "\n\n".join(parts)


def adr_label(number: int) -> str:
    """Return ``ADR-`` and the number padded to four digits."""
    return f"ADR-{number:04d}"


def file_number(name: str) -> int | None:
    """The number a file name starts with (``0007-use-x.md`` is 7), if any."""
    m = _FILE_NUMBER.match(name)
    return int(m.group(1)) if m else None


# ------------------------------------------------------------------ structure


@dataclass(slots=True)
class _Section:
    name: str
    line: int
    lines: list[tuple[int, str]] = field(default_factory=list)


@dataclass(slots=True)
class _Layout:
    title: str = ""
    title_line: int = 0
    preamble: list[tuple[int, str]] = field(default_factory=list)
    sections: list[_Section] = field(default_factory=list)

    def section(self, names: tuple[str, ...]) -> _Section | None:
        for sec in self.sections:
            if sec.name in names:
                return sec
        return None


def _layout(lines: list[str], start: int) -> _Layout:
    """Split the body into the title, the preamble and ``##`` sections."""
    out = _Layout()
    fence: str | None = None
    current: _Section | None = None
    for index in range(start, len(lines)):
        raw, number = lines[index], index + 1
        fence_match = _FENCE.match(raw)
        if fence_match is not None:
            mark = fence_match.group(1)
            fence = None if fence == mark else (fence or mark)
        if fence is None and fence_match is None:
            h1 = _H1.match(raw) if not out.title_line else None
            if h1 is not None:
                out.title, out.title_line = h1.group(1), number
                continue
            h2 = _H2.match(raw)
            if h2 is not None and out.title_line:
                current = _Section(h2.group(1).strip().rstrip(":").lower(), number)
                out.sections.append(current)
                continue
        if current is not None:
            current.lines.append((number, raw))
        elif out.title_line:
            out.preamble.append((number, raw))
    return out


def _unwrap(lines: list[str]) -> list[str]:
    """Join hard-wrapped paragraph lines (Markdown soft breaks) with a space.

    List items, quotes, tables, headings and fenced code keep their own lines.
    """
    out: list[str] = []
    fence = False
    joinable = False
    for line in lines:
        if _FENCE.match(line):
            fence = not fence
            out.append(line)
            joinable = False
            continue
        block = fence or not line.strip() or _BLOCK_START.match(line) is not None
        if joinable and not block and not out[-1].endswith("  "):
            out[-1] = out[-1] + " " + line.strip()
            continue
        out.append(line)
        joinable = (
            bool(line.strip())
            and not fence
            and not line.lstrip().startswith(("|", "#"))
        )
    return out


def _clean(lines: list[tuple[int, str]], *, stop_at_subheading: bool) -> str:
    """Section text: comments removed, paragraphs unwrapped, blank runs collapsed."""
    kept: list[str] = []
    for _, raw in lines:
        if stop_at_subheading and raw.startswith("###"):
            break
        kept.append(raw.rstrip())
    text = _COMMENT.sub("", "\n".join(kept))
    text = "\n".join(_unwrap([line.rstrip() for line in text.split("\n")]))
    return _BLANKS.sub("\n\n", text).strip("\n").strip()


def _options(section: _Section | None) -> tuple[str, ...]:
    if section is None:
        return ()
    out: list[str] = []
    for _, raw in section.lines:
        m = _LIST_ITEM.match(_COMMENT.sub("", raw))
        if m is not None and m.group(1).strip():
            out.append(m.group(1).strip())
    return tuple(out)


# ------------------------------------------------------------------ relations


def _link_number(text: str, href: str) -> int | None:
    base = href.rsplit("/", 1)[-1]
    from_file = file_number(base)
    if from_file is not None and base:
        return from_file
    m = _TEXT_NUMBER.match(text.strip())
    return int(m.group(1)) if m else None


def relations_in(text: str, line: int) -> tuple[list[Relation], list[str]]:
    """Find ``verb [text](href)`` relations in one line of a status or links block.

    Returns:
        The relations and notes about links that point at no numbered record.
    """
    found: list[Relation] = []
    notes: list[str] = []
    verb = ""
    cursor = 0
    for m in _LINK.finditer(text):
        before = text[cursor : m.start()]
        before = re.sub(r"^\s*(?:[*+-]\s+)?", "", before)
        before = re.split(r"[,;.]", before.strip().strip(",;:"))[-1].strip().lower()
        if before and before not in ("and", "&"):
            verb = re.sub(r"\s+", " ", before).removeprefix("status ").strip()
        cursor = m.end()
        if not verb:
            continue
        target = _link_number(m.group(1), m.group(2))
        if target is None:
            notes.append(f"line {line}: link {m.group(0)!r} names no ADR number")
            continue
        found.append(Relation(verb, target, line))
    return found, notes


def _lifecycle(text: str) -> str:
    """The lifecycle word of a status line (``Accepted`` is ``accepted``)."""
    words = re.findall(r"[A-Za-z]+", _LINK.sub("", text))
    if not words:
        return ""
    word = words[0].lower()
    return word if word in LIFECYCLE else ""


# ------------------------------------------------------------------ fields


def _check_date(value: str, line: int) -> str:
    value = go_trim_space(value)
    if value and parse_recorded(value) is None:
        raise AdrSyntaxError(
            line, f"date {value!r} is not YYYY-MM-DD, YYYY-MM-DDTHH:MM:SS or RFC3339"
        )
    return value


def _strings(value: Value, line: int, key: str) -> list[str]:
    """A scalar or a (nested) list of scalars, flattened; a mapping is refused."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        raise AdrSyntaxError(line, f"front matter: {key} must be a value or a list")
    return [s for item in value for s in _strings(item, line, key)]


def _names(value: str | list[str]) -> tuple[str, ...]:
    items = value if isinstance(value, list) else value.replace("\n", ",").split(",")
    return tuple(n for n in (go_trim_space(i) for i in items) if n)


@dataclass(slots=True)
class _Fields:
    date: str = ""
    status_lines: list[tuple[int, str]] = field(default_factory=list)
    deciders: tuple[str, ...] = ()


def _from_front_matter(lines: list[str], out: _Fields) -> tuple[int, bool]:
    try:
        fm = parse_front_matter(lines)
    except FrontMatterError as exc:
        raise AdrSyntaxError(exc.line, f"front matter: {exc.message}") from exc
    if fm is None:
        return 0, False
    date = fm.fields.get("date")
    if date is not None:
        if not isinstance(date.value, str):
            raise AdrSyntaxError(date.line, "date must be a single value")
        out.date = _check_date(date.value, date.line)
    status = fm.fields.get("status")
    if status is not None:
        text = ", ".join(_strings(status.value, status.line, "status"))
        out.status_lines.append((status.line, text))
    for key in _AUTHOR_KEYS:
        if key in fm.fields and not out.deciders:
            found = fm.fields[key]
            value = found.value
            items = (
                value if isinstance(value, str) else _strings(value, found.line, key)
            )
            out.deciders = _names(items)
    return fm.body_start, True


def _from_preamble(layout: _Layout, out: _Fields) -> None:
    for number, raw in layout.preamble:
        m = _PREAMBLE.match(raw)
        if m is None:
            continue
        key, value = m.group(1).strip().lower(), m.group(2)
        if key == "date" and not out.date:
            out.date = _check_date(value, number)
        elif key == "status" and not out.status_lines:
            out.status_lines.append((number, value))
        elif key in _AUTHOR_KEYS and not out.deciders:
            out.deciders = _names(value)


def _status(out: _Fields, layout: _Layout) -> tuple[str, list[Relation], list[str]]:
    lines = list(out.status_lines)
    section = layout.section(("status",))
    if section is not None and not lines:
        lines = [(n, raw) for n, raw in section.lines if raw.strip()]
    links = layout.section(LINK_SECTIONS)
    prose = layout.section(PROSE_SECTIONS)
    relations: list[Relation] = []
    notes: list[str] = []
    status = ""
    for number, raw in lines + (links.lines if links else []):
        found, more = relations_in(_COMMENT.sub("", raw), number)
        relations.extend(found)
        notes.extend(more)
        if not status and (number, raw) in lines:
            status = _lifecycle(raw)
    for number, raw in prose.lines if prose else []:
        # In free text only the four relation verbs count; other links are prose.
        found, _ = relations_in(_COMMENT.sub("", raw), number)
        relations.extend(r for r in found if r.verb in CORE_VERBS)
    # A superseded record was accepted: its own content must not change when a
    # later record supersedes it (that later record says so, on its element).
    return ("accepted" if status == "superseded" else status), relations, notes


def _number_and_title(layout: _Layout, name: str) -> tuple[int, str]:
    heading = layout.title.strip()
    numbered = _NUMBERED_TITLE.match(heading)
    from_file = file_number(name)
    from_heading = int(numbered.group(1)) if numbered else None
    if numbered is not None and from_file in (None, from_heading):
        title = numbered.group(2).strip()
    else:
        # "# 3 retries per payment call" in 0012-….md: the digits are the title's.
        title, from_heading = heading, None
    if from_file is None and from_heading is None:
        raise AdrSyntaxError(
            layout.title_line,
            "no ADR number: name the file NNNN-title.md or write '# N. Title'",
        )
    number = from_file if from_file is not None else from_heading
    assert number is not None
    if not go_trim_space(title):
        raise AdrSyntaxError(layout.title_line, "the title heading is empty")
    return number, title


def parse_adr(text: str, name: str) -> AdrRecord:
    """Parse the text of one record; ``name`` is its file name (for the number).

    Raises:
        AdrSyntaxError: no title heading, no number, a bad date, or front matter
            that is not YAML or is refused (aliases, tags, over 64 KB);
            ``line`` says where.
    """
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    fields = _Fields()
    start, has_front_matter = _from_front_matter(lines, fields)
    layout = _layout(lines, start)
    if not layout.title_line:
        raise AdrSyntaxError(start + 1, "no title: expected a '# N. Title' heading")
    number, title = _number_and_title(layout, name)
    _from_preamble(layout, fields)
    status, relations, link_notes = _status(fields, layout)
    context = layout.section(CONTEXT_SECTIONS)
    decision = layout.section(DECISION_SECTIONS)
    madr = has_front_matter or any(
        s.name in ("decision outcome", "context and problem statement")
        for s in layout.sections
    )
    return AdrRecord(
        number=number,
        title=title,
        date=fields.date,
        status=status,
        deciders=fields.deciders,
        context=_clean(context.lines, stop_at_subheading=False) if context else "",
        decision=_clean(decision.lines, stop_at_subheading=True) if decision else "",
        options=_options(layout.section(OPTION_SECTIONS)),
        relations=tuple(relations),
        style="madr" if madr else "nygard",
        notes=tuple(link_notes),
    )

"""Find and read the ADR files of a folder, with git as the fallback author and date.

A file is a record when its name is ``NNNN-….md`` (any depth below the folder, hidden
folders skipped); other Markdown files (README, templates) are listed as ignored. A
file that cannot be read or parsed becomes an :class:`ScanProblem` with its line, and
the others still import.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path

from kgai_tui.core.onboarding.adr_parse import (
    AdrRecord,
    AdrSyntaxError,
    file_number,
    parse_adr,
)
from kgai_tui.core.store.git_info import first_added, work_tree_root

#: Records larger than this are not decision records (and would make huge lines).
MAX_ADR_BYTES = 4 * 1024 * 1024


@dataclass(frozen=True, slots=True)
class ScanProblem:
    """A file that was skipped: where and why."""

    file: str
    line: int
    message: str

    def describe(self) -> str:
        """``file:line: message``."""
        return f"{self.file}:{self.line}: {self.message}"


@dataclass(frozen=True, slots=True)
class ScannedAdr:
    """A parsed record with where it came from and its effective author and date."""

    record: AdrRecord
    file: str  # the path as the user can open it (the folder as given, joined)
    url: str  # the ref: relative to the git work tree, else to the folder's parent
    author: str  # "" when nothing names one (the write path then uses the actor)
    date: str  # "" when neither the record nor git has one
    author_source: str  # "record", "git" or ""
    date_source: str  # "record", "git" or ""


@dataclass(frozen=True, slots=True)
class Scan:
    """The records of a folder, the files skipped, and the files ignored."""

    adrs: tuple[ScannedAdr, ...]
    problems: tuple[ScanProblem, ...]
    ignored: tuple[str, ...]
    notes: tuple[str, ...]


def _markdown_files(directory: Path) -> list[Path]:
    found: list[Path] = []
    for path in directory.rglob("*.md"):
        rel = path.relative_to(directory)
        if any(part.startswith(".") for part in rel.parts) or not path.is_file():
            continue
        found.append(path)
    return sorted(found, key=lambda p: p.relative_to(directory).as_posix())


def _decode(data: bytes) -> str:
    """Decode UTF-8 (a BOM is dropped).

    Raises:
        AdrSyntaxError: the bytes are not UTF-8, with the line of the first bad byte.
    """
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise AdrSyntaxError(line, "not UTF-8 text") from exc


def _read(path: Path) -> AdrRecord:
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise AdrSyntaxError(1, f"cannot read: {exc.strerror or exc}") from exc
    if len(data) > MAX_ADR_BYTES:
        raise AdrSyntaxError(1, f"larger than {MAX_ADR_BYTES >> 20} MiB")
    return parse_adr(_decode(data), path.name)


def _with_git(adr: ScannedAdr, path: Path) -> ScannedAdr:
    """Fill a missing author or date from the commit that added the file."""
    added = first_added(path)
    if added is None:
        return adr
    if not adr.author and added.author:
        adr = replace(adr, author=added.author, author_source="git")
    if not adr.date and added.date:
        adr = replace(adr, date=added.date, date_source="git")
    return adr


def _url(path: Path, directory: Path, top: Path | None) -> str:
    resolved = path.resolve()
    if top is not None:
        try:
            return resolved.relative_to(top.resolve()).as_posix()
        except ValueError:
            pass
    base = directory.resolve()
    return (Path(base.name) / resolved.relative_to(base)).as_posix()


def scan_adrs(directory: Path) -> Scan:
    """Read every record below ``directory``; duplicates of a number are skipped.

    Files are visited in path order, so which of two files with one number is kept
    (the first) is stable.
    """
    top = work_tree_root(directory)
    adrs: list[ScannedAdr] = []
    problems: list[ScanProblem] = []
    ignored: list[str] = []
    notes: list[str] = []
    seen: dict[int, str] = {}
    for path in _markdown_files(directory):
        shown = (directory / path.relative_to(directory)).as_posix()
        if file_number(path.name) is None:
            ignored.append(shown)
            continue
        try:
            record = _read(path)
        except AdrSyntaxError as exc:
            problems.append(ScanProblem(shown, exc.line, exc.message))
            continue
        if record.number in seen:
            problems.append(
                ScanProblem(
                    shown,
                    1,
                    f"{record.label} is already {seen[record.number]}; skipped",
                )
            )
            continue
        seen[record.number] = shown
        notes.extend(f"{shown}: {note}" for note in record.notes)
        author = ", ".join(record.deciders)
        adr = ScannedAdr(
            record=record,
            file=shown,
            url=_url(path, directory, top),
            author=author,
            date=record.date,
            author_source="record" if author else "",
            date_source="record" if record.date else "",
        )
        if top is not None and not (adr.author and adr.date):
            adr = _with_git(adr, path)
        adrs.append(adr)
    return Scan(tuple(adrs), tuple(problems), tuple(ignored), tuple(notes))

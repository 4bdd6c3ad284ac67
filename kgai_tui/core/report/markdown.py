"""Render a :class:`~kgai_tui.core.report.report.Report` as Markdown (CommonMark, GFM tables).

Every store string is escaped (``\\`` before Markdown punctuation, line breaks kept
only inside block quotes), so a title like ``*Use* <b>x</b> | y`` prints literally and
cannot open emphasis, HTML or a table cell; controls, bidi and zero-width characters
are marked first (``<U+202E>``, written ``\\<U\\+202E\\>``).
"""

from __future__ import annotations

import re
from typing import Final

from kgai_tui.core.report.report import (
    ConflictEntry,
    DecisionEntry,
    ElementEntry,
    Report,
)
from kgai_tui.core.safe_text import visible

_SPECIAL: Final = re.compile(r"([\\`*_{}\[\]<>()#+!|~&])")
_PLAIN_ID: Final = re.compile(r"[A-Za-z0-9_.:-]+")
_BULLET: Final = re.compile(r"^(\s*)([-=])")
_ORDERED: Final = re.compile(r"^(\s*\d+)\.")


def md(text: str) -> str:
    """Escape one line of store text for inline Markdown, controls made visible."""
    flat = visible(" ".join(text.split()))
    escaped = _SPECIAL.sub(r"\\\1", flat)
    return _ORDERED.sub(r"\1\\.", _BULLET.sub(r"\1\\\2", escaped))


def code(text: str) -> str:
    """An id as a code span when it is plain (hex ids are), else escaped text."""
    return f"`{text}`" if _PLAIN_ID.fullmatch(text) else md(text)


def quote(text: str, indent: str = "") -> list[str]:
    """A block quote of multi-line store text, every line escaped."""
    lines = [line.strip() for line in text.replace("\r\n", "\n").split("\n")]
    return [f"{indent}> {md(line)}" if line else f"{indent}>" for line in lines]


def _day(when: str) -> str:
    return md(when[:10]) if when else "undated"


def _decision(d: DecisionEntry, indent: str = "") -> list[str]:
    who = f" — {md(d.author)}" if d.author else ""
    lines = [f"{indent}- **{md(d.title)}**{who}, {_day(d.when)} ({code(d.id)})"]
    if d.rationale:
        lines += quote(d.rationale, indent + "  ")
    return lines


def _element(e: ElementEntry) -> list[str]:
    lines = [
        f"#### {md(e.name or e.element_id)}",
        "",
        f"{md(e.label)} · {code(e.element_id)}",
    ]
    if e.props:
        lines += ["", "| prop | value |", "|---|---|"]
        lines += [f"| {md(k)} | {md(v)} |" for k, v in e.props]
    links = [f"→ {md(k)} {md(t)}" for k, t, _ in e.links_out]
    links += [f"← {md(k)} {md(t)}" for k, t, _ in e.links_in]
    if links:
        lines += ["", "Links: " + "; ".join(links)]
    lines.append("")
    if e.in_force:
        lines.append("Decisions in force:")
        lines.append("")
        for d in e.in_force:
            lines += _decision(d)
    else:
        lines.append("No decision in force.")
    if e.earlier:
        lines += ["", f"{e.earlier} earlier decision(s) in its history."]
    return [*lines, ""]


def _conflict(c: ConflictEntry) -> list[str]:
    lines = [f"### {md(c.label)}", ""]
    lines.append(f"{len(c.heads)} decisions are in force at once:")
    lines.append("")
    for d in c.heads:
        lines += _decision(d)
    return [*lines, ""]


def _story(r: Report) -> list[str]:
    lines = ["## The story so far", ""]
    if not r.story:
        return [*lines, "No decisions yet.", ""]
    lines += [f"The last {len(r.story)} decisions, oldest first.", ""]
    for n, d in enumerate(r.story, start=1):
        who = f" — {md(d.author)}" if d.author else ""
        lines.append(f"{n}. **{_day(d.when)}** · **{md(d.title)}**{who}")
        if d.elements:
            lines.append(f"   Shapes {', '.join(md(e) for e in d.elements)}.")
        if d.replaces:
            lines.append(f"   Replaces {'; '.join(md(t) for t in d.replaces)}.")
        if d.replaced_by:
            lines.append(
                f"   Later replaced by {'; '.join(md(t) for t in d.replaced_by)}."
            )
        if d.rationale:
            lines += quote(d.rationale, "   ")
        lines.append("")
    return lines


def render_markdown(r: Report) -> str:
    """The whole report as Markdown, ending with one newline."""
    at = r.at or "the beginning (the store is empty)"
    note = " (the latest recorded decision)" if r.latest and r.at else ""
    lines = [
        "# Decision report",
        "",
        f"As of **{at}**{note}: {r.elements} elements, {r.decisions} decisions, "
        f"{r.in_force} in force, {len(r.conflicts)} open conflict(s).",
        "",
        "- [Open conflicts](#open-conflicts)",
        "- [Elements by kind](#elements-by-kind)",
        "- [The story so far](#the-story-so-far)",
        "",
        "## Open conflicts",
        "",
    ]
    if r.conflicts:
        for c in r.conflicts:
            lines += _conflict(c)
    else:
        lines += ["None: every element has at most one decision in force.", ""]
    lines += ["## Elements by kind", ""]
    for kind, elements in r.kinds:
        lines += [f"### {md(kind) or '(no kind)'} ({len(elements)})", ""]
        for e in elements:
            lines += _element(e)
    lines += _story(r)
    return "\n".join(lines).rstrip("\n") + "\n"

"""Render a :class:`~kgai_tui.core.report.report.Report` as one self-contained HTML page.

Inline CSS, one inline SVG (decisions per month: ``<rect>`` bars, each with a
``<title>`` tooltip; well-formed XML on its own), no scripts, no external assets (no ``src``; every ``href`` is a
``#fragment`` of the page itself), and every store string through :func:`e`
(controls and invisible characters marked, then :func:`html.escape`). Anchors are derived from ids, hashed when an id holds anything
but ``[A-Za-z0-9_-]``, so no store text ever lands in an attribute unescaped.
"""

from __future__ import annotations

import hashlib
import re
from html import escape
from typing import Final

from kgai_tui.core.report.report import (
    ConflictEntry,
    DecisionEntry,
    ElementEntry,
    Report,
)
from kgai_tui.core.safe_text import visible

_SAFE_ID: Final = re.compile(r"[A-Za-z0-9_-]+")
_CSS: Final = """
body{font:15px/1.5 system-ui,-apple-system,"Segoe UI",sans-serif;color:#1d2329;
background:#fff;max-width:60rem;margin:2rem auto;padding:0 1rem}
h1{font-size:1.8rem;margin-bottom:.2rem}h2{border-bottom:2px solid #e4e8ec;
padding-bottom:.2rem;margin-top:2.5rem}h3{margin-top:2rem;color:#3b4a59}
h4{margin:1.4rem 0 .3rem}.meta{color:#5b6875}.id{font:12px ui-monospace,monospace;
color:#6b7885}.card{border:1px solid #e4e8ec;border-radius:6px;padding:.6rem .9rem;
margin:.8rem 0}.conflict{border-color:#e0a3a3;background:#fff7f7}
.decision{margin:.5rem 0}.decision b{color:#111}.why{white-space:pre-wrap;
margin:.3rem 0 .3rem 1rem;padding-left:.7rem;border-left:3px solid #d6dde3;
color:#33404d}table{border-collapse:collapse;margin:.4rem 0}td,th{border:1px solid
#e4e8ec;padding:.15rem .5rem;text-align:left;vertical-align:top}th{background:#f5f7f9}
ol.story>li{margin-bottom:1rem}.tag{font-size:12px;border-radius:3px;padding:0 .3rem;
background:#e8f3ea;color:#225c2f}.tag.old{background:#f1f1f1;color:#666}
nav a{margin-right:1rem}svg.months rect{fill:#4f8a5b}svg.months text{font-size:11px;
fill:#5b6875}td.n{text-align:right}
""".strip()
_BAR: Final = 14
"""Columns of the timeline each month takes (a 12-wide bar and a gap)."""
_TALL: Final = 100
"""Height of the tallest bar."""


def e(text: str) -> str:
    """Escape store text for HTML content and attributes, controls made visible.

    Line feeds and tabs stay (the rationale box keeps them); ESC, C1, bidi and
    zero-width characters become marks, so the file is as safe to ``cat`` as to open.
    """
    return escape(visible(text, keep_newlines=True), quote=True)


def anchor(prefix: str, ident: str) -> str:
    """A fragment id for an element or decision id, safe in any store."""
    if _SAFE_ID.fullmatch(ident):
        return f"{prefix}-{ident}"
    return f"{prefix}-h{hashlib.sha256(ident.encode('utf-8', 'surrogatepass')).hexdigest()[:16]}"


def _day(when: str) -> str:
    return e(when[:10]) if when else "undated"


def _decision(d: DecisionEntry) -> list[str]:
    who = f" — {e(d.author)}" if d.author else ""
    tag = '<span class="tag">in force</span>' if d.in_force else ""
    out = [
        f'<div class="decision"><b>{e(d.title)}</b>{who}, {_day(d.when)} '
        f'<span class="id">{e(d.id)}</span> {tag}</div>'
    ]
    if d.rationale:
        out.append(f'<div class="why">{e(d.rationale)}</div>')
    return out


def _to(label: str, eid: str) -> str:
    """A link to another element's card (every element has one)."""
    return f'<a href="#{anchor("el", eid)}">{e(label)}</a>'


def _element(el: ElementEntry) -> list[str]:
    out = [
        f'<div class="card" id="{anchor("el", el.element_id)}">',
        f"<h4>{e(el.name or el.element_id)}</h4>",
        f'<div class="meta">{e(el.label)} · <span class="id">{e(el.element_id)}</span></div>',
    ]
    if el.props:
        out.append("<table><tr><th>prop</th><th>value</th></tr>")
        out += [f"<tr><td>{e(k)}</td><td>{e(v)}</td></tr>" for k, v in el.props]
        out.append("</table>")
    links = [f"→ {e(k)} {_to(t, i)}" for k, t, i in el.links_out]
    links += [f"← {e(k)} {_to(t, i)}" for k, t, i in el.links_in]
    if links:
        out.append(f'<div class="meta">Links: {"; ".join(links)}</div>')
    if el.in_force:
        for d in el.in_force:
            out += _decision(d)
    else:
        out.append('<div class="meta">No decision in force.</div>')
    if el.earlier:
        out.append(
            f'<div class="meta">{el.earlier} earlier decision(s) in its history.</div>'
        )
    out.append("</div>")
    return out


def _conflict(c: ConflictEntry) -> list[str]:
    out = [
        f'<div class="card conflict" id="{anchor("conflict", c.element_id)}">',
        f"<h3>{e(c.label)}</h3>",
        f'<div class="meta">{len(c.heads)} decisions are in force at once:</div>',
    ]
    for d in c.heads:
        out += _decision(d)
    out.append("</div>")
    return out


def _story(r: Report) -> list[str]:
    out = ['<h2 id="story">The story so far</h2>']
    if not r.story:
        return [*out, "<p>No decisions yet.</p>"]
    out.append(f'<p class="meta">The last {len(r.story)} decisions, oldest first.</p>')
    out.append('<ol class="story">')
    for d in r.story:
        who = f" — {e(d.author)}" if d.author else ""
        tag = (
            '<span class="tag">in force</span>'
            if d.in_force
            else '<span class="tag old">not in force</span>'
        )
        out.append(
            f'<li id="{anchor("d", d.id)}"><b>{_day(d.when)}</b> · '
            f"<b>{e(d.title)}</b>{who} {tag}"
        )
        if d.elements:
            out.append(f'<div class="meta">Shapes {e(", ".join(d.elements))}.</div>')
        if d.replaces:
            out.append(f'<div class="meta">Replaces {e("; ".join(d.replaces))}.</div>')
        if d.replaced_by:
            out.append(
                f'<div class="meta">Later replaced by {e("; ".join(d.replaced_by))}.</div>'
            )
        if d.rationale:
            out.append(f'<div class="why">{e(d.rationale)}</div>')
        out.append("</li>")
    out.append("</ol>")
    return out


def timeline_svg(months: tuple[tuple[str, int], ...]) -> str:
    """Decisions per month as an inline SVG of ``<rect>`` bars, each with a tooltip."""
    peak = max((n for _, n in months), default=0)
    width = max(len(months) * _BAR, 2 * _BAR)
    height = _TALL + 18
    out = [
        f'<svg class="months" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" role="img" '
        'aria-label="Decisions per month">'
    ]
    for k, (month, n) in enumerate(months):
        tall = 0 if peak == 0 else max(1, round(n * _TALL / peak)) if n else 0
        out.append(
            f'<rect x="{k * _BAR}" y="{_TALL - tall}" width="{_BAR - 2}" '
            f'height="{tall}"><title>{e(month)}: {n} decision(s)</title></rect>'
        )
    if months:
        out.append(f'<text x="0" y="{height - 4}">{e(months[0][0])}</text>')
        if len(months) > 1:
            out.append(
                f'<text x="{width}" y="{height - 4}" text-anchor="end">'
                f"{e(months[-1][0])}</text>"
            )
    out.append("</svg>")
    return "".join(out)


def _timeline(r: Report) -> list[str]:
    out = ['<h2 id="timeline">Decisions per month</h2>']
    if not r.months:
        return [*out, "<p>No dated decisions yet.</p>"]
    total = sum(n for _, n in r.months)
    out.append(
        f'<p class="meta">{total} dated decision(s), {e(r.months[0][0])} to '
        f"{e(r.months[-1][0])}.</p>"
    )
    out.append(timeline_svg(r.months))
    return out


def _people(r: Report) -> list[str]:
    out = ['<h2 id="people">People</h2>']
    if not r.people:
        return [*out, "<p>No one has decided anything yet.</p>"]
    out.append(
        "<table><tr><th>author</th><th>decisions</th><th>in force</th>"
        "<th>superseded</th><th>dead ends</th><th>elements</th><th>conflicts</th>"
        "<th>first</th><th>last</th></tr>"
    )
    for p in r.people:
        numbers = (
            p.decisions,
            p.in_force,
            p.superseded,
            p.dead_ends,
            p.elements,
            p.conflicts,
        )
        cells = "".join(f'<td class="n">{n}</td>' for n in numbers)
        out.append(
            f"<tr><td>{e(p.author) or '(unknown)'}</td>{cells}"
            f"<td>{_day(p.first)}</td><td>{_day(p.last)}</td></tr>"
        )
    out.append("</table>")
    return out


def render_html(r: Report) -> str:
    """The whole report as an HTML5 document, ending with one newline."""
    at = e(r.at) if r.at else "the beginning (the store is empty)"
    note = " (the latest recorded decision)" if r.latest and r.at else ""
    out = [
        "<!DOCTYPE html>",
        '<html lang="en">',
        "<head>",
        '<meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>Decision report as of {at}</title>",
        f"<style>\n{_CSS}\n</style>",
        "</head>",
        "<body>",
        "<h1>Decision report</h1>",
        f'<p class="meta">As of <b>{at}</b>{note}: {r.elements} elements, '
        f"{r.decisions} decisions, {r.in_force} in force, "
        f"{len(r.conflicts)} open conflict(s).</p>",
        '<nav><a href="#conflicts">Open conflicts</a><a href="#elements">Elements by '
        'kind</a><a href="#timeline">Decisions per month</a><a href="#people">People</a>'
        '<a href="#story">The story so far</a></nav>',
        '<h2 id="conflicts">Open conflicts</h2>',
    ]
    if r.conflicts:
        for c in r.conflicts:
            out += _conflict(c)
    else:
        out.append("<p>None: every element has at most one decision in force.</p>")
    out.append('<h2 id="elements">Elements by kind</h2>')
    for kind, elements in r.kinds:
        out.append(f"<h3>{e(kind) or '(no kind)'} ({len(elements)})</h3>")
        for el in elements:
            out += _element(el)
    out += _timeline(r)
    out += _people(r)
    out += _story(r)
    out += ["</body>", "</html>"]
    return "\n".join(out) + "\n"

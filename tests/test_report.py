"""``report``: deterministic bytes, independent of shard layout, safe self-contained HTML."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from html.parser import HTMLParser
from pathlib import Path

import pytest

from kgai_tui.core.engine import open as engine_open
from kgai_tui.core.engine.open import open_engine
from kgai_tui.core.reads.kg import parse_as_of
from kgai_tui.core.report.html import render_html, timeline_svg
from kgai_tui.core.report.markdown import md, render_markdown
from kgai_tui.core.report.report import build_report
from kgai_tui.core.write.writes import init_store, record
from kgai_tui.demo import DEMO_STORE

CLI = [sys.executable, "-m", "kgai_tui"]


def _whole_refused(*_: object, **__: object) -> object:
    raise AssertionError("the whole store was opened")


def report(store: Path, *args: str) -> bytes:
    """``kgai-tui report ARGS`` in a fresh process; its stdout bytes."""
    done = subprocess.run(
        [*CLI, "report", "--store", str(store), *args],
        capture_output=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.fixture
def demo_store(tmp_path: Path) -> Path:
    """A private copy of the bundled demo store."""
    target = tmp_path / "demo-store"
    shutil.copytree(DEMO_STORE, target)
    return target


@pytest.fixture
def reshuffled(tmp_path: Path, demo_store: Path) -> Path:
    """The same events in a different shard layout: split, renamed, reversed."""
    target = tmp_path / "elsewhere" / "other-store"
    target.mkdir(parents=True)
    shutil.copy(demo_store / "kg.config.json", target / "kg.config.json")
    (target / "log").mkdir()
    lines = [
        line
        for shard in sorted((demo_store / "log").iterdir(), reverse=True)
        for line in shard.read_bytes().splitlines(keepends=True)
    ]
    for n in range(5):
        part = lines[n::5]
        (target / "log" / f"{chr(ord('z') - n)}-part.ndjson").write_bytes(
            b"".join(reversed(part))
        )
    return target


def _render(store: Path, fmt: str, as_of: str | None = None) -> str:
    engine = open_engine(store)
    cut = None if as_of is None else parse_as_of(as_of)
    if cut is None:
        projection = engine.projection
    else:
        from kgai_tui.core.reads.as_of import project_as_of

        projection = project_as_of(engine.shards, cut)
    r = build_report(projection, cut, 20)
    return render_html(r) if fmt == "html" else render_markdown(r)


def test_same_bytes_on_every_run(demo_store: Path, tmp_path: Path) -> None:
    first = report(demo_store)
    assert first == report(demo_store)
    out = tmp_path / "report.html"
    report(demo_store, "--format", "html", "-o", str(out), "--as-of", "2026-03-31")
    assert out.read_bytes() == report(
        demo_store, "--format", "html", "--as-of", "2026-03-31"
    )
    text = first.decode("utf-8")
    assert str(tmp_path) not in text and str(DEMO_STORE) not in text
    assert text.startswith("# Decision report\n\nAs of **2026-06-01T09:00:00Z**")


def test_same_bytes_whatever_the_shard_layout(
    demo_store: Path, reshuffled: Path
) -> None:
    for fmt in ("markdown", "html"):
        for at in (None, "2026-02-15", "2026-04-30T12:00:00Z"):
            assert _render(demo_store, fmt, at) == _render(reshuffled, fmt, at)
    assert report(demo_store, "--format", "html") == report(
        reshuffled, "--format", "html"
    )


def test_report_tells_the_story(demo_store: Path) -> None:
    text = report(demo_store, "--last", "3").decode("utf-8")
    assert "## Open conflicts\n\n### service:Payments" in text
    assert "The last 3 decisions, oldest first." in text
    assert text.count("\n1. **") == 1 and "\n3. **2026-06-01**" in text
    assert "Decisions in force:" in text
    before = report(demo_store, "--as-of", "2026-01-10").decode("utf-8")
    assert "None: every element has at most one decision in force." in before
    assert "As of **2026-01-10T23:59:59Z**:" in before


class _Collector(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[str] = []
        self.attrs: list[tuple[str, str | None]] = []
        self.ids: set[str] = set()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        self.attrs += attrs
        self.ids |= {v for k, v in attrs if k == "id" and v}


def _hostile_store(tmp_path: Path) -> Path:
    root = tmp_path / "hostile"
    init_store(root, "<b>mallory</b>")
    payload = {
        "decisions": [
            {
                "title": '<script>alert("x")</script> & *bold* | pipe',
                "rationale": "line one\n<img src=http://evil.example/x.png>\n# not a heading",
                "mutations": [
                    {
                        "op": "upsert_element",
                        "kind": "<i>kind</i>",
                        "name": '"><svg onload=alert(1)>',
                        "props": {"<k>": "<v> [link](http://evil.example)"},
                    }
                ],
            },
            {
                "title": "second <style>",
                "mutations": [
                    {
                        "op": "upsert_element",
                        "kind": "<i>kind</i>",
                        "name": '"><svg onload=alert(1)>',
                        "props": {"<k>": "other"},
                    }
                ],
                "supersedes_on": [],
            },
        ]
    }
    record(root, json.dumps(payload))
    return root


def test_html_is_self_contained_and_escaped(tmp_path: Path, demo_store: Path) -> None:
    for store in (demo_store, _hostile_store(tmp_path)):
        page = report(store, "--format", "html").decode("utf-8")
        parser = _Collector()
        parser.feed(page)
        parser.close()
        assert "script" not in parser.tags and "img" not in parser.tags
        assert parser.tags.count("svg") <= 1 and "link" not in parser.tags
        assert parser.tags.count("style") == 1
        assert not [k for k, _ in parser.attrs if k in ("src", "srcset", "onload")]
        hrefs = [v or "" for k, v in parser.attrs if k == "href"]
        assert hrefs and all(h.startswith("#") for h in hrefs)
        assert {h[1:] for h in hrefs} <= parser.ids
        assert "http" not in "".join(v or "" for _, v in parser.attrs)
    assert "&lt;script&gt;" in page and "&lt;b&gt;mallory&lt;/b&gt;" in page


def test_markdown_escapes_store_text(tmp_path: Path) -> None:
    text = report(_hostile_store(tmp_path)).decode("utf-8")
    unquoted = re.sub(r"(?m)^\s*>", "", text)  # block quote markers are ours
    assert re.search(r"(?<!\\)[<>]", unquoted) is None
    assert "\\<script\\>" in text
    assert "> \\# not a heading" in text
    assert md("| a *b* [c](d) -") == "\\| a \\*b\\* \\[c\\]\\(d\\) -"
    assert md("- item") == "\\- item" and md("1. one") == "1\\. one"


def test_html_timeline_svg_and_people(tmp_path: Path, demo_store: Path) -> None:
    """The inline SVG parses as XML: one bar per month with a tooltip; a people table."""
    projection = open_engine(demo_store).projection
    r = build_report(projection, None, 20)
    page = render_html(r)
    svg = page[page.index("<svg") : page.index("</svg>") + len("</svg>")]
    root = ET.fromstring(svg)
    rects = root.findall("rect")
    assert len(rects) == len(r.months) > 1
    titles = [rect.findtext("title") or "" for rect in rects]
    assert titles[0].startswith(r.months[0][0])
    dated = sum(
        1
        for h, t in zip(projection.dec_hash, projection.dec_time, strict=True)
        if h and t
    )
    assert sum(int(t.split(": ")[1].split()[0]) for t in titles) == dated
    assert sum(n for _, n in r.months) == dated
    assert [p.author for p in r.people][:1] == ["ana"]
    assert '<h2 id="people">People</h2>' in page and "<td>ana</td>" in page
    hostile = timeline_svg((("<b>&", 3), ("2026-02", 0)))
    assert ET.fromstring(hostile).findtext("rect/title") == "<b>&: 3 decision(s)"
    assert ET.fromstring(timeline_svg(())).tag == "svg"
    for store in (demo_store, _hostile_store(tmp_path)):
        page = report(store, "--format", "html").decode("utf-8")
        if "<svg" in page:
            ET.fromstring(page[page.index("<svg") : page.index("</svg>") + 6])


def _old_times_store(tmp_path: Path) -> Path:
    """Decisions recorded before 1970 (negative times, one on a day's first
    second), one without a time, two at the same second: the orders and the
    month counts the model must compute as the replay does."""
    from builders import ShardWriter, decision, upsert, write_store

    w, v = ShardWriter("i1", "ana"), ShardWriter("i2", "bo")
    stamps = [
        "1969-12-31T23:59:59Z",
        "1969-12-31T00:00:00Z",
        "1960-02-29T12:00:00Z",
        "2026-03-01T00:00:00Z",
        "not a time",
    ]
    for n, stamp in enumerate(stamps):
        d = decision(f"decision {n}", [upsert("feature", f"F{n % 2}")], author="ana")
        w.add(d, lamport=n + 1, recorded_at=stamp)
    d = decision("same second", [upsert("feature", "F1")], author="bo")
    v.add(d, lamport=4, recorded_at="2026-03-01T00:00:00Z")
    files = {"i1.ndjson": w.to_bytes(), "i2.ndjson": v.to_bytes()}
    return write_store(tmp_path / "old", files)


def test_the_report_now_comes_from_the_model_with_the_same_bytes(
    tmp_path: Path, demo_store: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``report`` (now) reads the model; ``KGAI_TUI_READ_MODEL=off`` the whole store."""
    import time

    cache = tmp_path / "cache"
    monkeypatch.setenv("KGAI_TUI_CACHE_DIR", str(cache))
    for store in (demo_store, _old_times_store(tmp_path)):
        before = set(cache.glob("*/model.sqlite.seal"))
        report(store)  # the first read answers from its replay and builds the model
        deadline = time.monotonic() + 60
        while set(cache.glob("*/model.sqlite.seal")) == before:
            assert time.monotonic() < deadline, "the model was never sealed"
            time.sleep(0.05)
        for args in ([], ["--format", "html"], ["--last", "2"], ["--last", "0"]):
            got = report(store, *args)
            monkeypatch.setenv("KGAI_TUI_READ_MODEL", "off")
            assert got == report(store, *args), (store, args)
            monkeypatch.delenv("KGAI_TUI_READ_MODEL")
    text = report(_old_times_store(tmp_path)).decode()
    assert "1960-02" in text and "1969-12" in text


def test_the_report_at_a_moment_answers_from_the_model_with_the_same_bytes(
    tmp_path: Path, demo_store: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``report --as-of`` never opens the whole store: with no moments and no time
    index yet, a replay builds the index (saved beside the model) and the report
    reads it through the model, leaving the moments; then a moment at or after
    the latest recorded time answers from the moments. All give the model-off
    bytes."""
    from kgai_tui.core.answers.report import report_at
    from kgai_tui.core.model.open import open_model

    cache = tmp_path / "cache"
    monkeypatch.setenv("KGAI_TUI_CACHE_DIR", str(cache))
    after, before = "2031-01-01", "2026-03-31"

    model = open_model(demo_store, cache)  # built (no moments, no time index yet)
    with pytest.MonkeyPatch.context() as m:
        m.setattr(engine_open, "open_engine", _whole_refused)
        first = report_at(lambda: model, parse_as_of(after), 20)  # type: ignore[arg-type, return-value]
    model.close()
    assert render_markdown(first) == _render(demo_store, "markdown", after)
    for when in (before, after):
        for fmt in ("markdown", "html"):
            got = report(demo_store, "--as-of", when, "--format", fmt)
            monkeypatch.setenv("KGAI_TUI_READ_MODEL", "off")
            assert got == report(demo_store, "--as-of", when, "--format", fmt)
            monkeypatch.delenv("KGAI_TUI_READ_MODEL")
    # The first report at a moment left the moments: now a moment after the last
    # decision needs no whole store, and reads as the whole store's report then.
    model = open_model(demo_store, cache)
    cut = parse_as_of(after)
    with pytest.MonkeyPatch.context() as m:
        m.setattr(engine_open, "open_engine", _whole_refused)
        got = report_at(lambda: model, cut, 20)  # type: ignore[arg-type, return-value]
    model.close()
    assert render_markdown(got) == _render(demo_store, "markdown", after)
    assert got.at == "2031-01-01T23:59:59Z" and not got.latest


def test_a_report_at_a_past_moment_writes_nothing_once_the_moments_are_whole(
    tmp_path: Path, demo_store: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``report --as-of`` before the latest decision reads the store at the cut
    and its people from the model's per-author steps. The first such report
    leaves the moments, the next the steps; after that the model is left
    untouched (each report rewrote all the moments, and dropped the steps), the
    people are not counted by a walk, and the bytes are the model-off ones."""
    from kgai_tui.core.answers.report import report_at
    from kgai_tui.core.model.open import open_model
    from kgai_tui.core.model.schema import model_path
    from kgai_tui.core.report import report as report_module

    cache = tmp_path / "cache"
    monkeypatch.setenv("KGAI_TUI_CACHE_DIR", str(cache))
    open_model(demo_store, cache).close()  # built here: no detached writer after
    for _ in range(2):  # the moments, then the people steps
        report(demo_store, "--as-of", "2026-03-31")
    path = model_path(demo_store, cache)
    files = [path, path.with_name(path.name + ".seal")]
    before = [(f.stat().st_mtime_ns, f.stat().st_size) for f in files]
    for when in ("2026-03-31", "2026-02-14"):
        got = report(demo_store, "--as-of", when)
        assert [(f.stat().st_mtime_ns, f.stat().st_size) for f in files] == before
        monkeypatch.setenv("KGAI_TUI_READ_MODEL", "off")
        assert got == report(demo_store, "--as-of", when)
        monkeypatch.delenv("KGAI_TUI_READ_MODEL")

    def no_walk(*_: object) -> object:
        raise AssertionError("the people were counted by a walk")

    want = _render(demo_store, "markdown", "2026-02-14")  # a walk: before the patch
    monkeypatch.setattr(report_module, "people_obj", no_walk)
    monkeypatch.setattr(engine_open, "open_engine", _whole_refused)
    model = open_model(demo_store, cache)
    cut = parse_as_of("2026-02-14")
    got_report = report_at(lambda: model, cut, 20)  # type: ignore[arg-type, return-value]
    model.close()
    assert render_markdown(got_report) == want

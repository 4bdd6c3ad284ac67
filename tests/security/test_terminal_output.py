"""Issue 15.5: store text, file names and paths can never drive the terminal.

A hostile store (titles, rationale, authors, element names, props, refs, link kinds,
a shard file name and the store's own directory name full of OSC, CSI, C1, bidi and
zero-width characters) is read by every human-readable command through a real
pseudo-terminal, as a user's terminal would see it. Nothing that can act (ESC, BEL,
CR, C1, DEL) or hide (bidi overrides, zero-width and other format characters) may
reach it raw; each must arrive as its visible mark. With ``--json`` the same
characters arrive as ``\\uXXXX`` escapes and the JSON still parses to the original.
"""

from __future__ import annotations

import asyncio
import json
import os
import select
import subprocess
import sys
import termios
import time
import unicodedata
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from builders import ShardWriter, decision, link, upsert, write_store

from kgai_tui.core.wire.codec import decision_id

KGAI_TUI = str(Path(sys.executable).parent / "kgai-tui")

#: The issue's payload (title and clipboard), then CSI, 8-bit CSI, bidi, zero-width.
EVIL = (
    "x \x1b]0;PWNED\x07 \x1b]52;c;cHduZWQ=\x07 \x1b[2J\x9b31m "
    "\u202eevil\u202c z\u200bw\u2066i\u2069 \ufeff\x7f \U000e0041"
)
#: Marks the human output must show for the characters of EVIL.
MARKS = (
    "␛]0;PWNED␇",
    "␛]52;c;cHduZWQ=␇",
    "<U+009B>",
    "<U+202E>",
    "<U+200B>",
    "<U+2066>",
    "<U+FEFF>",
    "<U+E0041>",
    "␡",
)
#: The escapes ``--json`` must print for them (lowercase hex, as Go writes ``\u003c``).
JSON_ESCAPES = (
    b"\\u001b",
    b"\\u0007",
    b"\\u009b",
    b"\\u202e",
    b"\\u200b",
    b"\\u2066",
    b"\\ufeff",
    b"\\u007f",
    b"\\udb40\\udc41",
)

NAME = "Bill " + EVIL
TITLE = "Use PDF " + EVIL + "\nforged line\rover"
RATIONALE = "why " + EVIL + "\nsecond line\rover"
SHARD_NAME = "i-c\x1b]0;FILE\x07\u202e.ndjson"
ROOT_NAME = "st\u202eore\x1b]0;ROOT\x07"


def _raw(text: str) -> list[str]:
    """Every character of ``text`` that must never reach a terminal raw."""
    bad = []
    for ch in text:
        cp = ord(ch)
        if ch == "\n":
            continue
        if (
            cp < 0x20
            or 0x7F <= cp <= 0x9F
            or unicodedata.category(ch) in ("Cf", "Cs", "Zl", "Zp")
        ):
            bad.append(f"U+{cp:04X}")
    return bad


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The hostile store: two writers in conflict on one hostile element."""
    base = tmp_path_factory.mktemp("hostile")
    a = ShardWriter("i-a", actor="ana")
    b = ShardWriter("i-b", actor="bo")
    el = ("feature", NAME)
    other = ("service", "Ledger")
    d1 = decision(
        TITLE,
        [
            upsert(*el, note=EVIL),
            upsert(*other),
            link("add_link", el, other, "dep" + EVIL),
        ],
        rationale=RATIONALE,
        author="mallory " + EVIL,
    )
    d1 = replace(d1, refs="ref " + EVIL)
    d1 = replace(d1, id=decision_id(d1))
    d2 = decision(
        "Use HTML " + EVIL,
        [upsert(*el, note="html " + EVIL)],
        rationale=RATIONALE,
        author="bo " + EVIL,
    )
    a.add(d1, lamport=1, recorded_at="2026-03-01T10:00:00Z")
    b.add(d2, lamport=2, recorded_at="2026-03-02T10:00:00Z")
    root = write_store(
        base / ROOT_NAME,
        {
            "i-a.ndjson": a.to_bytes(),
            "i-b.ndjson": b.to_bytes(),
            SHARD_NAME: b"{not json\n",
        },
    )
    return root


def _spawn_tty(args: list[str], *, stderr_to_tty: bool) -> tuple[bytes, bytes, int]:
    """Run ``kgai-tui ARGS`` on a pseudo-terminal (see :func:`_spawn_cmd`)."""
    return _spawn_cmd([KGAI_TUI, *args], stderr_to_tty=stderr_to_tty)


def _spawn_cmd(
    argv: list[str], *, stderr_to_tty: bool = True
) -> tuple[bytes, bytes, int]:
    """Run the console script with stdout (and maybe stderr) on a pseudo-terminal.

    Output post-processing (ONLCR) is switched off on the terminal, so every byte
    read is a byte the program wrote; a CR seen came from the program.
    """
    master, slave = os.openpty()
    attrs = termios.tcgetattr(slave)
    attrs[1] &= ~termios.OPOST
    termios.tcsetattr(slave, termios.TCSANOW, attrs)
    # The progress line (our own escapes, never store text) is switched off: every
    # byte that reaches this terminal must be the answer's.
    env = {
        **os.environ,
        "TERM": "xterm-256color",
        "COLUMNS": "120",
        "KGAI_TUI_PROGRESS": "off",
    }
    proc = subprocess.Popen(
        argv,
        stdin=subprocess.DEVNULL,
        stdout=slave,
        stderr=slave if stderr_to_tty else subprocess.PIPE,
        env=env,
        close_fds=True,
    )
    os.close(slave)
    out = bytearray()
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        ready, _, _ = select.select([master], [], [], 0.5)
        if not ready:
            if proc.poll() is not None:
                break
            continue
        try:
            chunk = os.read(master, 65536)
        except OSError:  # EIO: the child closed the terminal
            break
        if not chunk:
            break
        out += chunk
    os.close(master)
    err = proc.stderr.read() if proc.stderr is not None else b""
    code = proc.wait(timeout=30)
    return bytes(out), err, code


def _commands(root: Path) -> dict[str, list[str]]:
    """Every read (and ``record --dry-run``) of issue 15.5, by name."""
    s = ["--store", str(root)]
    return {
        "status": ["status", *s],
        "doctor": ["doctor", *s],
        "heads": ["heads", *s],
        "history": ["history", f"feature:{NAME}", *s],
        "conflicts": ["conflicts", *s],
        "context": ["context", *s],
        "as-of": ["as-of", "2026-12-31", *s],
        "search": ["search", "pdf", "html", *s],
        "diff": ["diff", "2026-01-01", "2026-12-31", *s],
        "resolve": ["resolve", f"feature:{NAME}", *s],
        "record": ["record", "--dry-run", "RECORD_FILE", *s],
    }


def _ingest_file(tmp_path: Path) -> Path:
    doc = {
        "decision": {
            "title": TITLE,
            "rationale": RATIONALE,
            "author": "eve " + EVIL,
            "mutations": [
                {"op": "upsert_element", "kind": "feature", "name": "New " + EVIL}
            ],
        }
    }
    path = tmp_path / "doc.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    return path


def _args(name: str, store: Path, tmp_path: Path) -> list[str]:
    args = _commands(store)[name]
    return [str(_ingest_file(tmp_path)) if a == "RECORD_FILE" else a for a in args]


#: What each command's text must show, besides marks (the hostile text it prints).
EXPECTED_TEXT = {
    "status": ["<U+202E>", "␛]0;ROOT␇"],
    "doctor": ["␛]0;FILE␇<U+202E>.ndjson"],
}


@pytest.mark.parametrize("name", list(_commands(Path("/x"))))
def test_text_output_reaches_the_terminal_with_controls_made_visible(
    name: str, store: Path, tmp_path: Path
) -> None:
    """No ESC, BEL, CR, C1, DEL, bidi or zero-width reaches the terminal raw."""
    out, _, code = _spawn_tty(_args(name, store, tmp_path), stderr_to_tty=True)
    text = out.decode("utf-8")  # strict: no stray byte of a raw surrogate either
    assert code in (0, 1), text
    assert _raw(text) == [], text
    assert b"\x1b" not in out and b"\x07" not in out and b"\r" not in out
    for expected in EXPECTED_TEXT.get(name, MARKS):
        assert expected in text, (expected, text)
    # A title is one line: its embedded newline never starts a line of its own.
    assert "\nforged line" not in text


@pytest.mark.parametrize("name", list(_commands(Path("/x"))))
def test_json_output_escapes_controls_and_parses_to_the_original(
    name: str, store: Path, tmp_path: Path
) -> None:
    """``--json`` prints ``\\u`` escapes; parsed, the strings are the originals."""
    out, err, code = _spawn_tty(
        [*_args(name, store, tmp_path), "--json"], stderr_to_tty=False
    )
    assert code in (0, 1), err
    assert _raw(out.decode("utf-8")) == []
    assert _raw(err.decode("utf-8")) == [], err
    parsed = json.loads(out)
    strings = _strings(parsed)
    if name == "status":
        assert b"\\u202e" in out and str(store) in strings
        return
    if name == "doctor":
        assert b"\\u202e" in out
        assert any(SHARD_NAME in s for s in strings), strings
        return
    for escape in JSON_ESCAPES:
        assert escape in out, (escape, out)
    assert any(EVIL in s for s in strings), strings


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for k, v in value.items() for s in (*_strings(k), *_strings(v))]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return []


@pytest.mark.parametrize("fmt", ["markdown", "html"])
def test_reports_hold_no_raw_controls(fmt: str, store: Path, tmp_path: Path) -> None:
    """The Markdown and HTML reports mark every control, bidi and zero-width char."""
    target = tmp_path / f"report.{fmt}"
    done = subprocess.run(
        [KGAI_TUI, "report", "--format", fmt, "-o", str(target), "--store", str(store)],
        capture_output=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    text = target.read_bytes().decode("utf-8")
    assert _raw(text) == []
    for mark in ("␛", "␇", "U+009B", "U+202E", "U+200B", "U+FEFF", "␡"):
        # Markdown escapes the + of a mark (\\<U\\+202E\\>); it renders as <U+202E>.
        assert mark in text.replace("\\+", "+"), mark


def test_the_explorer_marks_bidi_and_zero_width(store: Path) -> None:
    """The explorer shows bidi, zero-width and C1 characters as marks, never raw."""
    from textual.widgets import OptionList, Static, Tree

    from kgai_tui.ui.app import make_app

    app = make_app(store, live=False)
    texts: list[str] = []

    async def main() -> None:
        async with app.run_test(size=(160, 50)) as pilot:
            for key in "1341":
                await pilot.press(key)
                for _ in range(3):
                    await pilot.pause()
                    await app.workers.wait_for_complete()
                parts = [str(s.render()) for s in app.screen.query(Static)]
                for tree in app.screen.query(Tree):
                    stack = list(tree.root.children)
                    while stack:
                        node = stack.pop()
                        parts.append(str(node.label))
                        stack.extend(node.children)
                for options in app.screen.query(OptionList):
                    parts += [
                        str(options.get_option_at_index(i).prompt)
                        for i in range(options.option_count)
                    ]
                texts.append("\n".join(parts))

    asyncio.run(main())
    joined = "\n".join(texts)
    assert _raw(joined) == [], _raw(joined)
    for mark in ("<U+202E>", "<U+200B>", "<U+009B>", "␛]0;PWNED␇"):
        assert mark in joined, mark


# ---------------------------------------------------------------- the function


@pytest.mark.parametrize(
    ("raw", "shown"),
    [
        ("plain text, ünïcödé 日本 😀", "plain text, ünïcödé 日本 😀"),
        ("\x1b]0;t\x07", "␛]0;t␇"),
        ("a\x9bb", "a<U+009B>b"),
        ("a\u202eb\u2069", "a<U+202E>b<U+2069>"),
        (
            "z\u200bw\u200c\u200d\u2060\ufeff",
            "z<U+200B>w<U+200C><U+200D><U+2060><U+FEFF>",
        ),
        ("\u061c\u200e\u200f", "<U+061C><U+200E><U+200F>"),
        ("tag\U000e0041", "tag<U+E0041>"),
        ("soft\xadhyphen", "soft<U+00AD>hyphen"),
        ("lone\ud800", "lone<U+D800>"),
        ("del\x7f", "del␡"),
        ("a\nb\rc\td", "a␊b␍c␉d"),
        ("\u2028\u2029", "<U+2028><U+2029>"),
    ],
)
def test_visible_marks_each_class_deterministically(raw: str, shown: str) -> None:
    """One mark per character: control pictures for C0/DEL, ``<U+XXXX>`` else."""
    from kgai_tui.core.safe_text import visible

    assert visible(raw) == shown
    assert visible(shown) == shown  # idempotent: marks are plain text


def test_visible_keeps_newlines_only_when_asked() -> None:
    """Multi-line fields keep LF (CRLF becomes LF); CR alone and ESC never pass."""
    from kgai_tui.core.safe_text import one_line, visible

    assert visible("a\r\nb\nc\rd\x1b", keep_newlines=True) == "a\nb\nc␍d␛"
    assert one_line("a\nb\r\nc\x1b\u202e") == "a b c␛<U+202E>"


def test_json_escapes_give_the_same_value() -> None:
    """The escaped JSON bytes parse to the same value; ordinary bytes are unchanged."""
    from kgai_tui.core.safe_text import escape_json_controls

    value = {"t": EVIL, "n": "ünï <&> \u2028", "k" + EVIL: [EVIL]}
    raw = json.dumps(value, ensure_ascii=False).encode()
    escaped = escape_json_controls(raw)
    assert json.loads(escaped) == value
    assert _raw(escaped.decode()) == []
    ordinary = json.dumps({"a": "ünïcödé 日本 😀"}, ensure_ascii=False).encode()
    assert escape_json_controls(ordinary) is ordinary


def test_the_final_guard_marks_what_a_message_forgot(tmp_path: Path) -> None:
    """Any text written to stdout or stderr by the console script is guarded."""
    script = tmp_path / "forgetful.py"
    script.write_text(
        "import sys, click\n"
        "from kgai_tui.cli.support import guard_terminal_streams\n"
        "guard_terminal_streams()\n"
        "click.echo('out \\x1b]0;X\\x07 \\x9b \\u202e\\tline\\r\\nnext')\n"
        "click.echo('err \\x1b[2J \\u200b', err=True)\n"
        "sys.stdout.buffer.write(b'{\"raw\": 1}\\n')\n"
        "sys.stdout.flush()\n",
        encoding="utf-8",
    )
    out, _, code = _spawn_cmd([sys.executable, str(script)])
    text = out.decode("utf-8")
    assert code == 0, text
    assert _raw(text.replace("\t", "")) == [], text
    assert "out ␛]0;X␇ <U+009B> <U+202E>\tline\nnext" in text
    assert "err ␛[2J <U+200B>" in text
    assert '{"raw": 1}' in text


def test_markup_in_authors_and_titles_cannot_crash_the_explorer(
    tmp_path: Path,
) -> None:
    """The timeline's author filter and the resolve dialog show ``[/]`` literally."""
    from textual.widgets import OptionList

    from kgai_tui.ui.app import make_app

    a, b = ShardWriter("i-a"), ShardWriter("i-b")
    el = ("feature", "Invoice")
    a.add(
        decision("[/]", [upsert(*el)], author="[/]"),
        lamport=1,
        recorded_at="2026-03-01T10:00:00Z",
    )
    b.add(
        decision("[bold]b[/]", [upsert(*el)], author="[@click=app.quit]x[/]"),
        lamport=2,
        recorded_at="2026-03-02T10:00:00Z",
    )
    root = write_store(
        tmp_path / "s", {"i-a.ndjson": a.to_bytes(), "i-b.ndjson": b.to_bytes()}
    )
    app = make_app(root, live=False)
    labels: list[str] = []

    async def main() -> None:
        async with app.run_test(size=(120, 40)) as pilot:
            for key in ("3", "4", "r"):
                await pilot.press(key)
                for _ in range(3):
                    await pilot.pause()
                    await app.workers.wait_for_complete()
            choice = app.screen.query_one("#resolve-choice", OptionList)
            labels.extend(
                str(choice.get_option_at_index(i).prompt)
                for i in range(choice.option_count)
            )

    asyncio.run(main())
    assert any(label.endswith("]: [/]") for label in labels), labels
    assert any(label.endswith("]: [bold]b[/]") for label in labels), labels

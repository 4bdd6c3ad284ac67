"""Tests for kgai_tui.core.recall.scoring: tokenizer, match scores, Go globs and one_line."""

from __future__ import annotations

import re
import unicodedata

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kgai_tui.core.gosem.gopath import _go_match, go_path_match
from kgai_tui.core.gosem.gotext import go_lower
from kgai_tui.core.recall.scoring import (
    STOPWORDS,
    _tokenize_runes,
    about_score,
    decision_about_score,
    fields_score,
    glob_match,
    match_strength,
    one_line,
    split_paths,
    tokenize,
    trim_glob_suffix,
)

# --------------------------------------------------------------------------- tokenize

SPEC_STOPWORDS = [
    "the", "a", "an", "of", "to", "in", "on", "for", "and", "or", "is", "are", "be",
    "with", "that", "this", "it", "as", "at", "by", "from", "we", "was", "were", "how",
    "what", "why", "does", "do", "should", "must", "our", "its", "into", "about",
]  # fmt: skip


def test_stopwords_are_the_spec_list() -> None:
    """STOPWORDS holds exactly the words listed in spec 6.5 (which lists 35)."""
    assert frozenset(SPEC_STOPWORDS) == STOPWORDS
    assert len(STOPWORDS) == 35


def test_tokenize_spec_example() -> None:
    """The spec 8 sentence splits camelCase and kebab-case and drops stopwords."""
    text = "How is InvoiceRendering structured in the billing-module?"
    assert tokenize(text) == ["invoice", "rendering", "structured", "billing", "module"]


@pytest.mark.parametrize(
    ("text", "tokens"),
    [
        ("HTMLParser", ["htmlparser"]),
        ("parseHTTPRequest", ["parse", "httprequest"]),
        ("invoiceID", ["invoice", "id"]),
        ("a1B", ["a1b"]),
        ("v2Api", ["v2api"]),
        ("snake_case value", ["snake", "case", "value"]),
        ("don't x y z", ["don"]),
        ("THE Is ABOUT", []),
        ("aBOUT", ["bout"]),
        ("invoice Invoice INVOICE", ["invoice", "invoice", "invoice"]),
        ("", []),
        ("2024 42x", ["2024", "42x"]),
    ],
)
def test_tokenize_ascii_cases(text: str, tokens: list[str]) -> None:
    """camelCase, runs of capitals, digits, stopwords, 1-rune tokens and duplicates."""
    assert tokenize(text) == tokens


@pytest.mark.parametrize(
    ("text", "tokens"),
    [
        ("straßeÜber", ["straße", "über"]),
        ("Ünïcödé", ["ünïcödé"]),
        ("日本 語", ["日本"]),
        ("İstanbul", ["istanbul"]),
        ("\u03a3\u0391\u03a3", ["\u03c3\u03b1\u03c3"]),  # no final sigma
        ("٣٤ x٣", ["٣٤", "x٣"]),
        ("x²³ ½½", []),
        ("cafe\u0301s", ["cafe"]),
        ("é ab", ["ab"]),
        ("ªb", ["ªb"]),
        ("ΑΒΓδΕ", ["αβγδ"]),
    ],
)
def test_tokenize_unicode_cases(text: str, tokens: list[str]) -> None:
    """Any L* letter and Nd digit is a word rune; No and Mn end tokens; Go lowering."""
    assert tokenize(text) == tokens


def test_tokenize_counts_runes_not_bytes() -> None:
    """A single multi-byte rune is still a 1-rune token and is dropped."""
    assert tokenize("é 日 ß") == []
    assert tokenize("éé") == ["éé"]


@given(st.text())
def test_tokenize_tokens_are_clean(text: str) -> None:
    """Every token is lower-case, has >= 2 word runes and is not a stopword."""
    for tok in tokenize(text):
        assert len(tok) >= 2
        assert go_lower(tok) == tok
        assert tok not in STOPWORDS
        for c in tok:
            cat = unicodedata.category(c)
            assert cat[0] == "L" or cat == "Nd"


@given(st.text(alphabet=st.characters(max_codepoint=0x7F)))
def test_tokenize_ascii_fast_path_matches_rune_walk(text: str) -> None:
    """The ASCII regex fast path gives exactly what the rune walk gives."""
    assert tokenize(text) == _tokenize_runes(text)


# --------------------------------------------------------------------------- strength


def test_match_strength_spec_cases() -> None:
    """The matchStrength thresholds pinned by the Go tests (spec 8, engine: search)."""
    assert match_strength("invoice", "invoice") == 1.0
    assert match_strength("invo", "invoice") >= 0.5
    assert match_strength("invoicing", "invoice") >= 0.5
    assert match_strength("rendering", "render") >= 0.5
    assert match_strength("invoce", "invoice") >= 0.4
    assert match_strength("xyz", "invoice") == 0.0
    assert match_strength("inventory", "invoice") == 0.0


def test_match_strength_each_rule() -> None:
    """Prefix ratio, containment (query >= 4 bytes) and one byte edit give 0.4/0.5."""
    assert match_strength("invo", "invoice") == 0.4 + 0.4 * (4 / 7)
    assert match_strength("voic", "invoice") == 0.4
    assert match_strength("voi", "invoice") == 0.0
    assert match_strength("invoice", "xinvoice") == 0.4
    assert match_strength("xnvoice", "invoice") == 0.5
    assert match_strength("invoice", "nvoice") == 0.5
    assert match_strength("nvoice", "invoice") == 0.4
    assert match_strength("cart", "card") == 0.4 + 0.4 * (3 / 4)
    assert match_strength("bart", "cart") == 0.5
    assert match_strength("cat", "cut") == 0.0
    assert match_strength("abcd", "abcdef") == 0.4 + 0.4 * (4 / 6)
    assert match_strength("abc", "abcdef") == 0.0
    assert match_strength("", "") == 1.0
    assert match_strength("", "abc") == 0.0


def test_match_strength_is_byte_wise() -> None:
    """Lengths and edits are counted in UTF-8 bytes, not runes."""
    # "é" is two bytes: "éa" vs "éb" share a 2-byte prefix only (< 3), and the
    # strings are 3 bytes long (< 4), so no rule applies.
    assert match_strength("éa", "éb") == 0.0
    # Three runes each, but four bytes with a shared 3-byte prefix (b"\xc3\xa9x").
    assert match_strength("éxa", "éxb") == 0.4 + 0.4 * (3 / 4)
    # One rune substitution of a 2-byte by a 1-byte char is two byte edits.
    assert match_strength("abcé", "abcd") == 0.4 + 0.4 * (3 / 5)
    assert match_strength("xabé", "xabd") == 0.4 + 0.4 * (3 / 5)
    assert match_strength("wxyé", "wxzd") == 0.0


def _edit_distance(a: bytes, b: bytes) -> int:
    """Plain Levenshtein distance, the reference for the O(n) check."""
    prev = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        cur = [i]
        for j, cb in enumerate(b, 1):
            cur.append(min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (ca != cb)))
        prev = cur
    return prev[-1]


def _reference_strength(q: str, d: str) -> float:
    """Spec 6.5 matchStrength written naively with a full DP edit distance."""
    qb, db = q.encode(), d.encode()
    if qb == db:
        return 1.0
    lcp = 0
    while lcp < min(len(qb), len(db)) and qb[lcp] == db[lcp]:
        lcp += 1
    if lcp >= 3 and lcp / max(len(qb), len(db)) >= 0.55:
        return 0.4 + 0.4 * (lcp / max(len(qb), len(db)))
    if len(qb) >= 4 and qb in db:
        return 0.4
    if len(qb) >= 4 and len(db) >= 4 and _edit_distance(qb, db) <= 1:
        return 0.5
    return 0.0


_TOKEN = st.text(alphabet="abcdeé", max_size=9)


@given(_TOKEN, _TOKEN)
def test_match_strength_matches_naive_reference(q: str, d: str) -> None:
    """The O(n) one-edit check agrees with a full Levenshtein reference."""
    assert match_strength(q, d) == _reference_strength(q, d)


@given(st.text(max_size=12), st.text(max_size=12))
def test_match_strength_bounds(q: str, d: str) -> None:
    """Strength is 0, 0.4, 0.5, 1 or a prefix score in [0.62, 0.8]."""
    s = match_strength(q, d)
    assert s in (0.0, 0.4, 0.5, 1.0) or 0.62 <= s <= 0.8
    assert match_strength(q, q) == 1.0


@given(_TOKEN, _TOKEN)
def test_match_strength_symmetric_without_containment(q: str, d: str) -> None:
    """Only the containment rule is directional; otherwise q/d can be swapped."""
    if q.encode() not in d.encode() and d.encode() not in q.encode():
        assert match_strength(q, d) == match_strength(d, q)


# --------------------------------------------------------------------------- fields


def test_fields_score_sums_best_weighted_match_per_query_token() -> None:
    """Each query token contributes its best strength x weight over all fields."""
    fields = [(3.0, ["invoice"]), (1.0, ["billing", "invoices"])]
    assert fields_score(["invoice", "billing", "zzz"], fields) == 3.0 + 1.0 + 0.0
    assert fields_score(["invoice", "invoice"], fields) == 6.0
    assert fields_score([], fields) == 0.0
    assert fields_score(["x"], []) == 0.0


def test_about_score_spec_cases() -> None:
    """aboutScore on feature Invoice: "billing invoices" > 0, css query exactly 0."""
    props = "paths=src/billing/*"
    score = about_score(tokenize("billing invoices"), "feature", "Invoice", props)
    assert score > 0
    assert score == ((0.4 + 0.4 * (7 / 8)) * 3 + 1.0) / 6
    miss = about_score(tokenize("frontend css theming"), "feature", "Invoice", props)
    assert miss == 0.0


def test_about_score_weights_and_empty_query() -> None:
    """Name weighs 3, kind 2, props 1, normalised by 3 per query token."""
    assert about_score(["invoice"], "feature", "Invoice", "") == 1.0
    assert about_score(["feature"], "feature", "Invoice", "") == 2 / 3
    assert about_score(["owner"], "feature", "Invoice", "owner=bob") == 1 / 3
    assert about_score([], "feature", "Invoice", "owner=bob") == 0.0


def test_search_style_fields_ignore_unrelated_service() -> None:
    """The spec 8 search query gives an unrelated Checkout service a zero score."""
    q = tokenize("how is invoice rendering handled in billing")
    assert q == ["invoice", "rendering", "handled", "billing"]
    checkout = [(3.0, tokenize("Checkout")), (2.0, tokenize("service"))]
    assert fields_score(q, checkout) == 0.0
    invoice = [(3.0, tokenize("Invoice")), (2.0, tokenize("feature"))]
    assert fields_score(q, invoice) == 3.0


def test_decision_about_score() -> None:
    """Title weighs 3, rationale + summary weigh 1; empty query scores 0."""
    q = tokenize("should I hide drafts from the list")
    assert q == ["hide", "drafts", "list"]
    score = decision_about_score(q, "Hide draft invoices", "keep the list short", "")
    assert score == (3.0 + (0.4 + 0.4 * (5 / 6)) * 3 + 1.0) / 9
    assert decision_about_score(q, "Session timeout", "cookies", "") == 0.0
    assert decision_about_score([], "Hide drafts", "", "") == 0.0
    # The rationale and summary are joined with a space, not glued together.
    assert decision_about_score(["ab"], "", "a", "b") == 0.0


# --------------------------------------------------------------------------- path.Match

_BAD = None

# Go's own src/path/match_test.go table: (pattern, name, matched or _BAD).
GO_MATCH_TABLE = [
    ("abc", "abc", True),
    ("*", "abc", True),
    ("*c", "abc", True),
    ("a*", "a", True),
    ("a*", "abc", True),
    ("a*", "ab/c", False),
    ("a*/b", "abc/b", True),
    ("a*/b", "a/c/b", False),
    ("a*b*c*d*e*/f", "axbxcxdxe/f", True),
    ("a*b*c*d*e*/f", "axbxcxdxexxx/f", True),
    ("a*b*c*d*e*/f", "axbxcxdxe/xxx/f", False),
    ("a*b*c*d*e*/f", "axbxcxdxexxx/fff", False),
    ("a*b?c*x", "abxbbxdbxebxczzx", True),
    ("a*b?c*x", "abxbbxdbxebxczzy", False),
    ("ab[c]", "abc", True),
    ("ab[b-d]", "abc", True),
    ("ab[e-g]", "abc", False),
    ("ab[^c]", "abc", False),
    ("ab[^b-d]", "abc", False),
    ("ab[^e-g]", "abc", True),
    ("a\\*b", "a*b", True),
    ("a\\*b", "ab", False),
    ("a?b", "a☺b", True),
    ("a[^a]b", "a☺b", True),
    ("a???b", "a☺b", False),
    ("a[^a][^a][^a]b", "a☺b", False),
    ("[a-ζ]*", "\u03b1", True),
    ("*[a-ζ]", "A", False),
    ("a?b", "a/b", False),
    ("a*b", "a/b", False),
    ("[\\]a]", "]", True),
    ("[\\-]", "-", True),
    ("[x\\-]", "x", True),
    ("[x\\-]", "-", True),
    ("[x\\-]", "z", False),
    ("[\\-x]", "x", True),
    ("[\\-x]", "-", True),
    ("[\\-x]", "a", False),
    ("[]a]", "]", _BAD),
    ("[-]", "-", _BAD),
    ("[x-]", "x", _BAD),
    ("[x-]", "-", _BAD),
    ("[x-]", "z", _BAD),
    ("[-x]", "x", _BAD),
    ("[-x]", "-", _BAD),
    ("[-x]", "a", _BAD),
    ("\\", "a", _BAD),
    ("[a-b-c]", "a", _BAD),
    ("[", "a", _BAD),
    ("[^", "a", _BAD),
    ("[^bc", "a", _BAD),
    ("a[", "a", _BAD),
    ("a[", "ab", _BAD),
    ("a[", "x", _BAD),
    ("a/b[", "x", _BAD),
    ("*x", "xxx", True),
]


@pytest.mark.parametrize(("pattern", "name", "want"), GO_MATCH_TABLE)
def test_go_path_match_go_table(pattern: str, name: str, want: bool | None) -> None:
    """Go's path.Match test table, including which patterns are ErrBadPattern."""
    matched, bad = _go_match(pattern.encode(), name.encode())
    if want is _BAD:
        assert bad
        assert not matched
        assert go_path_match(pattern, name) is False
    else:
        assert not bad
        assert matched is want
        assert go_path_match(pattern, name) is want


def test_go_path_match_star_and_question_do_not_cross_slash() -> None:
    """`*` and `?` never match '/', but a literal '/' does."""
    assert go_path_match("src/*", "src/a.go")
    assert not go_path_match("src/*", "src/a/b.go")
    assert not go_path_match("src*", "src/a")
    assert go_path_match("src/*/b.go", "src/a/b.go")
    assert not go_path_match("src?a", "src/a")
    assert not go_path_match("src/**", "src/a/b.go")
    assert go_path_match("src/**", "src/a.go")


def test_go_path_match_classes() -> None:
    """`^` negates a class, `!` is a literal, ranges and escapes work in classes."""
    assert go_path_match("[^a]", "b")
    assert not go_path_match("[^a]", "a")
    assert go_path_match("[!a]", "!")
    assert go_path_match("[!a]", "a")
    assert not go_path_match("[!a]", "b")
    assert go_path_match("[a-c]x", "bx")
    assert go_path_match("[\\^a]", "^")
    assert go_path_match("[*]", "*")
    assert not go_path_match("[*]", "x")
    # An inverted range is not an error in Go; it is just empty.
    assert not go_path_match("[z-a]", "m")
    assert go_path_match("[^z-a]", "m")


def test_go_path_match_escapes() -> None:
    """A backslash escapes the next character, even a plain one."""
    assert go_path_match("\\a", "a")
    assert go_path_match("\\?", "?")
    assert not go_path_match("\\?", "x")
    assert go_path_match("a\\[b", "a[b")


def test_go_path_match_malformed_patterns_never_match() -> None:
    """ErrBadPattern means no match, even when the bad part comes after a mismatch."""
    assert not go_path_match("a[", "a[")
    assert not go_path_match("x\\", "x\\")
    assert not go_path_match("[]", "]")
    assert _go_match(b"b*[", b"a") == (False, True)
    assert _go_match(b"a*b*c[", b"zzz") == (False, True)
    assert _go_match(b"a*b*c", b"zzz") == (False, False)


def test_go_path_match_runs_on_bytes_like_go() -> None:
    """Like Go, a star may skip part of a UTF-8 sequence; ? then eats a stray byte."""
    assert go_path_match("?", "日")
    assert not go_path_match("??", "日")
    assert go_path_match("*??", "日")
    assert go_path_match("*[^a]", "日")
    assert go_path_match("日*", "日本")


def _glob_to_regex(pattern: str) -> re.Pattern[str]:
    """Translate a pattern over {a, b, /, *, ?} to an equivalent regex."""
    parts = {"*": "[^/]*", "?": "[^/]"}
    return re.compile("".join(parts.get(c, re.escape(c)) for c in pattern))


@given(st.text(alphabet="ab/*?", max_size=8), st.text(alphabet="ab/", max_size=8))
def test_go_path_match_agrees_with_regex_on_simple_patterns(
    pattern: str, name: str
) -> None:
    """Without classes or escapes, path.Match is a full regex match on ASCII."""
    expected = _glob_to_regex(pattern).fullmatch(name) is not None
    assert go_path_match(pattern, name) is expected


@given(st.text(alphabet=st.characters(blacklist_characters="*?[\\")))
def test_go_path_match_literal_pattern_matches_itself(text: str) -> None:
    """A pattern with no meta characters matches exactly itself."""
    assert go_path_match(text, text)
    assert not go_path_match(text, text + "x")


# --------------------------------------------------------------------------- globs


@pytest.mark.parametrize(
    ("path", "trimmed"),
    [
        ("a/**", "a"),
        ("a/*", "a"),
        ("a/", "a"),
        ("a/*/**", "a"),
        ("a/**/", "a/**"),
        ("a/**/**", "a/**"),
        ("a//", "a/"),
        ("/**", ""),
        ("/*", ""),
        ("/", ""),
        ("a", "a"),
        ("a**", "a**"),
    ],
)
def test_trim_glob_suffix(path: str, trimmed: str) -> None:
    """One "/**", then one "/*", then one "/" come off, each at most once."""
    assert trim_glob_suffix(path) == trimmed


def test_glob_match_path_match_both_ways() -> None:
    """Either side may be the pattern."""
    assert glob_match("src/billing/*", "src/billing/x.go")
    assert glob_match("src/billing/x.go", "src/*/x.go")
    assert glob_match(" src/a ", "\tsrc/a\n")


def test_glob_match_prefix_and_contains_fallback() -> None:
    """A trimmed glob that contains, or is contained in, the other side matches."""
    assert glob_match("src/billing/*", "src/billing/invoice/pdf.go")
    assert glob_match("src/billing/**", "src/billing/invoice/pdf.go")
    assert glob_match("src/billing/invoice/pdf.go", "src/billing/")
    assert not glob_match("src/billing/*", "lib/other.go")


def test_glob_match_upstream_quirks_are_kept() -> None:
    """Stored "/*" matches everything; short stored values over-match."""
    for stored in ("/*", "/**", "/"):
        assert glob_match(stored, "docs/readme.md")
        assert glob_match(stored, "x")
    assert glob_match("src", "anything/src-old/x")
    # A malformed pattern still matches through the contains fallback.
    assert glob_match("src/[", "src/[")
    assert not glob_match("[", "x")


def test_glob_match_empty_sides_never_match() -> None:
    """An empty or all-white-space side never matches, not even "/*"."""
    assert not glob_match("", "src")
    assert not glob_match("src", "")
    assert not glob_match(" \u3000", "src")
    assert not glob_match("/*", "  ")


def test_split_paths() -> None:
    """A paths prop splits on commas and Go white space, dropping empties."""
    assert split_paths("src/a/*, src/b lib/c,,\tdocs\u00a0x ") == [
        "src/a/*",
        "src/b",
        "lib/c",
        "docs",
        "x",
    ]
    assert split_paths(" , ") == []
    assert split_paths("") == []


# --------------------------------------------------------------------------- one_line


def test_one_line_flattens_and_trims() -> None:
    """CR and LF become spaces, then Go white space is trimmed from both ends."""
    assert one_line("\n a\r\nb \x85") == "a  b"
    assert one_line("") == ""


def test_one_line_length_limit_is_in_bytes() -> None:
    """160 bytes pass unchanged; 161 bytes cut to 157 bytes plus '...'."""
    assert one_line("a" * 160) == "a" * 160
    assert one_line("a" * 161) == "a" * 157 + "..."
    # 80 two-byte runes are 160 bytes: unchanged although only 80 characters.
    assert one_line("é" * 80) == "é" * 80
    assert one_line("é" * 81) == "é" * 78 + "\ufffd..."


def test_one_line_cut_splits_a_multibyte_rune_like_go() -> None:
    """Each stray byte of a character split at byte 157 becomes one U+FFFD."""
    assert one_line("a" * 156 + "日" + "x" * 10) == "a" * 156 + "\ufffd..."
    assert one_line("a" * 155 + "日" + "x" * 10) == "a" * 155 + "\ufffd\ufffd..."
    assert one_line("a" * 154 + "日" + "x" * 10) == "a" * 154 + "日..."


@given(st.text())
def test_one_line_is_one_short_line(text: str) -> None:
    """The result has no CR/LF and at most 160 bytes (plus U+FFFD expansion)."""
    out = one_line(text)
    assert "\n" not in out
    assert "\r" not in out
    if len(out.encode("utf-8", "surrogatepass")) > 160:
        assert out.endswith("...")
        assert "\ufffd" in out

"""An answer's bytes in pieces (``chunks_of``) are the bytes of the whole object
encoded at once (Go's ``MarshalIndent``, escapes and terminal-safe controls), for
any object: long lists are cut between items, and nothing else changes."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kgai_tui.core.answers.answer import Answer, chunks_of, encode
from kgai_tui.core.gosem import gojson
from kgai_tui.core.gosem.gojson import marshal_indent, with_go_floats
from kgai_tui.core.safe_text import escape_json_controls

#: Text with what the encoder escapes: HTML-safe characters, line separators,
#: C0/C1 controls, bidi and zero-width marks, a lone surrogate, non-ASCII.
_TEXT = st.text(
    alphabet=st.sampled_from(
        list('ab <>&"\\\n\t\x00\x1b\x7f\x85\u2028\u2029\u202e\u200bé€𝄞\ud800')
    ),
    max_size=12,
)
_SCALAR = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**53), 2**53),
    st.floats(allow_nan=False, allow_infinity=False),
    _TEXT,
)
_VALUE = st.recursive(
    _SCALAR,
    lambda inner: st.one_of(
        st.lists(inner, max_size=6), st.dictionaries(_TEXT, inner, max_size=4)
    ),
    max_leaves=20,
)
_OBJECT = st.dictionaries(
    _TEXT, st.one_of(_VALUE, st.lists(_VALUE, max_size=12)), max_size=6
)


def _whole(obj: dict[str, Any], floats: bool) -> bytes:
    """The encoding of the whole object at once (what every answer was before)."""
    value = with_go_floats(obj) if floats else obj
    return escape_json_controls(marshal_indent(value))


@settings(max_examples=120, deadline=None)
@given(obj=_OBJECT, floats=st.booleans())
def test_pieces_join_to_the_whole_encoding(obj: dict[str, Any], floats: bool) -> None:
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(gojson, "CHUNK_ITEMS", 2)  # every list of 3 or more is cut
        pieces = list(chunks_of(Answer(obj, floats=floats)))
    assert b"".join(pieces) == _whole(obj, floats)
    assert encode(Answer(obj, floats=floats)) == _whole(obj, floats)


def test_a_long_list_comes_in_pieces_of_whole_items() -> None:
    rows = [{"id": f"d{i}", "title": f"<t{i}>\u2028"} for i in range(5000)]
    obj = {"ok": True, "rows": rows, "counts": {"rows": len(rows)}, "empty": []}
    pieces = list(chunks_of(Answer(obj)))
    assert len(pieces) > 3, "the list was cut"
    assert max(len(p) for p in pieces) < len(b"".join(pieces)) // 2
    assert b"".join(pieces) == _whole(obj, False)
    assert json.loads(b"".join(pieces)) == obj

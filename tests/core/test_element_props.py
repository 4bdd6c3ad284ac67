"""ElementProps (the replay's props state) equals folding set_prop over the same writes."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from kgai_tui.core.props import ElementProps, set_prop

_TEXT = st.text(alphabet=st.sampled_from(list("ab=\n\r \t\u00a0\u2028x1")), max_size=6)


@settings(max_examples=400, deadline=None)
@given(st.lists(st.tuples(_TEXT, _TEXT), max_size=8), st.integers(0, 8))
def test_lines_equal_set_prop_fold(writes: list[tuple[str, str]], cut: int) -> None:
    blob = ""
    props = ElementProps()
    for i, (key, value) in enumerate(writes):
        blob = set_prop(blob, key, value)
        props.set(key, value)
        assert props.blob() == blob
        if i == cut:  # restart from the blob, as a warm cache does
            props = ElementProps.from_blob(blob)
            assert props.blob() == blob


def test_trailing_space_survives_only_on_the_latest_line() -> None:
    props = ElementProps()
    props.set("a", "x  ")
    assert props.blob() == "a=x  "
    props.set("b", "1")
    assert props.blob() == "a=x\nb=1"

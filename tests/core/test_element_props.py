"""ElementProps (the replay's props state) equals folding set_prop over the same writes."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from kgai_tui.core.wire.props import ElementProps, set_prop

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


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.tuples(st.sampled_from(["e1", "e2", "e3"]), _TEXT, _TEXT, st.booleans()),
        max_size=12,
    ),
    st.integers(0, 12),
)
def test_a_replay_flushed_once_equals_set_prop_in_order(
    writes: list[tuple[str, str, str, bool]], cut: int
) -> None:
    """The replay keeps only each key's last value per element and applies them on
    flush (the element's last key last); that must equal every write in order, also
    when a flush happens in between (a batch boundary, a warm cache's blob)."""
    from kgai_tui.core.replay.projection import Projection

    blobs: dict[str, str] = {}
    p = Projection()
    events = []
    for i, (eid, key, value, as_upsert) in enumerate(writes):
        blobs[eid] = set_prop(blobs.get(eid, ""), key, value)
        if as_upsert:
            m = {"op": "upsert_element", "element_id": eid, "props": {key: value}}
        else:
            m = {"op": "set_prop", "element_id": eid, "key": key, "value": value}
        decision = {"id": f"d_{i}", "title": "t", "mutations": [m]}
        events.append(
            (
                {
                    "hash": f"h{i}",
                    "decision": decision,
                    "lamport": i,
                    "install_id": "i",
                    "recorded_at": "",
                },
                -1,
            )
        )
    p.apply_many(events[:cut])
    p.flush_props()
    p.apply_many(events[cut:])
    p.flush_props()
    got = {eid: (p.element(eid) or ("", "", ""))[2] for eid in blobs}
    assert got == blobs

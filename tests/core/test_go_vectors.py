"""Ground truth from the reference engine: every vector verifies byte for byte."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from kgai_tui.core.answers.answer import encode
from kgai_tui.core.answers.kg import export_answer
from kgai_tui.core.engine.open import open_engine
from kgai_tui.core.gosem.gojson import marshal
from kgai_tui.core.gosem.gotext import normalize
from kgai_tui.core.reads.export import export_digest, export_parts
from kgai_tui.core.wire.codec import (
    _decision_from_canonical_dict,
    compute_hash,
    decision_id,
    decision_obj,
    decode_line,
    marshal_event,
)
from kgai_tui.core.wire.ids import element_id

# Not imported from conftest (tests/sync_s3 has one too: the name is ambiguous).
GO_VECTORS = Path(__file__).parents[1] / "fixtures" / "go-vectors"

VECTOR_LINES = GO_VECTORS.joinpath("vectors.ndjson").read_bytes().splitlines()
SPEC_LINES = [
    line
    for line in Path(__file__)
    .parent.joinpath("spec_vectors.ndjson")
    .read_bytes()
    .split(b"\n")
    if line
]
CHECK_DIGEST = "sha256:e2eb7f444c57c1cea9bcc6955ab5ecfef7446f3745d9fa4a0fcbe98085a69e28"


def _vectors(kind: str) -> list[tuple[bytes, dict[str, object]]]:
    out = []
    for raw in VECTOR_LINES:
        v = orjson.loads(raw)
        if v["type"] == kind:
            out.append((raw, v))
    return out


@pytest.mark.parametrize(("raw", "vec"), _vectors("element_id"))
def test_element_id_vector(raw: bytes, vec: dict[str, str]) -> None:
    """Normalize and ElementID match the reference for hostile unicode input."""
    assert normalize(vec["kind"]) == vec["normalized_kind"]
    assert normalize(vec["name"]) == vec["normalized_name"]
    assert element_id(vec["kind"], vec["name"]) == vec["id"]


@pytest.mark.parametrize(("raw", "vec"), _vectors("decision_id"))
def test_decision_id_vector(raw: bytes, vec: dict[str, object]) -> None:
    """DecisionID matches, and the decision re-marshals to the Go bytes exactly."""
    decision = _decision_from_canonical_dict(vec["decision"])
    assert decision_id(decision) == vec["id"]
    start = raw.index(b'"decision":') + len(b'"decision":')
    end = raw.rindex(b',"id":"d_')
    assert marshal(decision_obj(decision)) == raw[start:end]


def test_vector_count() -> None:
    """The fixture holds the 600 vectors it was published with."""
    assert len(_vectors("element_id")) == 300
    assert len(_vectors("decision_id")) == 300


@pytest.mark.parametrize("line", SPEC_LINES, ids=lambda b: b[9:25].decode())
def test_spec_event_vectors(line: bytes) -> None:
    """The four event lines of spec 2.9 parse, verify and re-serialise unchanged."""
    decoded = decode_line(line)
    assert decoded.hash_ok
    assert decoded.canonical
    assert marshal_event(decoded.event) == line
    assert compute_hash(decoded.event) == decoded.event.hash
    # Vector 3 carries the placeholder id "d_x" from the upstream unit test.
    assert decoded.decision_id_ok == (decoded.event.decision.id != "d_x")  # type: ignore[union-attr]


def test_spec_decision_ids() -> None:
    """The decision ids quoted in spec 2.6 come out exactly."""
    from kgai_tui.core.wire.model import Decision, Mutation

    retire = Mutation(
        op="retire_link", from_id="el_a", to_id="el_b", link_kind="PART_OF"
    )
    d = Decision(
        id="",
        title="Invoice standalone",
        rationale="split from pricing",
        mutations=(retire,),
    )
    assert decision_id(d) == "d_cd0e980c7a99b3b5c48b1efb"
    assert (
        decision_id(Decision(id="", title="t", mutations=None))
        == "d_5a0c91c3229d0a919593c3ec"
    )
    assert (
        decision_id(Decision(id="", title="t", mutations=()))
        == "d_ee47b003a5c8aebd7443f549"
    )


def test_spec_element_ids() -> None:
    """The element ids quoted in spec 2.5 come out exactly."""
    assert element_id("feature", "Invoice") == "el_838c7794b307afdacd03"
    assert element_id("feature", "  invoice ") == "el_838c7794b307afdacd03"
    assert element_id("concept", "Invoice") == "el_f3918c9ebf539097dd80"
    assert element_id("feature", "product-search") == "el_d18df2418c129c30a0b8"
    assert element_id("concept", "Catalog") == "el_16086a35aad3b3c9a0ed"


def test_go_string_escaping_vector() -> None:
    """Go's json.Marshal of a hostile string (spec 2.9, other vectors)."""
    assert marshal('a\x01\t\n\r"\\<>&\u2028\u2029é') == (
        '"a\\u0001\\t\\n\\r\\"\\\\\\u003c\\u003e\\u0026\\u2028\\u2029é"'.encode()
    )


@pytest.mark.parametrize("shard", sorted(GO_VECTORS.joinpath("log").glob("*.ndjson")))
def test_fixture_shard_lines_verify(shard: Path) -> None:
    """Every line of the three reference shards passes both gates."""
    for line in shard.read_bytes().splitlines():
        decoded = decode_line(line)
        assert decoded.hash_ok and decoded.decision_id_ok and decoded.canonical


def test_fixture_store_replays_to_check_digest() -> None:
    """The three shards replay without a gate failure to the published digest."""
    engine = open_engine(GO_VECTORS)
    assert engine.problems == []
    assert len(engine.events) == 300
    assert export_digest(export_parts(engine.projection)) == CHECK_DIGEST
    printed = orjson.loads(encode(export_answer(lambda: engine, canonical=True)))
    assert printed["digest"] == CHECK_DIGEST

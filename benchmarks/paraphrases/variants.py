"""The hint sources measured one by one on the paraphrase set (docs/agents.md).

A plain scan re-implementation of the hint rules, with switches for the sources that
were tried: near misses (recall's own relevance), initials, English Snowball stems
(tantivy's stemmer: tokens of equal stem match with strength ``--stem``), and an
order by the number of topic words matched before the score. It prints, for each
variant, how many questions reach a right element with plain recall and with one
retry using the first hint. ``run.py`` measures the shipped rules through the real
answer function; this script only compares variants.

Usage::

    python benchmarks/paraphrases/variants.py [--store PATH]
"""

from __future__ import annotations

import argparse
import functools
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent.parent))

from kgai_tui.core.engine.open import open_engine  # noqa: E402
from kgai_tui.core.reads.context import context_obj  # noqa: E402
from kgai_tui.core.recall.scoring import strength, tokenize  # noqa: E402
from kgai_tui.demo import DEMO_STORE  # noqa: E402


@functools.cache
def _analyzer() -> Any:
    import tantivy

    return (
        tantivy.TextAnalyzerBuilder(tantivy.Tokenizer.raw())
        .filter(tantivy.Filter.stemmer("english"))
        .build()
    )


@functools.cache
def stem(word: str) -> str:
    """English Snowball, as tantivy's stemmer does (ASCII words only)."""
    return str(_analyzer().analyze(word)[0]) if word.isascii() else word


def hint_ids(
    p: Any, about: str, *, initials: bool, stem_strength: float, coverage: bool
) -> list[str]:
    """The first hints of one variant (element ids, best first)."""
    q = tokenize(about)

    def grade(a: str, b: str) -> float:
        s = strength(a.encode(), b.encode())
        if stem_strength and len(a) >= 3 and len(b) >= 3 and stem(a) == stem(b):
            s = max(s, stem_strength)
        return s

    def score(fields: Sequence[tuple[float, list[str]]]) -> tuple[float, int]:
        total, matched = 0.0, 0
        for tok in q:
            best = max((grade(tok, t) * w for w, ts in fields for t in ts), default=0)
            total += best
            matched += best > 0
        return total / (3 * len(q)), matched

    boost: dict[str, tuple[float, int]] = {}
    for i, shaped in enumerate(p.dec_shapes):
        text = p.dec_rationale[i] + " " + p.dec_summary[i]
        s = score([(3.0, tokenize(p.dec_title[i])), (1.0, tokenize(text))])
        for e in shaped:
            if s[0] > boost.get(e, (0.0, 0))[0]:
                boost[e] = s
    runs = []
    if initials:
        for size in range(min(len(q), 6), 1, -1):
            for start in range(len(q) - size + 1):
                runs.append(("".join(t[0] for t in q[start : start + size]), size))
    rows = []
    for e in p.graph.nodes:
        kind, name, props = p.element(e)
        ab = score(
            [(3.0, tokenize(name)), (2.0, tokenize(kind)), (1.0, tokenize(props))]
        )
        rel = 6 * ab[0] + 5 * boost.get(e, (0.0, 0))[0]
        gain = next(
            (
                6 * n / len(q)
                for ini, n in runs
                if tokenize(name) in ([ini], [ini + "s"])
            ),
            0.0,
        )
        if rel < 1 and rel + gain > 0 and name:
            matched = max(ab[1], boost.get(e, (0.0, 0))[1])
            key = (-(rel + gain), -p.max_authority_lamport(e), e)
            rows.append(((-matched, *key) if coverage else key, e))
    return [e for _, e in sorted(rows)]


def main() -> None:
    """Measure every variant."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--store", type=Path, default=DEMO_STORE)
    ap.add_argument("--stem", type=float, default=0.8)
    args = ap.parse_args()
    p = open_engine(args.store).projection
    questions = json.loads((HERE / "questions.json").read_text("utf-8"))["questions"]

    def key(e: str) -> str:
        kind, name, _ = p.element(e)
        return f"{kind}:{name}"

    variants = {
        "near misses": {"initials": False, "stem_strength": 0.0, "coverage": False},
        "+ initials (shipped)": {
            "initials": True,
            "stem_strength": 0.0,
            "coverage": False,
        },
        "+ initials + stems": {
            "initials": True,
            "stem_strength": args.stem,
            "coverage": False,
        },
        "+ initials + stems, coverage first": {
            "initials": True,
            "stem_strength": args.stem,
            "coverage": True,
        },
    }
    plain: dict[str, bool] = {}
    first: dict[str, dict[str, Any]] = {}
    for q in questions:
        answer = context_obj(p, paths=[], about=q["q"])
        first[q["q"]] = answer
        plain[q["q"]] = any(
            f"{i['kind']}:{i['name']}" in q["expect"] for i in answer["items"]
        )
    print(f"plain recall: {sum(plain.values())}/{len(questions)}")
    for label, opts in variants.items():
        reached = 0
        for q in questions:
            if plain[q["q"]]:
                reached += 1
                continue
            if first[q["q"]]["total"] >= 3:
                continue
            ids = hint_ids(p, q["q"], **opts)
            if not ids:
                continue
            retry = context_obj(p, paths=[], about=p.element(ids[0])[1])
            reached += any(key(i["element_id"]) in q["expect"] for i in retry["items"])
        print(f"{label:38} + one retry: {reached}/{len(questions)}")


if __name__ == "__main__":
    main()

"""How often recall reaches a right element for paraphrased agent questions.

For each question of ``questions.json`` (the demo store unless ``--store``), it asks
recall exactly as an agent does (the answer function behind ``kgai-tui context
--json`` and the MCP ``recall`` tool, default ``max``), then:

* **plain**: the answer's items hold a right element;
* **+ one retry**: plain, or the answer carried hints and a second recall with the
  first hint's name as the topic holds a right element (what the tool description
  tells an agent to do);
* **first hint right**: plain recall missed and the first hint is itself a right
  element;
* the same two numbers counting only the first 3 items (a stricter reading).

Usage::

    python benchmarks/paraphrases/run.py [--store PATH] [--questions FILE] [--json]
        [--verbose]  (with --json: the counts and one row per question)

It prints one table; ``--json`` prints the counts as JSON instead. Deterministic:
the same store gives the same numbers.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent.parent))

from kgai_tui.core.answers.recall import recall_answer  # noqa: E402
from kgai_tui.core.engine.open import open_engine  # noqa: E402
from kgai_tui.demo import DEMO_STORE  # noqa: E402


def _names(answer: dict[str, Any], top: int | None = None) -> list[str]:
    items = answer["items"][:top] if top else answer["items"]
    return [f"{it['kind']}:{it['name']}" for it in items]


def measure(store: Path, questions: list[dict[str, Any]]) -> dict[str, Any]:
    """Ask every question; return the counts and one row per question."""
    engine = open_engine(store)

    def ask(topic: str) -> dict[str, Any]:
        obj: dict[str, Any] = recall_answer(lambda: engine, (), topic).obj
        return obj

    rows: list[dict[str, Any]] = []
    for q in questions:
        expect = set(q["expect"])
        first = ask(q["q"])
        hints = first.get("hints") or []
        row: dict[str, Any] = {
            "q": q["q"],
            "plain": bool(expect & set(_names(first))),
            "plain3": bool(expect & set(_names(first, 3))),
            "hint": f"{hints[0]['kind']}:{hints[0]['name']}" if hints else None,
        }
        row["hint_right"] = not row["plain"] and row["hint"] in expect
        row["retry"], row["retry3"] = row["plain"], row["plain3"]
        if hints and not (row["plain"] and row["plain3"]):
            again = ask(hints[0]["name"])
            row["retry"] = row["plain"] or bool(expect & set(_names(again)))
            row["retry3"] = row["plain3"] or bool(expect & set(_names(again, 3)))
        rows.append(row)
    counts = {
        key: sum(r[key] for r in rows)
        for key in ("plain", "retry", "hint_right", "plain3", "retry3")
    }
    return {"questions": len(rows), **counts, "rows": rows}


def main() -> None:
    """Parse the arguments, measure, print."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--store", type=Path, default=DEMO_STORE)
    ap.add_argument("--questions", type=Path, default=HERE / "questions.json")
    ap.add_argument("--json", action="store_true", help="print the counts as JSON")
    ap.add_argument(
        "--verbose", action="store_true", help="one line (or JSON row) per question"
    )
    args = ap.parse_args()
    questions = json.loads(args.questions.read_text("utf-8"))["questions"]
    result = measure(args.store, questions)
    if args.json:
        keep = (
            result if args.verbose else {k: v for k, v in result.items() if k != "rows"}
        )
        print(json.dumps(keep, indent=2))
        return
    if args.verbose:
        for r in result["rows"]:
            mark = "plain" if r["plain"] else "retry" if r["retry"] else "miss "
            print(f"{mark}  {r['q']!r:55} first hint: {r['hint']}")
    n = result["questions"]

    def pct(k: str) -> str:
        return f"{result[k]:>3}/{n} ({100 * result[k] / n:.0f}%)"

    print(f"questions                          {n}")
    print(f"plain recall reaches               {pct('plain')}")
    print(f"recall + one retry (first hint)    {pct('retry')}")
    missed = n - result["plain"]
    print(f"plain misses: first hint is right  {result['hint_right']:>3}/{missed}")
    print(f"plain, first 3 items               {pct('plain3')}")
    print(f"+ one retry, first 3 items         {pct('retry3')}")


if __name__ == "__main__":
    main()

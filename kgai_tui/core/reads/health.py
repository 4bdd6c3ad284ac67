"""``status`` and ``doctor``: what a store holds, and whether it is sound (6.8)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kgai_tui import __version__
from kgai_tui.core.store.config_file import CONFIG_MAX
from kgai_tui.core.store.regular_file import read_regular

if TYPE_CHECKING:
    from kgai_tui.core.reads.store import Store


def read_config(root: Path | None) -> dict[str, Any]:
    """Read ``kg.config.json`` if present and well-formed; ``{}`` otherwise."""
    if root is None:
        return {}
    try:
        raw = read_regular(root / "kg.config.json", CONFIG_MAX, follow=True)
        data = json.loads(raw.decode("utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def redact(url: str) -> str:
    """Hide credentials in a remote URL: ``scheme://***@host``."""
    scheme_end = url.find("://")
    at = url.rfind("@")
    if scheme_end >= 0 and at > scheme_end:
        return url[: scheme_end + 3] + "***" + url[at:]
    return url


def _transport(remote: str) -> str:
    if remote.startswith("s3://"):
        return "s3"
    if remote.startswith("kgai://"):
        return "kgai-cloud"
    return "git" if remote else "none"


def status_obj(engine: Store) -> dict[str, Any]:
    """Return the status report in the reference's struct order, plus log counts."""
    cfg = read_config(engine.root)
    p = engine.projection
    remote = str(cfg.get("remote") or "")
    if remote == "none":
        remote = ""
    out: dict[str, Any] = {"version": __version__, "root": str(engine.root or "")}
    out["install_id"] = str(cfg.get("install_id") or "")
    out["actor"] = str(cfg.get("actor") or "")
    if cfg.get("machine"):
        out["machine"] = str(cfg["machine"])
    out["schema_version"] = int(cfg.get("schema_version") or 1)
    if remote:
        out["remote"] = redact(remote)
        out["remote_source"] = "session"
    out["remote_configured"] = bool(remote)
    out["sync_transport"] = _transport(remote)
    out["cloud_configured"] = bool(cfg.get("cloud_url") and cfg.get("cloud_token"))
    summary = engine.summary()
    out["events"] = summary.events
    out["elements"] = p.element_count()
    out["decisions"] = len(p.dec_id)
    out["conflicts"] = len(p.contested)
    retired = cfg.get("retired_installs")
    if isinstance(retired, list) and retired:
        out["retired_installs"] = len(retired)
    out["shards"] = summary.shards
    out["skipped_lines"] = summary.skipped
    out["ok"] = True
    return out


def doctor_problems(engine: Store) -> list[str]:
    """List every problem in every shard, each with shard and line."""
    problems = [prob.describe() for prob in engine.problems]
    for name, line, lamport in engine.chain_break_lines():
        problems.append(f"log/{name}:{line}: broken hash-chain at lamport {lamport}")
    for ev_hash, op in engine.projection.unknown_ops:
        problems.append(
            f"{engine.where(ev_hash)}: unknown mutation op {json.dumps(op)} (ignored)"
        )
    if engine.root is not None:  # a config every write would refuse (bad install id)
        from kgai_tui.core.store.config_file import config_problems

        problems.extend(config_problems(engine.root))
    return problems


def problem_count(engine: Store) -> int:
    """How many problems :func:`doctor_problems` lists, without finding where
    each unknown op is (a store read through its model searches the shards for
    that)."""
    from kgai_tui.core.store.config_file import config_problems

    config = config_problems(engine.root) if engine.root is not None else []
    return (
        len(engine.problems)
        + len(engine.chain_break_lines())
        + len(engine.projection.unknown_ops)
        + len(config)
    )


def doctor_obj(engine: Store) -> dict[str, Any]:
    """Return the doctor report; ``ok`` is false when any problem was found.

    Doctor is the integrity check: ``engine`` must hold exactly the lines of the
    log as they verify now (a cold replay, or a model :func:`doctor_answer
    <kgai_tui.core.answers.kg.doctor_answer>` checked against every byte). The
    caches' fingerprint trusts an append-only log (docs/determinism.md); this is
    where that is checked.
    """
    cfg = read_config(engine.root)
    p = engine.projection
    problems = doctor_problems(engine)
    out: dict[str, Any] = {
        "root": str(engine.root or ""),
        "install_id": str(cfg.get("install_id") or ""),
        "actor": str(cfg.get("actor") or ""),
    }
    remote = str(cfg.get("remote") or "")
    if remote and remote != "none":
        out["remote"] = redact(remote)
    out["schema_version"] = int(cfg.get("schema_version") or 1)
    out["events"] = engine.summary().events
    out["elements"] = p.element_count()
    out["decisions"] = len(p.dec_id)
    out["conflicts"] = len(p.contested)
    out["problems"] = problems or None
    out["ok"] = not problems
    return out

"""The SessionStart digest's token split: how much of it is ids and metadata, how many records fit.

For the demo store (``agentctx demo``) and a synthetic store of ``--records`` records
(``bench/synth.py``), consolidated as session end leaves them (no embeddings, no judge), it
serves the SessionStart digest exactly as the hook does and measures:

* ``tokens`` and ``chars`` of the served text (the one estimator);
* ``records`` — the records it shows (entries with an id, plus the profile's records);
* ``entries`` — record lines (``- [<id>] …``);
* ``meta chars`` — over every record line, the characters before the record's title (the
  bullet, the id, the type, date, confidence and marks), and ``meta share`` = meta chars / chars
  of the whole digest (the issue's measure; target ≤ 15 %);
* ``meta tokens`` — the same characters in tokens (the one estimator over them).

The measure finds each record's title in its line by the record itself, so it reads any line
format: run it against an older checkout to compare (``PYTHONPATH=<checkout>
<checkout>/.venv/bin/python bench/bench_digest.py``).

Usage: ``.venv/bin/python bench/bench_digest.py [--records 1000] [--json]``
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, os.environ.get("BENCH_ROOT") or str(Path(__file__).resolve().parent.parent))

TARGET_META_SHARE = 0.15


def _measure(db: Any, project: Any, worktree: str) -> dict[str, Any]:
    from agentctx.context import digest, injection
    from agentctx.core.budget import estimate_tokens
    from agentctx.store import records

    served = digest.serve(db, project, worktree, save=False)
    text = served.text
    by_id = {rid: records.get(db, rid) for rid in served.record_ids}
    meta_chars = 0
    meta_text: list[str] = []
    entries = 0
    for line in text.split("\n"):
        if not line.startswith(injection.ITEM_PREFIX):
            continue
        shown = line[len(injection.ITEM_PREFIX):].split("]", 1)[0]
        record = next((r for rid, r in by_id.items() if rid.startswith(shown)), None)
        if record is None:
            continue
        entries += 1
        title = " ".join(injection.clean(record.title).split())
        at = line.find(title)
        if at < 0:
            continue
        meta_chars += at
        meta_text.append(line[:at])
    return {"tokens": served.tokens, "chars": len(text), "records": len(served.record_ids),
            "entries": entries, "meta_chars": meta_chars,
            "meta_share": round(meta_chars / max(1, len(text)), 4),
            "meta_tokens": estimate_tokens("".join(meta_text)), "text": text}


def _consolidate(db: Any) -> None:
    from agentctx.consolidate.run import consolidate

    consolidate(db, embeddings=False, judge=None)


def demo_store(base: Path) -> dict[str, Any]:
    """Build the demo store under ``base`` and measure its digest."""
    from agentctx import demo
    from agentctx.core import config
    from agentctx.store import projects
    from agentctx.store.db import Store

    home = base / "home"
    os.environ["AGENTCTX_HOME"] = str(home)
    config.ensure_home()
    with Store.open(home / config.DB_NAME) as db:
        demo.build(db, base / "harbor")
        _consolidate(db)
        resolved = projects.resolve(db, str(base / "harbor"))
        return _measure(db, resolved.project, resolved.worktree)


def synthetic_store(base: Path, size: int) -> dict[str, Any]:
    """Build a synthetic store of ``size`` records under ``base`` and measure its digest."""
    from agentctx.core import config
    from agentctx.store import projects
    from agentctx.store.db import Store
    from bench.synth import build_store, project_folder

    home = base / "home-synth"
    os.environ["AGENTCTX_HOME"] = str(home)
    config.ensure_home()
    path = home / config.DB_NAME
    build_store(path, size)
    with Store.open(path) as db:
        _consolidate(db)
        resolved = projects.resolve(db, str(project_folder(path)))
        return _measure(db, resolved.project, resolved.worktree)


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark and print its table (or JSON)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--records", type=int, default=1000)
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--show", action="store_true", help="print each digest too")
    args = parser.parse_args(argv)
    os.environ.setdefault("AGENTCTX_LLM", "off")
    os.environ.setdefault("AGENTCTX_EMBEDDINGS", "off")
    with tempfile.TemporaryDirectory(prefix="agentctx-bench-digest-") as tmp:
        results = {"demo": demo_store(Path(tmp) / "demo"),
                   f"synthetic {args.records}": synthetic_store(Path(tmp) / "synth",
                                                                args.records)}
    if args.json:
        print(json.dumps({k: {f: v for f, v in r.items() if f != "text"}
                          for k, r in results.items()}, indent=2))
        return 0
    print(f"{'store':<18} {'tokens':>6} {'chars':>6} {'records':>7} {'entries':>7} "
          f"{'meta chars':>10} {'meta tokens':>11} {'meta share':>10}")
    for name, r in results.items():
        print(f"{name:<18} {r['tokens']:>6} {r['chars']:>6} {r['records']:>7} {r['entries']:>7} "
              f"{r['meta_chars']:>10} {r['meta_tokens']:>11} {r['meta_share']:>10.1%}")
        if args.show:
            print(r["text"])
    worst = max(r["meta_share"] for r in results.values())
    print(f"target: meta share ≤ {TARGET_META_SHARE:.0%} — "
          f"{'met' if worst <= TARGET_META_SHARE else 'not met'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

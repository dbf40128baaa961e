"""``agentctx preview`` is the hook's decision, exactly: over a whole benchmark file, the real
preview process names the same records in full and as pointers, and the same text, as the real
UserPromptSubmit hook process injects."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentctx.benchmarks import coding_data as data
from agentctx.context.injection import POINTER, ids_in
from agentctx.store import Store
from tests.conftest import SHARED, run_cli
from tests.hooks.conftest import at, payloads, run_hook

MODEL = SHARED / "models" / "minilm-static-256"


@pytest.fixture
def ledgerline(tmp_path: Path) -> Path:
    """The coding benchmark's history in the test home's store, consolidated as users run it
    (with the real small model when it is present, so the judgement weighs meaning too)."""
    with Store.open() as db:
        built = data.build(db, data.load_history(), tmp_path / "projects")
    env = {"AGENTCTX_EMBED_MODEL": str(MODEL)} if (MODEL / "model.safetensors").exists() \
        else {"AGENTCTX_EMBEDDINGS": "off"}
    done = run_cli("consolidate", env=env)
    assert done.returncode == 0, done.stderr
    return tmp_path / "projects" / built.project_name


def _split(text: str) -> tuple[list[str], list[str]]:
    """The ids an injected text shows (the store's short ids) in full and as pointers."""
    pointers = [i for i in ids_in(text) if f"[{i}] " in text and
                any(line.startswith(f"- [{i}] ") and f" · {POINTER} · " in line
                    for line in text.splitlines())]
    return [i for i in ids_in(text) if i not in pointers], pointers


def test_preview_is_the_hooks_decision_over_a_benchmark_file(ledgerline: Path) -> None:
    queries = data.load_queries(data.TUNING_3_PATH)
    template = payloads("UserPromptSubmit")[0]
    differ, injected_any = [], 0
    for number, query in enumerate(queries):
        hook = run_hook("prompt", at(template, ledgerline, prompt=query.prompt,
                                     session_id=f"exact-{number}"))
        preview = run_cli("preview", query.prompt, "--json", "-n", "0", cwd=ledgerline)
        assert preview.returncode == 0, preview.stderr
        report = json.loads(preview.stdout)
        full, pointers = _split(hook.context)
        injected_any += bool(hook.context)
        short = {c["id"]: c["short_id"] for c in report["candidates"]}
        if ([short[i] for i in report["injected"]], [short[i] for i in report["pointers"]],
                report["injected_text"]) != (full, pointers, hook.context):
            differ.append(query.id)
    assert differ == [], f"preview and hook disagree on {differ}"
    assert injected_any >= len(queries) // 3  # the comparison covered real injections


def test_the_number_listed_never_changes_the_decision(ledgerline: Path) -> None:
    prompt = "which test runner are we on, still nose?"
    reports = [json.loads(run_cli("preview", prompt, "--json", "-n", n, cwd=ledgerline).stdout)
               for n in ("0", "3", "50")]
    assert len({json.dumps([r["injected"], r["pointers"], r["injected_text"]])
                for r in reports}) == 1
    listed = [len(r["candidates"]) for r in reports]
    assert listed[0] <= listed[1] <= listed[2] and listed[0] < listed[2]

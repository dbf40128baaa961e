"""``agentctx doctor``: real checks on real installations, broken on purpose where it matters."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from agentctx.core import config
from agentctx.install import apply_init, plan_init
from agentctx.ops import doctor, mcp_probe
from agentctx.store import Store, projects, records, sessions
from agentctx.store.models import Draft
from tests.install.conftest import LAUNCHER, PYTHON, load, run_cli, write


def _script(path: Path, body: str) -> str:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"#!{sys.executable}\n{body}", encoding="utf-8")
    path.chmod(0o755)
    return str(path)


def _by_name(checks: list[dict[str, str]]) -> dict[str, dict[str, str]]:
    return {check["name"]: check for check in checks}


def test_before_init_doctor_fails_and_says_how_to_fix(home: Path) -> None:
    done = run_cli("doctor", "--json", "--quick")
    assert done.returncode == 1
    report = json.loads(done.stdout)
    assert report["ok"] is False
    checks = _by_name(report["checks"])
    assert checks["python"]["status"] == "ok"
    assert checks["sqlite"]["status"] == "ok" and "FTS5" in checks["sqlite"]["detail"]
    assert checks["hooks"]["status"] == "fail"
    assert checks["hooks"]["fix"] == ("run 'agentctx init', or install the agentctx Claude Code "
                                      "plugin")
    assert checks["mcp"]["status"] == "fail" and "agentctx init" in checks["mcp"]["fix"]
    assert checks["store"]["status"] == "warn"
    assert not (home / ".agentctx" / "agentctx.db").exists()  # doctor creates nothing


def test_after_init_doctor_is_healthy_and_leaves_the_store_alone(home: Path,
                                                                 project_dir: Path) -> None:
    assert run_cli("init", "--yes").returncode == 0
    with Store.open() as db:
        project = projects.resolve(db, str(project_dir)).project
        records.add(db, Draft(type="decision", title="Use gRPC between services",
                              body="gRPC with protobuf for every internal call."),
                    project_id=project.id)
        change_counter = db.change_counter()
        sessions_before = len(sessions.recent(db, limit=1000))

    done = run_cli("doctor", "--json", cwd=project_dir)
    report = json.loads(done.stdout)
    checks = _by_name(report["checks"])
    assert done.returncode == 0, report
    assert checks["hooks"]["status"] == "ok", checks["hooks"]
    assert checks["mcp"]["status"] == "ok" and "answers initialize" in checks["mcp"]["detail"]
    latency = checks["hook latency"]
    assert latency["status"] in ("ok", "warn") and "median" in latency["detail"], latency
    assert checks["api key"]["status"] == "warn"  # no ANTHROPIC_API_KEY in the test env
    assert "1 current records" in checks["store"]["detail"] or \
        "2 current records" in checks["store"]["detail"]  # + the detected profile
    with Store.open() as db:  # measured on a copy: no session, receipt or record added here
        assert db.change_counter() == change_counter
        assert len(sessions.recent(db, limit=1000)) == sessions_before


def test_text_output_is_one_line_per_check(home: Path) -> None:
    done = run_cli("doctor", "--quick")
    lines = done.stdout.splitlines()
    assert len(lines) == 13
    assert all(line.split()[0] in ("ok", "warn", "fail") for line in lines)
    assert any(line.startswith("fail  hooks:") and "— fix: run 'agentctx init'" in line
               for line in lines)


def test_a_moved_launcher_fails_hooks_and_mcp(home: Path, tmp_path: Path) -> None:
    launcher = _script(tmp_path / "old-venv" / "agentctx", "")
    apply_init(plan_init("user", launcher=launcher, claude=False))
    Path(launcher).unlink()
    hooks, _ = doctor.check_hooks()
    assert hooks.status == "fail" and "does not exist" in hooks.detail
    mcp = doctor.check_mcp(probe=False)
    assert mcp.status == "fail" and "does not exist" in mcp.detail


def test_disable_all_hooks_is_a_failure(home: Path) -> None:
    apply_init(plan_init("user", launcher=PYTHON, claude=False))
    settings = home / ".claude" / "settings.json"
    data = load(settings)
    data["disableAllHooks"] = True
    settings.write_text(json.dumps(data), encoding="utf-8")
    hooks, _ = doctor.check_hooks()
    assert hooks.status == "fail" and "disableAllHooks" in hooks.detail


def test_a_session_start_matcher_without_resume_is_a_warning(home: Path) -> None:
    apply_init(plan_init("user", launcher=PYTHON, claude=False))
    settings = home / ".claude" / "settings.json"
    data = load(settings)
    data["hooks"]["SessionStart"][0]["matcher"] = "startup|clear|compact"
    del data["hooks"]["CwdChanged"]
    settings.write_text(json.dumps(data), encoding="utf-8")
    hooks, _ = doctor.check_hooks()
    assert hooks.status == "warn"
    assert "skips resume" in hooks.detail and "missing events: CwdChanged" in hooks.detail


def test_hooks_writing_to_another_home_are_a_warning(home: Path, tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AGENTCTX_HOME", str(tmp_path / "elsewhere"))
    apply_init(plan_init("user", launcher=PYTHON, claude=False))
    monkeypatch.setenv("AGENTCTX_HOME", str(home / ".agentctx"))
    hooks, _ = doctor.check_hooks()
    assert hooks.status == "warn" and "elsewhere" in hooks.detail


def test_a_malformed_settings_file_is_reported(home: Path) -> None:
    write(home / ".claude" / "settings.json", '{"hooks": ')
    hooks, _ = doctor.check_hooks()
    assert hooks.status == "fail" and "not valid JSON" in hooks.detail


def test_latency_measurement_runs_the_command_and_checks_its_output(home: Path,
                                                                    tmp_path: Path) -> None:
    good = _script(tmp_path / "good", "import json, sys, os\njson.load(sys.stdin)\n"
                   "assert os.environ['AGENTCTX_HOME'] != os.path.expanduser('~/.agentctx')\n"
                   "print(json.dumps({'hookSpecificOutput': {'hookEventName': 'SessionStart',"
                   " 'additionalContext': 'x'}}))\n")
    times, problem = doctor.measure_hook_latency([good], runs=3)
    assert len(times) == 3 and problem is None and all(t > 0 for t in times)
    check = doctor.check_latency([good], runs=3)
    assert check.status in ("ok", "warn") and "over 3 runs" in check.detail

    noisy = _script(tmp_path / "noisy", "print('debug: starting')\n")
    assert doctor.check_latency([noisy], runs=2).status == "fail"
    failing = _script(tmp_path / "failing", "raise SystemExit(2)\n")
    check = doctor.check_latency([failing], runs=2)
    assert check.status == "fail" and "status 2" in check.detail


def test_probe_detects_servers_that_do_not_speak_mcp(tmp_path: Path) -> None:
    chatty = _script(tmp_path / "chatty", "print('hello from the server')\n"
                     "import time; time.sleep(5)\n")
    ok, outcome = mcp_probe.probe_server(chatty, [], {}, timeout_s=5)
    assert not ok and "other than JSON-RPC" in outcome
    dead = _script(tmp_path / "dead", "import sys; sys.stderr.write('boom: no config\\n')\n")
    ok, outcome = mcp_probe.probe_server(dead, [], {}, timeout_s=5)
    assert not ok and "boom: no config" in outcome


def test_probe_completes_a_real_handshake_with_agentctx_mcp() -> None:
    ok, outcome = mcp_probe.probe_server(LAUNCHER, ["mcp"], {})
    assert ok, outcome
    assert "agentctx" in outcome


def test_python_versions() -> None:
    assert doctor.check_python((3, 10, 4)).status == "fail"
    assert doctor.check_python((3, 11, 0)).status == "ok"
    assert doctor.check_python((3, 13, 1)).status == "ok"
    assert doctor.check_python((3, 14, 0)).status == "warn"


def test_api_key_and_model_checks_follow_the_config(home: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test")
    assert doctor.check_api_key(config.Config.load()).status == "ok"
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    assert doctor.check_api_key(config.Config.load()).status == "warn"
    monkeypatch.setenv("AGENTCTX_LLM", "off")
    assert doctor.check_api_key(config.Config.load()).status == "ok"

    monkeypatch.setenv("AGENTCTX_EMBEDDINGS", "off")
    assert doctor.check_embedding_model(config.Config.load()).status == "ok"
    assert doctor.check_vectors(config.Config.load()).detail.startswith("off")
    monkeypatch.delenv("AGENTCTX_EMBEDDINGS")
    assert doctor.check_embedding_model(config.Config.load()).status == "warn"
    snapshot = home / ".agentctx" / "models" / "models--minishlab--potion-base-8M" / \
        "snapshots" / "abc123"
    snapshot.mkdir(parents=True)
    (snapshot / "model.safetensors").write_bytes(b"\0")
    assert doctor.check_embedding_model(config.Config.load()).status == "ok"
    monkeypatch.setenv("AGENTCTX_EMBED_MODEL", str(home / "no-such-model"))
    assert doctor.check_embedding_model(config.Config.load()).status == "fail"


def test_vector_backend_is_reported_with_its_reason(home: Path) -> None:
    Store.open().close()
    check = doctor.check_vectors(config.Config.load())
    assert check.status == "ok"
    # a fresh store has no vectors yet; the reason names the backend that would be used
    assert "vec0" in check.detail or "numpy" in check.detail or "not configured" in check.detail


def test_semantic_check_readiness(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import struct

    from agentctx.store import querymodel

    assert doctor.check_semantic_check(config.Config.load()).status == "warn"  # no store
    Store.open().close()
    check = doctor.check_semantic_check(config.Config.load())
    assert check.status == "warn" and "consolidate" in check.fix
    side = home / ".agentctx" / "models" / "query" / "m.db"
    querymodel.write(side, model="m", source="m", dim=1, unk=None, prefix="##", max_chars=100,
                     rows=[("word", struct.pack("<1e", 1.0))])
    with Store.open() as db:
        querymodel.register(db, "m", side)
    lists = doctor.check_semantic_check(config.Config.load())
    assert lists.status == "warn" and "by meaning are not ready" in lists.detail, lists
    assert "consolidate" in lists.fix
    import numpy as np

    from agentctx.store import projects, records, vecside_build, vectors
    from agentctx.store.models import Draft

    with Store.open() as db:
        project = projects.resolve(db, str(home)).project
        records.add(db, Draft(type="decision", title="Use word", body="word"),
                    project_id=project.id)
        vectors.save(db, "m", [(item, np.ones(1, dtype=np.float32))
                               for item in vectors.pending(db)])
        vecside_build.build(db, "m")
    ready = doctor.check_semantic_check(config.Config.load())
    assert ready.status == "ok" and ready.detail.startswith("on (m); the hook also finds "
                                                            "records by meaning"), ready
    side.unlink()
    stale = doctor.check_semantic_check(config.Config.load())
    assert stale.status == "warn" and "missing or stale" in stale.detail
    monkeypatch.setenv("AGENTCTX_PROMPT_SEMANTIC_CHECK", "off")
    assert doctor.check_semantic_check(config.Config.load()).detail.startswith("off")


@pytest.mark.parametrize(("mode", "status"), [(0o700, "ok"), (0o750, "ok"), (0o770, "warn"),
                                              (0o777, "warn")])
def test_a_home_others_can_write_is_a_warning(home: Path, mode: int, status: str) -> None:
    agentctx_home = config.ensure_home()
    agentctx_home.chmod(mode)
    try:
        check = doctor.check_home()
    finally:
        agentctx_home.chmod(0o700)
    assert check.status == status, check
    if status == "warn":
        assert check.fix == f"chmod 700 {agentctx_home}"
        assert oct(mode)[2:] in check.detail


def test_a_store_others_can_read_is_a_warning(home: Path) -> None:
    Store.open().close()
    config.db_path().chmod(0o644)
    check = doctor.check_home()
    assert check.status == "warn" and "agentctx.db" in check.detail
    assert check.fix.startswith("chmod 600 ")
    report = json.loads(run_cli("doctor", "--json", "--quick").stdout)
    assert [c["status"] for c in report["checks"] if c["name"] == "home"] == ["warn"]


def test_a_store_whose_middle_is_random_bytes_is_not_ok(home: Path) -> None:
    import random

    with Store.open() as db:
        pid = projects.resolve(db, str(home)).project.id
        with db.write():
            for n in range(1500):
                records.add(db, Draft(type="discovery", title=f"Note {n}",
                                      body=f"finding {n} " * 40), project_id=pid)
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    assert doctor.check_store().status == "ok"
    path = config.db_path()
    size = path.stat().st_size
    with path.open("r+b") as handle:  # two pages in the middle (record bodies) become noise
        handle.seek(size // 2 // 4096 * 4096)
        handle.write(random.Random(7).randbytes(2 * 4096))
    check = doctor.check_store()
    assert check.status == "fail" and "damaged" in check.detail, check
    assert "backup" in check.fix


def test_a_store_that_is_not_a_database_is_one_failing_check_among_the_others(
        home: Path) -> None:
    """A store whose file is noise: doctor still runs every check (hooks, MCP, …) and says
    so on the store's line, instead of stopping at the first check that opens it."""
    assert run_cli("init", "--yes").returncode == 0
    path = config.db_path()
    path.write_bytes(b"\x00garbage" * 4096)
    done = run_cli("doctor", "--quick")
    assert done.returncode == 1 and done.stderr == "", done.stderr
    lines = {line.split(":")[0]: line for line in done.stdout.splitlines()}
    assert lines["fail  store"].count(".agentctx/agentctx.db") == 1, lines["fail  store"]
    assert "not an agentctx store" in lines["fail  store"]
    for name in ("python", "sqlite", "config", "home", "embedding model", "hooks", "mcp"):
        assert any(key.endswith(f"  {name}") for key in lines), (name, done.stdout)
    assert sum(line.startswith("fail") for line in lines.values()) == 1, done.stdout


def test_a_registration_of_the_agentctx_script_is_a_warning_until_init_upgrades_it(
        home: Path) -> None:
    apply_init(plan_init("user", claude=False))
    settings = home / ".claude" / "settings.json"
    data = load(settings)
    for groups in data["hooks"].values():  # as an earlier agentctx registered them
        handler = groups[0]["hooks"][0]
        handler["command"] = f"{LAUNCHER} hook {handler['command'].rsplit(' ', 1)[1]}"
    settings.write_text(json.dumps(data), encoding="utf-8")
    hooks, _ = doctor.check_hooks()
    assert hooks.status == "warn" and "PYTHONPATH" in hooks.detail
    apply_init(plan_init("user", claude=False))
    assert doctor.check_hooks()[0].status == "ok"


@pytest.mark.parametrize(("files", "detail"), [
    ({}, "drift reads no file yet: the project has no CLAUDE.md or AGENTS.md yet"),
    ({"AGENTS.md": "# Agents\n"}, "drift reads AGENTS.md: the project has no CLAUDE.md, so "
     "Claude Code (2.1.277 and later) reads AGENTS.md instead"),
    ({"CLAUDE.md": "# App\n", "AGENTS.md": "# Agents\n"}, "drift reads CLAUDE.md: Claude Code "
     "reads CLAUDE.md; AGENTS.md is not read, as CLAUDE.md does not import it"),
    ({"CLAUDE.md": "@AGENTS.md\n", "AGENTS.md": "# Agents\n"}, "drift reads CLAUDE.md: Claude "
     "Code reads CLAUDE.md, and AGENTS.md through it"),
])
def test_doctor_says_which_memory_file_drift_reads_and_why(
        home: Path, project_dir: Path, files: dict[str, str], detail: str) -> None:
    for name, text in files.items():
        (project_dir / name).write_text(text, encoding="utf-8")
    done = run_cli("doctor", "--json", "--quick", cwd=project_dir / "src")
    check = _by_name(json.loads(done.stdout)["checks"])["memory file"]
    assert check["status"] == "ok" and check["detail"].startswith(detail)

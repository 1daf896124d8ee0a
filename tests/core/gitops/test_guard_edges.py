"""The reviewer guard on the worktrees a hostile reviewer makes awkward: links, odd file names, modes, the
index, HEAD moved or detached, a repository without commits, a snapshot that names a path outside."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from tunaflow_tui.core.gitops import GitError, create_worktree, fingerprint, restore, snapshot
from tunaflow_tui.core.gitops.guard import Fingerprint, Snapshot
from tunaflow_tui.core.gitops.guard import restore_files as gitops_restore_files


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True).stdout.strip()


def _committed(repo: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).write_text(text, encoding="utf-8")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "work")


def _worktree(git_repo: Path, tmp_path: Path) -> Path:
    wt = create_worktree(git_repo, "tunaflow/edges", "main", tmp_path / "wt")
    _committed(wt, {"docs/guide.md": "guide\n", "src/app.py": "print('hi')\n"})
    return wt


def test_links_are_kept_as_links_and_a_file_made_a_link_or_a_folder_comes_back(
        git_repo: Path, tmp_path: Path) -> None:
    wt = _worktree(git_repo, tmp_path)
    os.symlink("docs/guide.md", wt / "latest")
    _committed(wt, {})
    before = fingerprint(wt)
    snap = snapshot(wt)
    (wt / "latest").unlink()
    os.symlink("/nowhere/at/all", wt / "latest")  # dangling: exists() is False, yet the name is taken
    (wt / "src" / "app.py").unlink()
    os.symlink(tmp_path, wt / "src" / "app.py")
    (wt / "docs" / "guide.md").unlink()
    (wt / "docs" / "guide.md").mkdir()
    (wt / "docs" / "guide.md" / "inside.txt").write_text("x\n", encoding="utf-8")
    assert restore(wt, snap) == ["docs/guide.md", "docs/guide.md/inside.txt", "latest", "src/app.py"]
    assert os.readlink(wt / "latest") == "docs/guide.md"
    assert not (wt / "src" / "app.py").is_symlink()
    assert (wt / "src" / "app.py").read_text(encoding="utf-8") == "print('hi')\n"
    assert (wt / "docs" / "guide.md").read_text(encoding="utf-8") == "guide\n"
    assert fingerprint(wt) == before


def test_names_with_a_newline_or_bytes_that_are_not_utf8_are_restored(git_repo: Path, tmp_path: Path) -> None:
    wt = _worktree(git_repo, tmp_path)
    newline = "odd\nname.txt"
    latin = os.fsdecode(b"caf\xe9.txt")  # a Latin-1 name: not UTF-8, held with surrogate escapes
    (wt / newline).write_text("one\n", encoding="utf-8")
    (wt / latin).write_text("two\n", encoding="utf-8")
    _committed(wt, {})
    before = fingerprint(wt)
    assert {newline, latin} <= set(before.files)
    snap = snapshot(wt)
    (wt / newline).write_text("changed\n", encoding="utf-8")
    (wt / latin).write_text("changed\n", encoding="utf-8")
    assert sorted(restore(wt, snap)) == sorted([newline, latin])
    assert (wt / newline).read_text(encoding="utf-8") == "one\n"
    assert (wt / latin).read_text(encoding="utf-8") == "two\n"
    assert fingerprint(wt) == before


def test_modes_come_back_exactly(git_repo: Path, tmp_path: Path) -> None:
    wt = _worktree(git_repo, tmp_path)
    (wt / "run.sh").write_text("#!/bin/sh\n", encoding="utf-8")
    os.chmod(wt / "run.sh", 0o755)
    os.chmod(wt / "src" / "app.py", 0o644)
    _committed(wt, {})
    snap = snapshot(wt)
    (wt / "run.sh").write_text("#!/bin/sh\nrm -rf /\n", encoding="utf-8")
    os.chmod(wt / "run.sh", 0o600)
    (wt / "src" / "app.py").write_text("import os\n", encoding="utf-8")
    os.chmod(wt / "src" / "app.py", 0o777)
    restore(wt, snap)
    assert (wt / "run.sh").stat().st_mode & 0o777 == 0o755
    assert (wt / "src" / "app.py").stat().st_mode & 0o777 == 0o644


def test_in_the_main_checkout_a_staged_change_and_a_deleted_index_come_back(git_repo: Path) -> None:
    (git_repo / "staged.txt").write_text("staged by the developer\n", encoding="utf-8")
    git(git_repo, "add", "staged.txt")
    staged = git(git_repo, "diff", "--cached", "--name-only")
    snap = snapshot(git_repo)
    git(git_repo, "reset", "-q")  # the reviewer unstages it: only the index changes
    assert fingerprint(git_repo) != snap.fingerprint, "a change to the index alone is noticed"
    restore(git_repo, snap)
    assert git(git_repo, "diff", "--cached", "--name-only") == staged == "staged.txt"
    (git_repo / ".git" / "index").unlink()
    restore(git_repo, snap)
    assert git(git_repo, "diff", "--cached", "--name-only") == "staged.txt"
    assert fingerprint(git_repo) == snap.fingerprint


def test_a_repository_without_commits_or_index_is_guarded_too(tmp_path: Path) -> None:
    repo = tmp_path / "fresh"
    subprocess.run(["git", "init", "-q", "-b", "main", str(repo)], check=True)
    (repo / "draft.md").write_text("draft\n", encoding="utf-8")
    snap = snapshot(repo)
    assert snap.fingerprint.head is None and snap.index_bytes is None
    (repo / "draft.md").write_text("rewritten\n", encoding="utf-8")
    (repo / "extra.md").write_text("new\n", encoding="utf-8")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "reviewer's first commit")
    assert restore(repo, snap) == ["draft.md", "extra.md"]
    assert (repo / "draft.md").read_text(encoding="utf-8") == "draft\n" and not (repo / "extra.md").exists()


def test_a_branch_switch_and_a_detached_head_are_put_back(git_repo: Path, tmp_path: Path) -> None:
    wt = _worktree(git_repo, tmp_path)
    tip = git(wt, "rev-parse", "HEAD")
    snap = snapshot(wt)
    git(wt, "checkout", "-q", "-b", "reviewer-branch")
    restore(wt, snap)
    assert git(wt, "symbolic-ref", "--short", "HEAD") == "tunaflow/edges"
    assert git(wt, "rev-parse", "HEAD") == tip
    git(wt, "checkout", "-q", "--detach", "HEAD")
    detached = snapshot(wt)
    _committed(wt, {"sneaky.py": "x = 1\n"})
    restore(wt, detached)
    assert git(wt, "rev-parse", "HEAD") == tip
    assert subprocess.run(["git", "-C", str(wt), "symbolic-ref", "-q", "HEAD"], capture_output=True).returncode == 1
    assert fingerprint(wt) == detached.fingerprint


def test_a_branch_made_an_alias_of_main_is_put_back_without_moving_main(git_repo: Path, tmp_path: Path) -> None:
    wt = _worktree(git_repo, tmp_path)
    main, tip = git(git_repo, "rev-parse", "main"), git(wt, "rev-parse", "HEAD")
    snap = snapshot(wt)
    git(wt, "symbolic-ref", "refs/heads/tunaflow/edges", "refs/heads/main")  # HEAD now reaches main through it

    restore(wt, snap)

    assert git(git_repo, "rev-parse", "main") == main, "putting the reviewer's worktree back moved main"
    assert git(git_repo, "rev-parse", "tunaflow/edges") == tip
    assert subprocess.run(["git", "symbolic-ref", "-q", "refs/heads/tunaflow/edges"], cwd=git_repo).returncode == 1
    assert git(wt, "symbolic-ref", "HEAD") == "refs/heads/tunaflow/edges"

def test_a_folder_swapped_for_a_link_under_an_ignored_name_is_not_written_through(
        git_repo: Path, tmp_path: Path) -> None:
    wt = _worktree(git_repo, tmp_path)
    (wt / ".gitignore").write_text("docs\n", encoding="utf-8")  # the tracked docs/guide.md stays tracked
    _committed(wt, {})
    outside = tmp_path / "outside"
    outside.mkdir()
    snap = snapshot(wt)
    shutil.rmtree(wt / "docs")
    os.symlink(outside, wt / "docs")  # ignored: never listed as a new path to remove
    restore(wt, snap)
    assert list(outside.iterdir()) == []
    assert (wt / "docs").is_dir() and not (wt / "docs").is_symlink()
    assert (wt / "docs" / "guide.md").read_text(encoding="utf-8") == "guide\n"


def test_new_folders_go_once_their_last_new_file_is_gone(git_repo: Path, tmp_path: Path) -> None:
    wt = _worktree(git_repo, tmp_path)
    snap = snapshot(wt)
    (wt / "notes" / "deep").mkdir(parents=True)
    for rel in ("notes/a.md", "notes/b.md", "notes/deep/c.md", "docs/new.md"):
        (wt / rel).write_text("reviewer\n", encoding="utf-8")
    restore(wt, snap)
    assert not (wt / "notes").exists() and not (wt / "docs" / "new.md").exists()
    assert (wt / "docs" / "guide.md").exists()
    assert fingerprint(wt) == snap.fingerprint


def test_a_snapshot_naming_a_path_outside_the_worktree_is_refused(git_repo: Path, tmp_path: Path) -> None:
    wt = _worktree(git_repo, tmp_path)
    snap = snapshot(wt)
    entry, blob = snap.fingerprint.files["src/app.py"], snap.blobs["src/app.py"]
    for rel in ("../escaped.txt", "src/../../escaped.txt"):
        forged = Snapshot(worktree=snap.worktree,
                          fingerprint=Fingerprint(head=snap.fingerprint.head, branch=snap.fingerprint.branch,
                                                  status=snap.fingerprint.status,
                                                  files={**snap.fingerprint.files, rel: entry}),
                          blobs={**snap.blobs, rel: blob}, index_bytes=snap.index_bytes)
        refused = f"refusing to restore a path outside the worktree: {rel!r}"
        with pytest.raises(GitError, match=f"^{re.escape(refused)}$"):
            restore(wt, forged)
        assert not (tmp_path / "escaped.txt").exists()


def test_a_snapshot_is_restored_only_into_its_own_worktree(git_repo: Path, tmp_path: Path) -> None:
    wt = _worktree(git_repo, tmp_path)
    expected = f"snapshot was taken of {git_repo.resolve()}, not {wt.resolve()}"
    with pytest.raises(GitError, match=f"^{re.escape(expected)}$"):
        restore(wt, snapshot(git_repo))


def test_fingerprints_hash_like_they_compare(git_repo: Path, tmp_path: Path) -> None:
    wt = _worktree(git_repo, tmp_path)
    first = fingerprint(wt)
    assert hash(first) == hash(fingerprint(wt))
    (wt / "src" / "app.py").write_text("changed\n", encoding="utf-8")
    assert hash(fingerprint(wt)) != hash(first)


def test_a_write_back_that_fails_leaves_no_temporary_file(git_repo: Path, tmp_path: Path,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    wt = _worktree(git_repo, tmp_path)
    snap = snapshot(wt)
    (wt / "src" / "app.py").write_text("changed\n", encoding="utf-8")

    def full_disk(*args: object) -> None:
        raise OSError("No space left on device")

    monkeypatch.setattr(os, "replace", full_disk)
    with pytest.raises(OSError, match="No space left"):
        restore(wt, snap)
    monkeypatch.undo()
    assert sorted(p.name for p in (wt / "src").iterdir()) == ["app.py"]
    restore(wt, snap)
    assert (wt / "src" / "app.py").read_text(encoding="utf-8") == "print('hi')\n"


def test_restoring_files_leaves_alone_what_it_is_told_to_skip_and_only_that(git_repo: Path, tmp_path: Path) -> None:
    """How the user's main tree is put back after a plan's turn: files another plan's work owns are skipped."""
    wt = _worktree(git_repo, tmp_path)
    snap = snapshot(wt)
    (wt / "docs" / "guide.md").write_text("the agent's edit\n")
    (wt / "src" / "app.py").write_text("print('agent')\n")
    (wt / "src" / "new.py").write_text("agent's new file\n")
    (wt / "docs" / "new.md").write_text("agent's new doc\n")
    changed = gitops_restore_files(wt, snap, skip=lambda rel: rel.startswith("docs/"))
    assert sorted(changed) == ["src/app.py", "src/new.py"]
    assert (wt / "src" / "app.py").read_text() == "print('hi')\n" and not (wt / "src" / "new.py").exists()
    assert (wt / "docs" / "guide.md").read_text() == "the agent's edit\n", "skipped: left as it is"
    assert (wt / "docs" / "new.md").read_text() == "agent's new doc\n"

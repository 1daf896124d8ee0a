"""tunaflow's own git runs nothing an agent planted in the repository's configuration or hooks.

A repository whose local configuration names an fsmonitor, a clean/smudge filter, an external
diff, a textconv, a pager and a signing program, and whose hooks directory has every hook git
runs on commit, checkout and merge — each writing a marker. tunaflow's status, fingerprint,
snapshot, diff, commit, worktree add/remove and merge leave no marker; plain git, run afterwards
in the same repository, does (so the plants are live).
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from tunaflow_tui.core.gitops import (
    commit_all,
    create_worktree,
    diff_against_base,
    diff_stat,
    fingerprint,
    is_clean,
    merge_branch,
    remove_worktree,
    snapshot,
)
from tunaflow_tui.core.gitops.runner import git_env, program_pins, run_git
from tunaflow_tui.core.gitops.shared import changed_shared, read_shared, restore_shared

HOOKS = ("pre-commit", "commit-msg", "post-commit", "post-checkout", "pre-merge-commit", "post-merge",
         "reference-transaction", "prepare-commit-msg", "post-index-change")


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True).stdout


def plant(repo: Path, markers: Path) -> None:
    """Configuration and hooks that each leave a marker named after what ran."""
    scripts = markers.parent / "planted"
    scripts.mkdir()
    markers.mkdir()

    def script(name: str, tail: str = "") -> str:
        path = scripts / name
        path.write_text(f"#!/bin/sh\ntouch '{markers}/{name}'\n{tail}\n", encoding="utf-8")
        path.chmod(0o755)
        return str(path)

    for key, value in (
        ("core.fsmonitor", script("fsmonitor")),
        ("filter.evil.clean", script("clean-filter", "cat")),
        ("filter.evil.smudge", script("smudge-filter", "cat")),
        ("diff.external", script("diff-external")),
        ("diff.evil.textconv", script("textconv", 'cat "$1"')),
        ("core.pager", script("pager", "cat")),
        ("pager.diff", script("pager-diff", "cat")),
        ("gpg.program", script("gpg")),
        ("core.askPass", script("askpass")),
    ):
        git(repo, "config", key, value)
    (repo / ".git" / "info").mkdir(exist_ok=True)
    (repo / ".git" / "info" / "attributes").write_text("* filter=evil diff=evil\n", encoding="utf-8")
    for name in HOOKS:
        hook = repo / ".git" / "hooks" / name
        hook.write_text(f"#!/bin/sh\ntouch '{markers}/hook-{name}'\n", encoding="utf-8")
        hook.chmod(0o755)


def test_tunaflows_git_runs_nothing_planted_in_the_local_config_or_hooks(git_repo: Path, tmp_path: Path) -> None:
    markers = tmp_path / "markers"
    plant(git_repo, markers)

    wt = create_worktree(git_repo, "tunaflow/p", "main", tmp_path / "wt")
    (wt / "mul.py").write_text("def mul(a, b):\n    return a * b\n", encoding="utf-8")
    (wt / "README.md").write_text("# sample\n\nwith mul\n", encoding="utf-8")
    fingerprint(wt)
    snapshot(wt)
    assert "mul" in diff_against_base(wt, "main")
    diff_stat(wt, "main")
    run_git(["show", "HEAD"], wt)
    run_git(["log", "-p", "-1"], wt)
    assert commit_all(wt, "tunaflow: mul") is not None
    assert is_clean(git_repo, include_untracked=False)
    result = merge_branch(git_repo, "tunaflow/p", "main")
    assert result.kind == "fast-forward"
    remove_worktree(git_repo, wt)

    assert sorted(p.name for p in markers.iterdir()) == []

    # the same operations by plain git run the plants: the test would catch a regression
    git(git_repo, "status")
    (git_repo / "README.md").write_text("changed\n", encoding="utf-8")
    git(git_repo, "diff")
    git(git_repo, "commit", "-qam", "by the user")
    ran = {p.name for p in markers.iterdir()}
    assert {"fsmonitor", "clean-filter", "diff-external", "hook-pre-commit", "hook-post-commit"} <= ran


def test_a_non_fast_forward_merge_runs_no_planted_hook_or_filter(git_repo: Path, tmp_path: Path) -> None:
    wt = create_worktree(git_repo, "tunaflow/q", "main", tmp_path / "wt")
    (wt / "q.py").write_text("q = 1\n", encoding="utf-8")
    commit_all(wt, "tunaflow: q")
    (git_repo / "other.txt").write_text("the user's own work\n", encoding="utf-8")
    git(git_repo, "add", "other.txt")
    git(git_repo, "commit", "-qm", "user work")
    markers = tmp_path / "markers"
    plant(git_repo, markers)

    result = merge_branch(git_repo, "tunaflow/q", "main")

    assert result.kind == "merge-commit", result
    assert (git_repo / "q.py").read_text() == "q = 1\n"
    assert sorted(p.name for p in markers.iterdir()) == []


def test_inherited_git_variables_do_not_redirect_tunaflows_git(git_repo: Path, tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    elsewhere = tmp_path / "elsewhere"
    git(tmp_path, "init", "-q", str(elsewhere))
    monkeypatch.setenv("GIT_DIR", str(elsewhere / ".git"))
    monkeypatch.setenv("GIT_CONFIG_PARAMETERS", "'core.fsmonitor'='touch /nonexistent'")
    monkeypatch.setenv("GIT_EXTERNAL_DIFF", "false")
    env = git_env()
    assert "GIT_DIR" not in env and "GIT_CONFIG_PARAMETERS" not in env and "GIT_EXTERNAL_DIFF" not in env
    assert env["GIT_AUTHOR_NAME"] == os.environ["GIT_AUTHOR_NAME"]
    # git_repo's own commit, not the empty repository GIT_DIR names
    assert run_git(["rev-parse", "HEAD"], git_repo).returncode == 0


def test_a_global_config_named_by_git_config_global_is_watched_and_put_back(
        git_repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    chosen = tmp_path / "my-gitconfig"
    chosen.write_text("[user]\n\tname = Me\n", encoding="utf-8")
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(chosen))
    before = read_shared(git_repo)
    subprocess.run(["git", "config", "--global", "core.fsmonitor", "touch /tmp/planted"], cwd=git_repo, check=True)
    changed = changed_shared(before)
    assert changed == [str(chosen)]
    restored, failed = restore_shared(before)
    assert (restored, failed) == ([str(chosen)], [])
    assert chosen.read_text(encoding="utf-8") == "[user]\n\tname = Me\n"


def test_repository_only_programs_are_reset_to_the_users_own_and_git_lfs_is_kept(
        git_repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    mine = tmp_path / "gitconfig"
    mine.write_text("[gpg]\n\tprogram = /opt/my/gpg\n", encoding="utf-8")
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(mine))
    git(git_repo, "config", "gpg.program", "/tmp/evil-gpg")
    git(git_repo, "config", "filter.evil.clean", "/tmp/evil-clean")
    git(git_repo, "config", "remote.origin.uploadpack", "/tmp/evil-upload")
    git(git_repo, "config", "filter.lfs.clean", "git-lfs clean -- %f")  # as `git lfs install --local` writes it
    git(git_repo, "config", "filter.lfs.process", "git-lfs filter-process")

    pins = program_pins(git_repo)

    assert set(pins[1::2]) == {
        "filter.evil.clean=", "gpg.program=/opt/my/gpg", "remote.origin.uploadpack=git-upload-pack"}
    assert set(pins[0::2]) == {"-c"}

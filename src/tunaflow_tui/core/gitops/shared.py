"""The part of a repository every worktree shares and no agent should change: hooks and configuration.

A worktree's ``.git`` is a pointer into the main repository's git directory, so an agent working in
its own worktree can still write ``.git/hooks/post-commit`` or ``.git/config`` for the whole
repository (and for the user's next commit), and ``git config --global`` writes the user's own
configuration, read by every git on the machine. :func:`read_shared` records those files exactly;
:func:`restore_shared` puts them back and says what it changed.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
import stat
import tempfile
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from tunaflow_tui.core.gitops.runner import git_text, run_git

MAX_KEPT_BYTES = 4 << 20  # content kept for restoring; beyond it a change is reported, not undone
_LINK = 0o120000


@dataclass(frozen=True)
class SharedEntry:
    """One file: its mode (``0o120000`` for a symlink), a digest, and its bytes (None if too big)."""

    mode: int
    digest: str
    data: bytes | None


@dataclass(frozen=True)
class SharedState:
    """The watched directories and files of a repository's shared git directory, as they were."""

    directories: tuple[Path, ...]
    files: tuple[Path, ...]
    entries: Mapping[str, SharedEntry]  # absolute path -> entry

    def display(self, path: str) -> str:
        """``path`` as the user knows it: ``.git/hooks/post-commit``, ``~/.gitconfig``."""
        common = self.directories[0].parent
        try:
            rel = Path(path).relative_to(common)
        except ValueError:
            home = Path(os.path.expanduser("~"))
            with contextlib.suppress(ValueError):
                return f"~/{Path(path).relative_to(home).as_posix()}"
            return path
        return f"{common.name if common.name == '.git' else common}/{rel.as_posix()}"


def global_config_files() -> tuple[Path, ...]:
    """The user's global git configuration files, as git finds them in this process's environment.

    ``GIT_CONFIG_GLOBAL`` when set (git then reads only it), else ``~/.gitconfig`` and
    ``$XDG_CONFIG_HOME/git/config`` (``~/.config/git/config``). Files that do not exist yet are
    listed too: an agent creating one is a change.
    """
    chosen = os.environ.get("GIT_CONFIG_GLOBAL")
    if chosen:
        return (Path(os.path.expanduser(chosen)).absolute(),)
    home = Path(os.path.expanduser("~"))
    xdg = os.environ.get("XDG_CONFIG_HOME") or str(home / ".config")
    return (home / ".gitconfig", Path(xdg) / "git" / "config")


def _absolute(base: Path, raw: str) -> Path:
    path = Path(raw)
    return (path if path.is_absolute() else base / path).resolve()


def watched_paths(repo: Path, worktree: Path | None) -> tuple[tuple[Path, ...], tuple[Path, ...]]:
    """The shared hook directories and configuration files of the repository at ``repo``.

    The common git directory's ``hooks`` and ``config`` (plus ``config.worktree`` files), an
    absolute ``core.hooksPath`` outside the working trees, and the user's global configuration. A relative ``core.hooksPath`` (``.husky``)
    lies inside each working tree: it is project code, covered by the worktree's own fingerprint.
    """
    repo = Path(repo)
    common = _absolute(repo, git_text(["rev-parse", "--git-common-dir"], repo))
    directories = [common / "hooks"]
    files = [common / "config", common / "config.worktree"]
    proc = run_git(["config", "--get", "core.hooksPath"], repo, check=False)
    configured = proc.stdout.decode("utf-8", "surrogateescape").strip()
    if configured:
        hooks_path = Path(os.path.expanduser(configured))
        if hooks_path.is_absolute():
            hooks_path = hooks_path.resolve()
            trees = [repo.resolve(), *([Path(worktree).resolve()] if worktree else [])]
            if not any(hooks_path == t or t in hooks_path.parents for t in trees) and hooks_path not in directories:
                directories.append(hooks_path)
    if worktree is not None:
        own = _absolute(Path(worktree), git_text(["rev-parse", "--git-dir"], Path(worktree)))
        if own != common:
            files.append(own / "config.worktree")
    files += [f for f in global_config_files() if f not in files]
    return tuple(directories), tuple(files)


def _entry(path: Path, budget: list[int]) -> SharedEntry | None:
    try:
        st = path.lstat()
    except OSError:
        return None
    if stat.S_ISLNK(st.st_mode):
        data = os.fsencode(os.readlink(path))
        mode = _LINK
    elif stat.S_ISREG(st.st_mode):
        mode = stat.S_IMODE(st.st_mode)
        if st.st_size > budget[0]:
            digest = hashlib.sha256()
            with path.open("rb") as fh:
                while chunk := fh.read(1 << 20):
                    digest.update(chunk)
            return SharedEntry(mode, digest.hexdigest(), None)
        data = path.read_bytes()
    else:
        return None
    budget[0] -= len(data)
    return SharedEntry(mode, hashlib.sha256(data).hexdigest(), data)


def _walk(directory: Path) -> Iterable[Path]:
    if not directory.is_dir() or directory.is_symlink():
        return
    for dirpath, dirnames, filenames in os.walk(directory):
        dirnames.sort()
        here = Path(dirpath)
        # a symlinked directory is one entry (its link), never followed
        for name in sorted(filenames) + [d for d in dirnames if (here / d).is_symlink()]:
            yield here / name


def _collect(directories: tuple[Path, ...], files: tuple[Path, ...]) -> SharedState:
    budget = [MAX_KEPT_BYTES]
    entries: dict[str, SharedEntry] = {}
    for path in [p for d in directories for p in _walk(d)] + list(files):
        entry = _entry(path, budget)
        if entry is not None:
            entries[str(path)] = entry
    return SharedState(directories, files, entries)


def read_shared(repo: Path, worktree: Path | None = None) -> SharedState:
    """Record the shared hooks and configuration of the repository (see :func:`watched_paths`)."""
    return _collect(*watched_paths(repo, worktree))


def changed_shared(before: SharedState) -> list[str]:
    """Paths (absolute) under ``before``'s watch that were created, deleted or changed since."""
    now = _collect(before.directories, before.files)
    keys = set(before.entries) | set(now.entries)
    return sorted(
        k for k in keys
        if (before.entries.get(k) is None) != (now.entries.get(k) is None)
        or (k in before.entries and k in now.entries
            and (before.entries[k].digest, before.entries[k].mode) != (now.entries[k].digest, now.entries[k].mode))
    )


def _write(path: Path, entry: SharedEntry) -> None:
    assert entry.data is not None
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    elif path.is_symlink() or path.exists():
        path.unlink()
    if entry.mode == _LINK:
        os.symlink(os.fsdecode(entry.data), path)
        return
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tunaflow-restore-")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(entry.data)
        os.chmod(tmp, entry.mode)
        os.replace(tmp, path)
    except BaseException:
        if os.path.lexists(tmp):
            os.unlink(tmp)
        raise


def _remove(path: Path, roots: tuple[Path, ...]) -> None:
    if path.is_symlink() or path.is_file():
        path.unlink()
    elif path.is_dir():
        shutil.rmtree(path)
    parent = path.parent
    while parent not in roots and any(parent == r or r in parent.parents for r in roots):
        try:
            parent.rmdir()  # only when empty: a directory the agent made for its file
        except OSError:
            return
        parent = parent.parent


def restore_shared(before: SharedState) -> tuple[list[str], list[str]]:
    """Put every watched file back as ``before`` recorded it.

    Returns ``(restored, failed)``: the paths put back (new files removed, changed or deleted ones
    rewritten) and the paths that could not be (content too big to have been kept, or an OS error).
    """
    restored: list[str] = []
    failed: list[str] = []
    for key in changed_shared(before):
        path = Path(key)
        entry = before.entries.get(key)
        try:
            if entry is None:
                _remove(path, before.directories)
            elif entry.data is None:
                failed.append(key)
                continue
            else:
                _write(path, entry)
        except OSError:
            failed.append(key)
            continue
        restored.append(key)
    return restored, failed

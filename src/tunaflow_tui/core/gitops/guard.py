"""Reviewer guard: fingerprint a worktree, snapshot it, and put it back exactly if a reviewer touched it."""

from __future__ import annotations

import hashlib
import os
import shutil
import stat
import tempfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from tunaflow_tui.core.gitops.repo import current_branch, has_commits, head_sha, status_porcelain
from tunaflow_tui.core.gitops.runner import GitError, git_text, identity_args, run_git

_CHUNK = 1 << 20


@dataclass(frozen=True)
class Fingerprint:
    """The observable state of a worktree: HEAD, ``git status`` and a digest of every non-ignored file.

    ``files`` maps a repository-relative path to ``"{mode}:{sha256}"`` (mode 100644, 100755 or 120000).
    Two fingerprints compare equal exactly when nothing observable changed.
    """

    head: str | None
    branch: str | None
    status: str
    files: Mapping[str, str] = field(hash=False)

    def __hash__(self) -> int:
        return hash((self.head, self.branch, self.status, tuple(sorted(self.files.items()))))


@dataclass(frozen=True)
class Snapshot:
    """Enough to restore a worktree: its fingerprint, a git blob per file, and the index bytes."""

    worktree: Path
    fingerprint: Fingerprint
    blobs: Mapping[str, str]  # path -> blob SHA of the raw file bytes (or link target)
    index_bytes: bytes | None


def _listed_files(worktree: Path) -> list[str]:
    out = run_git(
        ["ls-files", "-z", "--cached", "--others", "--exclude-standard"], worktree
    ).stdout.decode("utf-8", "surrogateescape")
    return sorted({p for p in out.split("\0") if p})


def _file_entry(path: Path) -> str | None:
    """``mode:sha256`` for a file or symlink; None for anything else (missing, directory, socket)."""
    try:
        st = path.lstat()
    except OSError:
        return None
    digest = hashlib.sha256()
    if stat.S_ISLNK(st.st_mode):
        digest.update(os.fsencode(os.readlink(path)))
        return f"120000:{digest.hexdigest()}"
    if not stat.S_ISREG(st.st_mode):
        return None
    with path.open("rb") as fh:
        while chunk := fh.read(_CHUNK):
            digest.update(chunk)
    mode = "100755" if st.st_mode & stat.S_IXUSR else "100644"
    return f"{mode}:{digest.hexdigest()}"


def fingerprint(worktree: Path) -> Fingerprint:
    """Fingerprint ``worktree`` (``.git`` and ignored files excluded; untracked files included)."""
    worktree = Path(worktree)
    files: dict[str, str] = {}
    for rel in _listed_files(worktree):
        entry = _file_entry(worktree / rel)
        if entry is not None:
            files[rel] = entry
    head = head_sha(worktree) if has_commits(worktree) else None
    return Fingerprint(head=head, branch=current_branch(worktree), status=status_porcelain(worktree), files=files)


def changed_paths(before: Fingerprint, after: Fingerprint) -> list[str]:
    """Paths created, deleted or modified (content or mode) between two fingerprints, sorted."""
    keys = set(before.files) | set(after.files)
    return sorted(k for k in keys if before.files.get(k) != after.files.get(k))


def _index_path(worktree: Path) -> Path:
    raw = git_text(["rev-parse", "--git-path", "index"], worktree)
    return Path(raw) if Path(raw).is_absolute() else worktree / raw


def snapshot(worktree: Path) -> Snapshot:
    """Record ``worktree`` so that ``restore`` can bring it back; file bytes go to the object store."""
    worktree = Path(worktree).resolve()
    fp = fingerprint(worktree)
    blobs: dict[str, str] = {}
    batch = [rel for rel, entry in fp.files.items() if not entry.startswith("120000:") and "\n" not in rel]
    if batch:
        listing = "".join(f"{rel}\n" for rel in batch).encode("utf-8", "surrogateescape")
        proc = run_git(["hash-object", "-w", "--no-filters", "--stdin-paths"], worktree, input_bytes=listing)
        shas = proc.stdout.decode("ascii").split()
        if len(shas) != len(batch):
            raise GitError(f"could not snapshot {worktree}: git stored {len(shas)} of {len(batch)} files")
        blobs.update(zip(batch, shas, strict=True))
    for rel, entry in fp.files.items():
        if rel in blobs:
            continue
        full = worktree / rel
        data = os.fsencode(os.readlink(full)) if entry.startswith("120000:") else full.read_bytes()
        proc = run_git(["hash-object", "-w", "--no-filters", "--stdin"], worktree, input_bytes=data)
        blobs[rel] = proc.stdout.decode("ascii").strip()
    index = _index_path(worktree)
    index_bytes = index.read_bytes() if index.exists() else None
    return Snapshot(worktree=worktree, fingerprint=fp, blobs=blobs, index_bytes=index_bytes)


def _remove_path(path: Path) -> None:
    if path.is_symlink() or path.is_file():
        path.unlink()
    elif path.is_dir():
        shutil.rmtree(path)


def _prepare_parent(root: Path, rel: str) -> Path:
    """Make every parent of ``rel`` a real directory inside ``root`` (links and files in the way go)."""
    current = root
    parts = Path(rel).parts
    if Path(rel).is_absolute() or ".." in parts:
        raise GitError(f"refusing to restore a path outside the worktree: {rel!r}")
    for part in parts[:-1]:
        current = current / part
        if current.is_symlink() or (current.exists() and not current.is_dir()):
            current.unlink()
        if not current.exists():
            current.mkdir()
    return current / parts[-1]


def _write_back(root: Path, rel: str, entry: str, blob: str) -> None:
    target = _prepare_parent(root, rel)
    data = run_git(["cat-file", "blob", blob], root).stdout
    if target.is_dir() and not target.is_symlink():
        shutil.rmtree(target)
    mode = entry.split(":", 1)[0]
    if mode == "120000":
        if target.is_symlink() or target.exists():
            target.unlink()
        os.symlink(os.fsdecode(data), target)
        return
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=".tunaflow-restore-")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.chmod(tmp, 0o755 if mode == "100755" else 0o644)
        os.replace(tmp, target)
    except BaseException:
        if os.path.lexists(tmp):
            os.unlink(tmp)
        raise


def _prune_empty_dirs(root: Path, rel: str, keep: set[str]) -> None:
    parent = (root / rel).parent
    while parent != root and root in parent.parents:
        rel_dir = parent.relative_to(root).as_posix()
        if rel_dir in keep or not parent.is_dir() or parent.is_symlink() or any(parent.iterdir()):
            return
        parent.rmdir()
        parent = parent.parent


def restore_files(worktree: Path, snap: Snapshot, *, skip: Callable[[str], bool] | None = None) -> list[str]:
    """Put ``worktree``'s files back as in ``snap`` (edits reverted, new files deleted, deleted ones back).

    HEAD and the index are left as they are; paths for which ``skip`` is true are left alone.
    Returns the file paths that had changed (and were put back).
    """
    root = Path(worktree).resolve()
    if root != snap.worktree:
        raise GitError(f"snapshot was taken of {snap.worktree}, not {root}")
    before = snap.fingerprint
    now = fingerprint(root)
    changed = [p for p in changed_paths(before, now) if skip is None or not skip(p)]
    kept_dirs = {Path(p).parent.as_posix() for p in before.files}
    for rel_dir in list(kept_dirs):
        kept_dirs.update(parent.as_posix() for parent in Path(rel_dir).parents)
    for rel in changed:
        if rel not in before.files:
            target = root / rel
            if Path(rel).is_absolute() or ".." in Path(rel).parts:
                continue
            if target.is_symlink() or target.exists():
                _remove_path(target)
            _prune_empty_dirs(root, rel, kept_dirs)
    for rel in changed:
        if rel in before.files:
            _write_back(root, rel, before.files[rel], snap.blobs[rel])
    return changed


def restore(worktree: Path, snap: Snapshot) -> list[str]:
    """Bring ``worktree`` back to ``snap``: revert edits, delete new files, recreate deleted ones.

    Also restores the index and HEAD if they moved. Returns the file paths that had changed.
    """
    root = Path(worktree).resolve()
    changed = restore_files(root, snap)
    now_head = head_sha(root) if has_commits(root) else None
    _restore_head(root, snap.fingerprint, now_head, current_branch(root))
    if snap.index_bytes is not None:
        index = _index_path(root)
        if not index.exists() or index.read_bytes() != snap.index_bytes:
            index.write_bytes(snap.index_bytes)
    return changed


def _restore_head(root: Path, before: Fingerprint, now_head: str | None, now_branch: str | None) -> None:
    if before.head is None or (before.head == now_head and before.branch == now_branch):
        return
    if before.branch is not None:
        # Moving the branch back drops commits a reviewer made; they were never the developer's work.
        # --no-deref: a branch an agent made an alias of another is replaced, never followed
        run_git(["update-ref", "--no-deref", f"refs/heads/{before.branch}", before.head], root)
        run_git(["symbolic-ref", "HEAD", f"refs/heads/{before.branch}"], root)
    else:
        run_git(["update-ref", "--no-deref", "HEAD", before.head], root)


def keep_files(root: Path, paths: Sequence[str], message: str) -> str | None:
    """Commit the current content of ``paths`` under ``root`` (no ref, HEAD or index touched).

    The commit has no parent and holds only those paths, so ``git show`` lists exactly them; the
    caller names it with a ref.
    For changes tunaflow is about to revert where they may be someone's work: they stay reachable.
    Returns the commit, or None when none of the paths exists any more.
    """
    root = Path(root)
    present = [p for p in paths if os.path.lexists(root / p)]
    if not present:
        return None
    with tempfile.TemporaryDirectory(prefix="tunaflow-keep-") as tmp:
        env = {"GIT_INDEX_FILE": str(Path(tmp) / "index")}
        run_git(["--literal-pathspecs", "add", "-f", "--", *present], root, env=env)
        tree = run_git(["write-tree"], root, env=env).stdout.decode("ascii").strip()
    return run_git([*identity_args(root), "commit-tree", tree, "-m", message], root).stdout.decode().strip()

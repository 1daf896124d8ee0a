"""Reviewer guard for a project that is not a git repository: a copy of its files, restored exactly.

Without git there is no object store to keep the files in, so :func:`snapshot_folder` copies every
file (content-addressed, so duplicates are stored once) into a private temporary directory. A
folder too big to copy quickly is refused with :class:`FolderTooLargeError` — the review then does
not start, and says why — rather than letting reviewers run unguarded.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import stat
import tempfile
from collections.abc import Collection, Iterator
from dataclasses import dataclass, field
from pathlib import Path

DEFAULT_MAX_FILES = 20_000
DEFAULT_MAX_BYTES = 256 << 20
DEFAULT_EXCLUDED: tuple[str, ...] = (".tunaflow",)  # tunaflow's own database is written during a review
_LINK = "120000"


class FolderTooLargeError(Exception):
    """The folder has more files or bytes than a snapshot may copy; nothing was changed."""


@dataclass
class FolderSnapshot:
    """A folder as it was: ``files`` maps a relative path to ``"{mode}:{sha256}"``; the bytes are in ``store``."""

    root: Path
    files: dict[str, str]
    store: Path
    excluded: tuple[str, ...] = DEFAULT_EXCLUDED
    perms: dict[str, int] = field(default_factory=dict)  # permission bits of each regular file
    _tmp: tempfile.TemporaryDirectory[str] | None = field(default=None, repr=False)

    def discard(self) -> None:
        """Delete the copies (the folder itself is untouched)."""
        if self._tmp is not None:
            self._tmp.cleanup()
            self._tmp = None


def _walk(root: Path, excluded: Collection[str]) -> Iterator[tuple[str, os.stat_result]]:
    for dirpath, dirnames, filenames in os.walk(root):
        here = Path(dirpath)
        rel_dir = here.relative_to(root)
        if rel_dir == Path("."):
            dirnames[:] = [d for d in dirnames if d not in excluded]
        names = list(filenames) + [d for d in dirnames if (here / d).is_symlink()]
        dirnames[:] = sorted(d for d in dirnames if not (here / d).is_symlink())
        for name in sorted(names):
            path = here / name
            try:
                st = path.lstat()
            except OSError:
                continue
            if stat.S_ISREG(st.st_mode) or stat.S_ISLNK(st.st_mode):
                yield (rel_dir / name).as_posix(), st


def _entry(path: Path, st: os.stat_result) -> tuple[str, bytes | None]:
    """``mode:sha256`` and, for a symlink, its target bytes (files are streamed, not returned)."""
    digest = hashlib.sha256()
    if stat.S_ISLNK(st.st_mode):
        target = os.fsencode(os.readlink(path))
        digest.update(target)
        return f"{_LINK}:{digest.hexdigest()}", target
    with path.open("rb") as fh:
        while chunk := fh.read(1 << 20):
            digest.update(chunk)
    mode = "100755" if st.st_mode & stat.S_IXUSR else "100644"
    return f"{mode}:{digest.hexdigest()}", None


def folder_fingerprint(root: Path, *, excluded: Collection[str] = DEFAULT_EXCLUDED) -> dict[str, str]:
    """Relative path → ``mode:sha256`` for every file and symlink under ``root`` (``excluded`` top-level names left out)."""
    root = Path(root)
    result: dict[str, str] = {}
    for rel, st in _walk(root, excluded):
        try:
            result[rel] = _entry(root / rel, st)[0]
        except OSError:
            continue
    return result


def snapshot_folder(
    root: Path,
    *,
    max_files: int | None = None,
    max_bytes: int | None = None,
    excluded: tuple[str, ...] = DEFAULT_EXCLUDED,
) -> FolderSnapshot:
    """Copy every file under ``root`` aside; ``FolderTooLargeError`` beyond ``max_files``/``max_bytes``.

    The limits default to ``DEFAULT_MAX_FILES`` and ``DEFAULT_MAX_BYTES``.
    """
    root = Path(root).resolve()
    max_files = DEFAULT_MAX_FILES if max_files is None else max_files
    max_bytes = DEFAULT_MAX_BYTES if max_bytes is None else max_bytes
    listing = []
    total = 0
    for rel, st in _walk(root, excluded):
        listing.append((rel, st))
        total += st.st_size if stat.S_ISREG(st.st_mode) else 0
        if len(listing) > max_files or total > max_bytes:
            raise FolderTooLargeError(
                f"{root.name} is not a git repository and is too big to snapshot (more than "
                f"{max_files} files or {max_bytes >> 20} MB), so reviewers cannot be kept from changing it. "
                "Initialise git for the project (ctrl+p “Initialise git repository”) to review it."
            )
    tmp = tempfile.TemporaryDirectory(prefix="tunaflow-folder-")
    store = Path(tmp.name)
    files: dict[str, str] = {}
    perms: dict[str, int] = {}
    try:
        for rel, st in listing:
            path = root / rel
            try:
                entry, link = _entry(path, st)
                blob = store / entry.split(":", 1)[1]
                if not blob.exists():
                    if link is not None:
                        blob.write_bytes(link)
                    else:
                        shutil.copyfile(path, blob, follow_symlinks=False)
            except OSError:
                continue  # vanished or unreadable: not part of the snapshot
            files[rel] = entry
            perms[rel] = stat.S_IMODE(st.st_mode)
    except BaseException:
        tmp.cleanup()
        raise
    return FolderSnapshot(root, files, store, excluded, perms, tmp)


def changed_files(snap: FolderSnapshot) -> list[str]:
    """Paths created, deleted or changed (content or mode) since the snapshot, sorted."""
    now = folder_fingerprint(snap.root, excluded=snap.excluded)
    return sorted(k for k in set(snap.files) | set(now) if snap.files.get(k) != now.get(k))


def _inside(root: Path, rel: str) -> Path:
    parts = Path(rel).parts
    if Path(rel).is_absolute() or ".." in parts:
        raise ValueError(f"refusing a path outside the folder: {rel!r}")
    return root.joinpath(*parts)


def _clear(path: Path) -> None:
    if path.is_symlink() or path.is_file():
        path.unlink()
    elif path.is_dir():
        shutil.rmtree(path)


def restore_folder(snap: FolderSnapshot) -> list[str]:
    """Put the folder back as snapshotted: new files removed, changed and deleted ones rewritten."""
    root = snap.root
    changed = changed_files(snap)
    kept_dirs = {root}
    for rel in snap.files:
        kept_dirs.update(_inside(root, rel).parents)
    for rel in changed:
        path = _inside(root, rel)
        entry = snap.files.get(rel)
        if entry is None:
            _clear(path)
            parent = path.parent
            while parent not in kept_dirs and root in parent.parents:
                try:
                    parent.rmdir()
                except OSError:
                    break
                parent = parent.parent
            continue
        mode, digest = entry.split(":", 1)
        for parent in reversed(path.parents):
            if root in parent.parents and (parent.is_symlink() or parent.is_file()):
                parent.unlink()
        path.parent.mkdir(parents=True, exist_ok=True)
        _clear(path)
        blob = snap.store / digest
        if mode == _LINK:
            os.symlink(os.fsdecode(blob.read_bytes()), path)
        else:
            shutil.copyfile(blob, path)
            os.chmod(path, snap.perms.get(rel, 0o755 if mode == "100755" else 0o644))
    return changed

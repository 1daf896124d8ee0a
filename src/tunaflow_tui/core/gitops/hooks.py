"""Which repository hooks tunaflow's own git commands may run: the ones that existed at approval.

Hooks are programs the repository runs on commit, checkout and merge — with the privileges of
whoever runs git. An agent that writes one (in the shared ``.git/hooks``, or in an in-tree
``core.hooksPath`` such as ``.husky``) would otherwise have it run by tunaflow's next commit. So the
hooks are fingerprinted when a plan is approved, and tunaflow's own commits run only hooks that are
byte for byte what they were then; a new or changed hook is left out (and reported by the caller).
"""

from __future__ import annotations

import hashlib
import os
import stat
import tempfile
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from tunaflow_tui.core.gitops.runner import git_text

NO_HOOKS: tuple[str, ...] = ("-c", "core.hooksPath=/dev/null")
"""``git`` arguments under which no hook can run (there is no directory ``/dev/null``)."""

MAX_HOOK_BYTES = 1 << 20  # a hook bigger than this is never trusted (nor read whole)


def hooks_dir(worktree: Path) -> Path:
    """The directory git takes hooks from when run in ``worktree`` (``core.hooksPath`` honoured)."""
    worktree = Path(worktree)
    raw = Path(git_text(["rev-parse", "--git-path", "hooks"], worktree))
    return raw if raw.is_absolute() else (worktree / raw)


def _hook_bytes(path: Path) -> bytes | None:
    """The content git would execute for ``path``, or None when it is not an executable file."""
    try:
        st = path.stat()  # follows a symlink: git runs whatever it points to
    except OSError:
        return None
    if not stat.S_ISREG(st.st_mode) or not st.st_mode & stat.S_IXUSR or st.st_size > MAX_HOOK_BYTES:
        return None
    try:
        return path.read_bytes()
    except OSError:
        return None


def _digest(path: Path, data: bytes) -> str:
    h = hashlib.sha256()
    if path.is_symlink():
        h.update(b"link:" + os.fsencode(os.readlink(path)) + b"\0")
    h.update(data)
    return h.hexdigest()


@dataclass(frozen=True)
class HookBaseline:
    """The hooks a repository had at one moment: hook name → digest of what git would run."""

    files: Mapping[str, str] = field(default_factory=dict)

    def to_json(self) -> dict[str, str]:
        """A JSON-ready form (for a plan event)."""
        return dict(sorted(self.files.items()))

    @classmethod
    def from_json(cls, raw: Mapping[str, object]) -> HookBaseline:
        """The inverse of :meth:`to_json`; anything malformed is dropped (and so not trusted)."""
        return cls({str(k): str(v) for k, v in raw.items() if isinstance(v, str)})


def hook_fingerprint(worktree: Path) -> HookBaseline:
    """The hooks git would run in ``worktree`` now (executable files in its hooks directory)."""
    directory = hooks_dir(worktree)
    files: dict[str, str] = {}
    try:
        entries = sorted(directory.iterdir())
    except OSError:
        return HookBaseline({})
    for entry in entries:
        if entry.name.endswith(".sample"):  # git's templates: never run under that name
            continue
        data = _hook_bytes(entry)
        if data is not None:
            files[entry.name] = _digest(entry, data)
    return HookBaseline(files)


@dataclass(frozen=True)
class TrustedHooks:
    """``git`` arguments that run only trusted hooks, and the hooks they leave out."""

    config_args: tuple[str, ...]
    skipped: tuple[str, ...]


@contextmanager
def trusted_hooks(worktree: Path, baseline: HookBaseline, *, copy: bool = False) -> Iterator[TrustedHooks]:
    """Arguments for a git command in ``worktree`` that runs only hooks unchanged since ``baseline``.

    When every hook is as it was, git is pointed at its own hooks directory unless ``copy`` is set
    (without these arguments tunaflow's git runs no hook at all, see :mod:`.runner`). Otherwise the unchanged hooks are copied into a private directory — the copy is
    checked, so a hook swapped in between is not run — and git is pointed at it for the duration
    of the ``with`` block. ``copy`` is for a command that rewrites the files the hooks live in
    (a merge into a tree with an in-tree ``core.hooksPath``).
    """
    directory = hooks_dir(worktree)
    current = hook_fingerprint(worktree)
    skipped = sorted(name for name, digest in current.files.items() if baseline.files.get(name) != digest)
    if not skipped and not copy:
        yield TrustedHooks(("-c", f"core.hooksPath={directory.resolve()}"), ())
        return
    with tempfile.TemporaryDirectory(prefix="tunaflow-hooks-") as tmp:
        for name in sorted(current.files):
            if name in skipped:
                continue
            source = directory / name
            data = _hook_bytes(source)
            if data is None or _digest(source, data) != baseline.files.get(name):
                skipped.append(name)
                continue
            target = Path(tmp) / name
            target.write_bytes(data)
            target.chmod(0o700)
        yield TrustedHooks(("-c", f"core.hooksPath={tmp}"), tuple(sorted(skipped)))

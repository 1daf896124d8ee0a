"""``fs/read_text_file`` and ``fs/write_text_file`` for an ACP agent, fenced to the turn's folder.

Every path must be absolute and, once symlinks are resolved, inside the folder; ``..``, a symlink
that leads out and any outside path are refused with a JSON-RPC error the agent sees. Writes go
through a temporary file and a rename, so a reader never sees half a file, and never into ``.git``.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterable
from pathlib import Path

from acp import RequestError

#: the largest file an agent may read or write through tunaflow (bytes)
MAX_FILE_BYTES = 20_000_000


class ScopedFiles:
    """File access for one turn: reads inside ``root``; writes too when ``writable``.

    With ``needs_grant`` (a role that asks before it changes anything), a file may be written only
    once a permission request naming it was allowed: an agent told no, or that never asked, cannot
    write through tunaflow.
    """

    def __init__(self, root: Path, *, writable: bool, needs_grant: bool = False) -> None:
        """Fence access to ``root`` (resolved once, so a later symlink swap of the root changes nothing)."""
        self.root = root.resolve()
        self.writable = writable
        self.needs_grant = needs_grant
        self._granted: set[Path] = set()

    def grant(self, paths: Iterable[str]) -> None:
        """Let the files an allowed permission request named be written (those inside the folder)."""
        for path in paths:
            with contextlib.suppress(RequestError):
                self._granted.add(self.resolve(path))

    def resolve(self, path: str) -> Path:
        """The resolved path for ``path``; RequestError when it is relative or leads outside the folder."""
        if "\x00" in path or not os.path.isabs(path):
            raise RequestError.invalid_params({"path": path, "reason": "the path must be absolute"})
        try:
            resolved = Path(path).resolve()
            resolved.relative_to(self.root)
        except (ValueError, OSError, RuntimeError):
            raise RequestError.invalid_params(
                {"path": path, "reason": f"outside the turn's folder {self.root}"}) from None
        return resolved

    def read(self, path: str, line: int | None = None, limit: int | None = None) -> str:
        """The file's text; ``line`` (1-based) and ``limit`` select lines."""
        resolved = self.resolve(path)
        if not resolved.is_file():
            raise RequestError.resource_not_found(path)
        if resolved.stat().st_size > MAX_FILE_BYTES:
            raise RequestError.invalid_params({"path": path, "reason": "the file is too large"})
        text = resolved.read_text(encoding="utf-8", errors="replace")
        if line is None and limit is None:
            return text
        lines = text.splitlines(keepends=True)
        start = max((line or 1) - 1, 0)
        end = len(lines) if limit is None else start + max(limit, 0)
        return "".join(lines[start:end])

    def write(self, path: str, content: str) -> None:
        """Replace the file's text atomically (parent folders are created inside the fence)."""
        if not self.writable:
            raise RequestError.invalid_params({"path": path, "reason": "this role may not write files"})
        resolved = self.resolve(path)
        if self.needs_grant and resolved not in self._granted:
            raise RequestError.invalid_params({"path": path, "reason": "writing it was not allowed"})
        if ".git" in resolved.relative_to(self.root).parts:
            raise RequestError.invalid_params({"path": path, "reason": "git's own files are not writable"})
        data = content.encode("utf-8")
        if len(data) > MAX_FILE_BYTES:
            raise RequestError.invalid_params({"path": path, "reason": "the content is too large"})
        if resolved.is_dir():
            raise RequestError.invalid_params({"path": path, "reason": "the path is a folder"})
        resolved.parent.mkdir(parents=True, exist_ok=True)
        self.resolve(str(resolved.parent))  # the folders just made are still inside
        mode = resolved.stat().st_mode & 0o777 if resolved.exists() else 0o644
        fd, temp = tempfile.mkstemp(dir=resolved.parent, prefix=f".{resolved.name}.", suffix=".tmp")
        try:
            with os.fdopen(fd, "wb") as out:
                out.write(data)
                out.flush()
                os.fsync(out.fileno())
            os.chmod(temp, mode)
            os.replace(temp, resolved)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(temp)
            raise

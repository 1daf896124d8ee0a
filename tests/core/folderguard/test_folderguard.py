"""The plain-folder guard puts a project without git back exactly, and refuses a folder too big to copy."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tunaflow_tui.core.folderguard import (
    FolderTooLargeError,
    changed_files,
    folder_fingerprint,
    restore_folder,
    snapshot_folder,
)


def _project(root: Path) -> Path:
    (root / "src").mkdir(parents=True)
    (root / "src" / "app.py").write_text("print('hi')\n", encoding="utf-8")
    (root / "run.sh").write_text("#!/bin/sh\n", encoding="utf-8")
    os.chmod(root / "run.sh", 0o750)
    (root / "docs").mkdir()
    (root / "docs" / "guide.md").write_text("guide\n", encoding="utf-8")
    os.symlink("src/app.py", root / "link.py")
    (root / ".tunaflow").mkdir()
    (root / ".tunaflow" / "state.db").write_text("db", encoding="utf-8")
    return root


def test_every_kind_of_change_is_seen_and_put_back(tmp_path: Path) -> None:
    root = _project(tmp_path / "p")
    before = folder_fingerprint(root)
    snap = snapshot_folder(root)
    try:
        (root / "src" / "app.py").write_text("print('reviewer was here')\n", encoding="utf-8")
        (root / "docs" / "guide.md").unlink()
        (root / "notes").mkdir()
        (root / "notes" / "review.md").write_text("I fixed it\n", encoding="utf-8")
        os.chmod(root / "run.sh", 0o644)
        (root / "link.py").unlink()
        (root / "link.py").write_text("not a link any more\n", encoding="utf-8")
        (root / ".tunaflow" / "state.db").write_text("db, written meanwhile", encoding="utf-8")
        expected = ["docs/guide.md", "link.py", "notes/review.md", "run.sh", "src/app.py"]
        assert changed_files(snap) == expected

        assert restore_folder(snap) == expected
        assert folder_fingerprint(root) == before
        assert os.readlink(root / "link.py") == "src/app.py"
        assert (root / "run.sh").stat().st_mode & 0o777 == 0o750
        assert not (root / "notes").exists()
        assert (root / ".tunaflow" / "state.db").read_text(encoding="utf-8") == "db, written meanwhile"
    finally:
        snap.discard()


def test_a_folder_over_the_limit_is_refused_without_copying(tmp_path: Path) -> None:
    root = _project(tmp_path / "p")
    with pytest.raises(FolderTooLargeError, match="too big to snapshot"):
        snapshot_folder(root, max_files=2)
    with pytest.raises(FolderTooLargeError):
        snapshot_folder(root, max_bytes=10)

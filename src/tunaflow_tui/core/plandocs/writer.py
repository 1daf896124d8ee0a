"""Writing plan documents under ``root/docs/plans/``: validated names, contained paths, atomic writes."""

from __future__ import annotations

import os
import re
import tempfile
from pathlib import Path

from tunaflow_tui.core.plandocs.plandoc_errors import PlanDocsError
from tunaflow_tui.core.plandocs.plandoc_model import PlanDocument
from tunaflow_tui.core.plandocs.render import clean_markdown, render_plan, render_task, task_file_name
from tunaflow_tui.core.plandocs.slugs import validate_slug

PLANS_DIR = Path("docs") / "plans"
MAX_SUBTASK_INDEX = 999


def plans_dir(root: Path) -> Path:
    """``root/docs/plans`` resolved, refusing a ``docs`` or ``docs/plans`` that leads outside ``root``."""
    base = Path(root).resolve()
    target = (base / PLANS_DIR).resolve()
    if target != base / PLANS_DIR:
        raise PlanDocsError(f"refusing to write plan documents: {base / PLANS_DIR} leads to {target}")
    return target


def _checked_path(root: Path, file_name: str) -> Path:
    """The path of ``file_name`` in the plans folder, refusing anything that escapes it."""
    folder = plans_dir(root)
    if not file_name or "/" in file_name or "\\" in file_name or "\x00" in file_name or file_name in (".", ".."):
        raise PlanDocsError(f"invalid plan document name {file_name[:80]!r}")
    path = folder / file_name
    if path.resolve() != path:
        raise PlanDocsError(f"refusing to write {path}: it is a link to {path.resolve()}")
    return path


def _ensure_folder(root: Path) -> Path:
    folder = plans_dir(root)
    folder.mkdir(parents=True, exist_ok=True)
    # check again: a link swapped in while the folder was being created must not be followed
    if plans_dir(root) != folder or not folder.is_dir():
        raise PlanDocsError(f"refusing to write plan documents: {folder} changed while it was created")
    return folder


def write_atomic(path: Path, text: str) -> None:
    """Write ``text`` as UTF-8 with ``\\n`` line endings: temp file in the same folder, then replace."""
    data = text.replace("\r\n", "\n").replace("\r", "\n").encode("utf-8", "replace")
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        if os.path.lexists(tmp):
            os.unlink(tmp)
        raise


def plan_path(root: Path, slug: str) -> Path:
    """``root/docs/plans/{slug}.md`` (slug validated)."""
    return _checked_path(root, f"{validate_slug(slug)}.md")


def task_path(root: Path, slug: str, index: int) -> Path:
    """``root/docs/plans/{slug}-task-NN.md`` (slug and 1-based index validated)."""
    if isinstance(index, bool) or not isinstance(index, int) or not 1 <= index <= MAX_SUBTASK_INDEX:
        raise PlanDocsError(f"invalid subtask index {index!r}: expected 1..{MAX_SUBTASK_INDEX}")
    return _checked_path(root, task_file_name(validate_slug(slug), index))


def review_path(root: Path, slug: str, round_no: int) -> Path:
    """``root/docs/plans/{slug}-review-r{N}.md`` (N ≥ 1)."""
    if isinstance(round_no, bool) or not isinstance(round_no, int) or round_no < 1:
        raise PlanDocsError(f"invalid review round {round_no!r}: expected 1 or more")
    return _checked_path(root, f"{validate_slug(slug)}-review-r{round_no}.md")


def result_path(root: Path, slug: str) -> Path:
    """``root/docs/plans/{slug}-result.md``."""
    return _checked_path(root, f"{validate_slug(slug)}-result.md")


def write_plan_docs(root: Path, doc: PlanDocument) -> tuple[Path, ...]:
    """Write the plan file and one task file per subtask; returns (plan, task 01, task 02, …).

    Rewriting a revised plan overwrites its files and removes task files its subtasks no longer need.
    """
    slug = validate_slug(doc.slug)
    indexes = [sub.index for sub in doc.subtasks]
    if len(set(indexes)) != len(indexes):
        raise PlanDocsError(f"plan {slug!r} has duplicate subtask numbers: {indexes}")
    targets = [(plan_path(root, slug), render_plan(doc))]
    targets += [(task_path(root, slug, sub.index), render_task(doc, sub)) for sub in doc.subtasks]
    _ensure_folder(root)
    for path, text in targets:
        write_atomic(_checked_path(root, path.name), text)
    keep = {path.name for path, _ in targets}
    stale = re.compile(rf"{re.escape(slug)}-task-[0-9]+\.md")
    for entry in plans_dir(root).iterdir():
        if stale.fullmatch(entry.name) and entry.name not in keep and (entry.is_file() or entry.is_symlink()):
            entry.unlink()
    return tuple(path for path, _ in targets)


def write_review_doc(root: Path, slug: str, round_no: int, content: str) -> Path:
    """Write review round ``round_no`` of plan ``slug`` (content as Markdown, markers scrubbed)."""
    path = review_path(root, slug, round_no)
    _ensure_folder(root)
    write_atomic(_checked_path(root, path.name), clean_markdown(content))
    return path


def write_result_doc(root: Path, slug: str, content: str) -> Path:
    """Write the result document of plan ``slug`` (content as Markdown, markers scrubbed)."""
    path = result_path(root, slug)
    _ensure_folder(root)
    write_atomic(_checked_path(root, path.name), clean_markdown(content))
    return path

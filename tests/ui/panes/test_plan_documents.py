"""The workflow view's document list: the plan first, then tasks, reviews and result; nothing of other plans."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

from tunaflow_tui.controllers.plan_views import plan_documents


def test_the_plan_document_comes_first_and_other_plans_documents_stay_out(tmp_path: Path) -> None:
    folder = tmp_path / "docs" / "plans"
    folder.mkdir(parents=True)
    for name in ("add-mul-review-r1.md", "add-mul-result.md", "add-mul-task-02.md", "add-mul.md",
                 "add-mul-task-01.md", "add-mul-div.md", "add-mul-div-task-01.md", "add-mul-notes.txt"):
        (folder / name).write_text("x", encoding="utf-8")
    (folder / "add-mul-design.md").write_text("x", encoding="utf-8")
    plan = SimpleNamespace(worktree_path=None, slug="add-mul")
    names = [name for name, _ in plan_documents(plan, tmp_path, ["add-mul", "add-mul-div"])]  # type: ignore[arg-type]
    assert names == ["add-mul.md", "add-mul-task-01.md", "add-mul-task-02.md", "add-mul-review-r1.md",
                     "add-mul-result.md", "add-mul-design.md"]

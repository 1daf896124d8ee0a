"""Plan documents: ``docs/plans/{slug}.md``, its task, review and result files, and plan slugs."""

from tunaflow_tui.core.plandocs.plandoc_errors import PlanDocsError
from tunaflow_tui.core.plandocs.plandoc_model import PlanDocument, PlanSubtask
from tunaflow_tui.core.plandocs.render import (
    clean_markdown,
    render_plan,
    render_result,
    render_review,
    render_task,
    task_file_name,
)
from tunaflow_tui.core.plandocs.slugs import SLUG_MAX_LEN, is_valid_slug, make_slug, validate_slug
from tunaflow_tui.core.plandocs.writer import (
    PLANS_DIR,
    plan_path,
    plans_dir,
    result_path,
    review_path,
    task_path,
    write_plan_docs,
    write_result_doc,
    write_review_doc,
)

__all__ = [
    "PLANS_DIR",
    "SLUG_MAX_LEN",
    "PlanDocsError",
    "PlanDocument",
    "PlanSubtask",
    "clean_markdown",
    "is_valid_slug",
    "make_slug",
    "plan_path",
    "plans_dir",
    "render_plan",
    "render_result",
    "render_review",
    "render_task",
    "result_path",
    "review_path",
    "task_file_name",
    "task_path",
    "validate_slug",
    "write_plan_docs",
    "write_result_doc",
    "write_review_doc",
]

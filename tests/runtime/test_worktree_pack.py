"""The Developer and the reviewers are told where they work: the plan's worktree, its branch and its base."""

from __future__ import annotations

from runtime_harness import PROPOSAL, Harness, dev_turn, verdict

from tunaflow_tui.runtime.runtime import WorkflowRuntime


def _project_section(prompt: str) -> str:
    return prompt.split("## Project\n\n", 1)[1].split("\n\n## ", 1)[0]


async def test_developer_and_reviewer_packs_name_the_worktree_branch_and_base(harness: Harness) -> None:
    harness.set_script(architect=[{"text": PROPOSAL}], developer=[dev_turn()],
                       reviewer=[{"text": verdict("pass")}], verifier=[{"text": verdict("pass")}])
    rt = WorkflowRuntime(harness.project, harness.settings())
    try:
        await rt.send_user_message("Please add multiplication")
        [plan] = rt.store.list_plans()
        plan = await rt.decide(plan.id, "approve")
    finally:
        rt.close()
    worktree, branch = plan.worktree_path, plan.git_branch
    assert worktree and branch == f"tunaflow/{plan.slug}" and plan.base_branch == "main"
    calls = {call["role"]: call for call in harness.calls()}
    for role in ("developer", "reviewer", "verifier"):
        section = _project_section(calls[role]["prompt"])
        assert f"Path: {worktree}" in section, role
        assert f"Git branch: {branch} (based on main)" in section, role
        assert f"Path: {harness.project}\n" not in section and "Git branch: main" not in section, role
        assert calls[role]["cwd"] == worktree, role
    architect = _project_section(calls["architect"]["prompt"])
    assert f"Path: {harness.project}" in architect and "Git branch: main" in architect

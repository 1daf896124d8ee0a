"""Project search in a real terminal (tmux): f5, type, enter opens a branch's message in the branch pane.

The project is seeded through the store (a branch whose conversation holds the only message about
a quokka cache, far from its newest messages); the app runs as users start it, with the real
embedding model, so the search is hybrid.
"""

from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tunaflow_tui.core.storage import Store

pytestmark = [pytest.mark.e2e, pytest.mark.embeddings]

FOOTER = re.compile(r"\bf1 Help\b")


def _project(where: Path, env: dict[str, str]) -> Path:
    project = where / "shop"
    project.mkdir()
    (project / "README.md").write_text("# shop\n", encoding="utf-8")
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@example.com"]
    for args in (["init", "-q"], ["add", "README.md"], ["commit", "-q", "-m", "first"]):
        subprocess.run([*git, *args], cwd=project, env=env, check=True, capture_output=True)
    with Store.open(project) as store:
        checkpoint = store.add_message("main", "user", "Where should the cache live?")
        branch = store.create_branch(conversation_id="main", checkpoint_id=checkpoint.id, parent_branch_id=None,
                                     mode="chat", kind="general", label="cache experiments")
        cid = f"branch:{branch.id}"
        store.add_messages(cid, [{"role": "user", "content": f"Branch note {i}."} for i in range(60)])
        store.add_message(cid, "assistant", "Put the quokka cache beside the index.", persona="developer")
        store.add_messages(cid, [{"role": "user", "content": f"Later branch note {i}."} for i in range(60)])
    return project


def test_search_and_open_a_hit_in_a_branch(tmux: Callable[[int, int], Any], e2e_env: dict[str, str],
                                          tmp_path: Path, quit_demo: Callable[[Any], None]) -> None:
    project = _project(tmp_path, e2e_env)
    session = tmux(120, 40)
    session.start([sys.executable, "-m", "tunaflow_tui", str(project), "--no-mouse"], tmp_path)
    session.wait_for(lambda s: bool(FOOTER.search(s)) and "cache experiments" in s)  # the sidebar lists it

    session.press("F5")
    session.wait_for("Search the project")
    session.send_text("quokka")
    session.wait_for(lambda s: "↳ cache experiments · Developer" in s and "quokka cache beside the index" in s)

    session.press("Enter")
    # the hit in the branch pane, under the pane's header
    opened = session.wait_for(lambda s: "Search the project" not in s and "quokka cache" in s
                              and "↳ cache experiments" in s)
    assert "Later branch note 59" not in opened  # the pane shows the hit's page, not the branch's end
    assert "Traceback" not in opened
    quit_demo(session)

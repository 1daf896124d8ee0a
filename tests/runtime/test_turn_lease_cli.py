"""One turn per conversation across processes: `ask` in one terminal, `branch`/`ask`/`run` in another.

The first `tunaflow ask` runs a stand-in agent that streams half its answer and then waits at a gate
until the test creates a release file; meanwhile a second process tries to delete or adopt the
branch, or to ask again. Each is refused with one clear line, stores nothing, and the first answer
is kept whole once released.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from typing import Any

import pytest
from runtime_harness import Harness
from waiting import until_sync

from tunaflow_tui.core.storage import Store

pytestmark = pytest.mark.e2e

ANSWER = "The first half of the answer.\n\nThe second half, written after the gate opened."


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONIOENCODING": "utf-8"}


def _tunaflow(h: Harness, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "tunaflow_tui", *args], capture_output=True, text=True,
                          encoding="utf-8", timeout=120, env=_env(), cwd=h.project)


def _configure(h: Harness, *turns: dict[str, Any]) -> None:
    h.set_script(architect=list(turns))
    h.write_config()


def _gated(h: Harness) -> dict[str, Any]:
    gate = {"after": "first half of the answer.", "started": str(h.root / "started"),
            "release": str(h.root / "release")}
    return {"text": ANSWER, "gate": gate}


def _asking(h: Harness, *args: str) -> subprocess.Popen[str]:
    """`tunaflow ask … --json` in the background, once its agent waits at the gate with a live lease."""
    proc = subprocess.Popen([sys.executable, "-m", "tunaflow_tui", "ask", *args, "--json"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, encoding="utf-8",
                            env=_env(), cwd=h.project)
    until_sync(lambda: (h.root / "started").exists() or proc.poll() is not None, "the agent to reach the gate")
    assert proc.poll() is None, proc.communicate()
    return proc


def _answered(h: Harness, proc: subprocess.Popen[str]) -> dict[str, Any]:
    (h.root / "release").touch()
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err
    assert "Traceback" not in err
    doc: dict[str, Any] = json.loads(out)
    return doc


def _forked(h: Harness) -> int:
    first = json.loads(_tunaflow(h, "ask", "start", "--json").stdout)
    out = _tunaflow(h, "ask", "in a branch", "--fork", str(first["message_id"]), "--json")
    assert out.returncode == 0, out.stderr
    branch_id: int = json.loads(out.stdout)["branch_id"]
    return branch_id


def _one_line(out: subprocess.CompletedProcess[str]) -> str:
    assert out.returncode == 1 and out.stderr.count("\n") == 1, out.stderr
    assert "Traceback" not in out.stderr
    return out.stderr


def test_deleting_a_branch_while_ask_streams_into_it_is_refused_and_the_answer_kept(harness: Harness) -> None:
    _configure(harness, {"text": "main answer"}, {"text": "branch answer"}, _gated(harness))
    branch_id = _forked(harness)
    asking = _asking(harness, "more", "--to", str(branch_id))
    refused = _one_line(_tunaflow(harness, "branch", "delete", str(branch_id), "--yes"))
    assert f"branch {branch_id} has a turn in progress (pid {asking.pid}) — wait for it or cancel it" in refused
    doc = _answered(harness, asking)
    assert doc["status"] == "done" and doc["answer"] == ANSWER
    with Store.open(harness.project) as store:
        [*_earlier, question, answer] = store.list_messages(f"branch:{branch_id}")
        assert (question.content, answer.content, answer.status) == ("more", ANSWER, "done")
    assert _tunaflow(harness, "branch", "delete", str(branch_id), "--yes").returncode == 0, "free once answered"


def test_adopting_a_branch_whose_answer_is_being_written_is_refused(harness: Harness) -> None:
    _configure(harness, {"text": "main answer"}, {"text": "branch answer"}, _gated(harness))
    branch_id = _forked(harness)
    summary = harness.root / "summary.txt"
    summary.write_text("What the branch found.")
    asking = _asking(harness, "more", "--to", str(branch_id))
    refused = _one_line(_tunaflow(harness, "branch", "adopt", str(branch_id), "--summary-file", str(summary)))
    assert f"branch {branch_id} has a turn in progress (pid {asking.pid})" in refused
    with Store.open(harness.project) as store:
        assert store.get_branch(branch_id).status == "active"  # type: ignore[union-attr]
    assert _answered(harness, asking)["answer"] == ANSWER
    adopted = _tunaflow(harness, "branch", "adopt", str(branch_id), "--summary-file", str(summary), "--json")
    assert adopted.returncode == 0, adopted.stderr
    with Store.open(harness.project) as store:
        assert store.get_branch(branch_id).status == "adopted"  # type: ignore[union-attr]
        assert store.list_messages(f"branch:{branch_id}")[-1].content == ANSWER, "answered before it was adopted"


def test_a_second_ask_or_run_request_is_refused_and_stores_nothing(harness: Harness) -> None:
    _configure(harness, _gated(harness), {"text": "a later answer"})
    asking = _asking(harness, "the first question")
    with Store.open(harness.project) as store:
        before = [(m.id, m.role) for m in store.list_messages("main")]
    second = _one_line(_tunaflow(harness, "ask", "a second question"))
    with Store.open(harness.project) as store:
        assert [(m.id, m.role) for m in store.list_messages("main")] == before, "no unanswered message"
    assert f"Still running: main has a turn in progress (pid {asking.pid})" in second
    assert "not stored" in second
    run = _tunaflow(harness, "run", "--request", "build something")
    assert run.returncode != 0 and "Traceback" not in run.stderr
    assert "Still running:" in run.stdout + run.stderr and str(asking.pid) in run.stdout + run.stderr
    with Store.open(harness.project) as store:
        assert [(m.id, m.role) for m in store.list_messages("main")] == before, "no unanswered message"
    assert _answered(harness, asking)["answer"] == ANSWER
    with Store.open(harness.project) as store:
        assert [m.content for m in store.list_messages("main")] == ["the first question", ANSWER]

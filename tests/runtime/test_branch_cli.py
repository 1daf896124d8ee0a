"""`tunaflow ask`, `tunaflow branch` and the branch tree of `tunaflow status --json`, as a script uses them."""

from __future__ import annotations

import json
import subprocess
from typing import Any

import pytest
from runtime_harness import PROPOSAL, Harness
from tunaflow_cli import tunaflow

from tunaflow_tui.core.storage import Store

pytestmark = pytest.mark.e2e

HOSTILE = "Sure.\x1b]0;owned\x07\x1b[2J Use PKCE.\x9b31m"


def _tunaflow(h: Harness, *args: str, stdin: str | None = None,
              in_process: bool = True) -> subprocess.CompletedProcess[str]:
    """``tunaflow ARGS`` in the project, in this process (``tunaflow_cli``) unless ``in_process`` is False."""
    return tunaflow(args, cwd=h.project, stdin=stdin, in_process=in_process)


def _configure(h: Harness, **script: list[dict[str, Any]]) -> None:
    h.set_script(**(script or {"architect": [{"text": "An answer."}]}))
    h.write_config()


def _json(out: subprocess.CompletedProcess[str]) -> Any:
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def _snapshot(h: Harness) -> tuple[object, ...]:
    with Store.open(h.project) as store:
        return (
            [(m.id, m.conversation_id, m.content) for m in store.list_messages("main", limit=1000)],
            [(b.id, b.status, b.label) for b in store.list_branches()],
            sum(store.count_messages(b.shadow_conversation_id) for b in store.list_branches()),
            store.all_session_links(),
        )


def test_ask_streams_inert_text_and_stores_the_turn_in_main(harness: Harness) -> None:
    _configure(harness, architect=[{"text": HOSTILE}])
    out = _tunaflow(harness, "ask", str(harness.project), "how do we log in?", in_process=False)
    assert out.returncode == 0, out.stderr
    assert out.stdout == "Sure. Use PKCE.\n", "control sequences never reach the terminal"
    with Store.open(harness.project) as store:
        user, answer = store.list_messages("main")
        assert (user.role, user.content) == ("user", "how do we log in?")
        assert answer.persona == "architect" and answer.content == HOSTILE, "stored as the agent wrote it"


def test_ask_json_gives_the_ids_and_a_proposal_opens_the_gate(harness: Harness) -> None:
    _configure(harness, architect=[{"text": PROPOSAL}])
    doc = _json(_tunaflow(harness, "ask", "add mul", "--json"))
    assert doc["conversation_id"] == "main" and doc["branch_id"] is None and doc["status"] == "done"
    assert "<!--" not in doc["answer"] and "Add multiplication" in doc["answer"]
    with Store.open(harness.project) as store:
        [plan] = store.list_plans()
        assert plan.pending_decision == "approval" and doc["plan_id"] == plan.id
        assert store.get_message(doc["message_id"]).persona == "architect"  # type: ignore[union-attr]
        assert store.get_message(doc["user_message_id"]).content == "add mul"  # type: ignore[union-attr]


def test_ask_fork_then_to_the_branch_then_nested_fork(harness: Harness) -> None:
    _configure(harness, architect=[{"text": "main answer"}, {"text": "branch answer"}, {"text": "second"},
                                   {"text": "nested answer"}])
    first = _json(_tunaflow(harness, "ask", "start", "--json"))
    forked = _json(_tunaflow(harness, "ask", "in a branch", "--fork", str(first["message_id"]), "--json"))
    assert forked["conversation_id"] == f"branch:{forked['branch_id']}"
    assert forked["context_source"] == "native_fork", "forked at the last reply of a claude session"
    fork_call = [c for c in harness.calls() if c["role"] == "architect"][-1]
    assert "--fork-session" in fork_call["argv"] and fork_call["prompt"].strip() == "in a branch"
    again = _json(_tunaflow(harness, "ask", "more", "--to", str(forked["branch_id"]), "--json"))
    assert again["conversation_id"] == forked["conversation_id"] and again["answer"] == "second"
    nested = _json(_tunaflow(harness, "ask", "deeper", "--fork", str(forked["user_message_id"]), "--json"))
    assert nested["context_source"] == "inheritance", "a checkpoint before the branch's last turn inherits"
    status = _json(_tunaflow(harness, "status", "--json"))
    tree = {b["id"]: b for b in status["branches"]}
    child = tree[nested["branch_id"]]
    assert child["parent_branch_id"] == forked["branch_id"] and child["depth"] == 1
    assert child["checkpoint_message_id"] == forked["user_message_id"]
    parent = tree[forked["branch_id"]]
    assert parent["checkpoint_message_id"] == first["message_id"] and parent["git_branch"] == "main"
    assert parent["session_id"] and parent["context_source"] == "native_fork" and parent["kind"] == "general"
    with Store.open(harness.project) as store:
        main = store.get_conversation("main")
        assert main is not None and parent["session_id"] != main.native_session_id


def test_ask_refuses_bad_targets_and_changes_nothing(harness: Harness) -> None:
    _configure(harness)
    first = _json(_tunaflow(harness, "ask", "start", "--json"))
    before = _snapshot(harness)
    for args, expected in [
        (("--to", "branch:9"), "there is no branch 9"),
        (("--to", "nonsense"), "is not a conversation"),
        (("--fork", "999"), "there is no message 999"),
        (("--fork", str(first["message_id"]), "--engine", "nope"), "no engine named 'nope'"),
        (("--engine", "nope"), "no engine named 'nope'"),
    ]:
        out = _tunaflow(harness, "ask", "hello", *args)
        assert out.returncode == 1 and out.stdout == ""
        assert out.stderr.count("\n") == 1 and expected in out.stderr, out.stderr
    assert _snapshot(harness) == before


def test_branch_list_show_rename_archive_restore(harness: Harness) -> None:
    _configure(harness)
    first = _json(_tunaflow(harness, "ask", "start", "--json"))
    forked = _json(_tunaflow(harness, "ask", "branch q", "--fork", str(first["message_id"]), "--json"))
    bid = str(forked["branch_id"])
    [listed] = _json(_tunaflow(harness, "branch", "list", "--json"))
    assert listed["id"] == forked["branch_id"] and listed["messages"] == 2 and listed["status"] == "active"
    text = _tunaflow(harness, "branch", str(harness.project), "list")
    assert f"#{bid}" in text.stdout and "native fork" in text.stdout
    shown = _json(_tunaflow(harness, "branch", "show", bid, "--json"))
    assert shown["checkpoint_message_id"] == first["message_id"] and shown["children"] == []
    assert "branch q" in _tunaflow(harness, "branch", "show", f"branch:{bid}").stdout
    renamed = _json(_tunaflow(harness, "branch", "rename", bid, "JWT idea", "--json"))
    assert renamed["label"] == "JWT idea"
    assert _json(_tunaflow(harness, "branch", "archive", bid, "--json"))["status"] == "archived"
    refused = _tunaflow(harness, "ask", "still there?", "--to", bid)
    assert refused.returncode == 1 and "read-only" in refused.stderr
    assert _json(_tunaflow(harness, "branch", "restore", bid, "--json"))["status"] == "active"


def test_branch_adopt_with_a_summary_file_and_the_status_links(harness: Harness) -> None:
    _configure(harness)
    first = _json(_tunaflow(harness, "ask", "start", "--json"))
    forked = _json(_tunaflow(harness, "ask", "branch q", "--fork", str(first["message_id"]), "--json"))
    bid = str(forked["branch_id"])
    summary = harness.root / "summary.md"
    summary.write_text("We settled on PKCE.\n")
    doc = _json(_tunaflow(harness, "branch", "adopt", bid, "--summary-file", str(summary), "--json"))
    assert doc["branch"]["status"] == "adopted" and doc["adopt"]["summary"] == "We settled on PKCE."
    assert doc["adopt"]["message_count"] == 2 and doc["adopt"]["branch_id"] == forked["branch_id"]
    status = _json(_tunaflow(harness, "status", "--json"))
    [link] = status["session_links"]
    assert (link["from_conversation_id"], link["to_conversation_id"], link["note"]) == \
        ("main", forked["conversation_id"], "We settled on PKCE.")
    before = _snapshot(harness)
    again = _tunaflow(harness, "branch", "adopt", bid, "--summary-file", str(summary))
    assert again.returncode == 1 and again.stderr.strip() == f"tunaflow branch: branch {bid} is adopted already"
    assert _snapshot(harness) == before
    stdin = _tunaflow(harness, "ask", "b2", "--fork", str(first["message_id"]), "--json")
    b2 = str(_json(stdin)["branch_id"])
    piped = _tunaflow(harness, "branch", "adopt", b2, "--summary-file", "-", stdin="From stdin.")
    assert piped.returncode == 0 and "From stdin." in piped.stdout


def test_branch_adopt_by_the_summarizer(harness: Harness) -> None:
    _configure(harness, architect=[{"text": "An answer."}], summarizer=[{"text": "Summary: PKCE wins."}])
    first = _json(_tunaflow(harness, "ask", "start", "--json"))
    bid = str(_json(_tunaflow(harness, "ask", "q", "--fork", str(first["message_id"]), "--json"))["branch_id"])
    out = _tunaflow(harness, "branch", "adopt", bid)
    assert out.returncode == 0, out.stderr
    assert f"Adopted branch {bid}" in out.stdout and "Summary: PKCE wins." in out.stdout


def test_branch_delete_rules_and_errors(harness: Harness) -> None:
    _configure(harness)
    first = _json(_tunaflow(harness, "ask", "start", "--json"))
    bid = str(_json(_tunaflow(harness, "ask", "q", "--fork", str(first["message_id"]), "--json"))["branch_id"])
    before = _snapshot(harness)
    for args, expected in [
        (("delete", "main"), "the main conversation cannot be deleted"),
        (("delete", bid), "removes its 2 messages; run again with --yes"),
        (("show", "77"), "there is no branch 77"),
        (("archive", "x"), "is not a conversation"),
        (("adopt", "main"), "main is the project's conversation, not a branch"),
        (("rename", bid, "  "), "cannot be empty"),
        (("frobnicate", bid), "unknown action 'frobnicate'"),
        (("show",), "show takes the branch ID"),
    ]:
        out = _tunaflow(harness, "branch", *args)
        usage = args[0] == "frobnicate" or len(args) == 1  # the command line itself is wrong: exit 2
        assert out.returncode == (2 if usage else 1), (args, out.stderr)
        assert out.stderr.count("\n") == 1 and expected in out.stderr, (args, out.stderr)
    assert _snapshot(harness) == before
    deleted = _tunaflow(harness, "branch", "delete", bid, "--yes")
    assert deleted.returncode == 0 and "its messages were removed" in deleted.stdout
    with Store.open(harness.project) as store:
        assert store.list_branches() == () and store.count_messages(f"branch:{bid}") == 0


def test_branch_commands_in_a_project_without_conversations(harness: Harness) -> None:
    assert _tunaflow(harness, "branch", "list", "--json").stdout.strip() == "[]"
    out = _tunaflow(harness, "branch", "show", "1")
    assert out.returncode == 1 and "no tunaflow conversations yet" in out.stderr
    assert not (harness.project / ".tunaflow").exists()


def test_ask_fork_names_the_new_branch_on_stderr_in_plain_mode(harness: Harness) -> None:
    _configure(harness, architect=[{"text": "first"}, {"text": "in the branch"}])
    first = _json(_tunaflow(harness, "ask", "start", "--json"))
    out = _tunaflow(harness, "ask", "try another way", "--fork", str(first["message_id"]))
    assert out.returncode == 0, out.stderr
    assert out.stdout == "in the branch\n", "stdout stays the answer alone"
    with Store.open(harness.project) as store:
        [branch] = store.list_branches()
    assert (f"tunaflow ask: asking in branch {branch.id}, forked at message {first['message_id']}; "
            f"continue it with --to {branch.id}\n") in out.stderr

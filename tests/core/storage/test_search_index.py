"""The full-text index holds exactly the finished messages, written once when a message finishes.

These tests read the FTS5 index itself (through ``fts5vocab``), not search results: a term that is
indexed but belongs to no message, or a message indexed twice, shows up here.
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from tunaflow_tui.core.storage import Store
from tunaflow_tui.core.turns import ToolLine, Usage


@contextmanager
def _connect(store: Store) -> Iterator[sqlite3.Connection]:
    conn = sqlite3.connect(store.path, isolation_level=None)
    try:
        conn.execute("PRAGMA foreign_keys = ON")
        conn.execute("CREATE VIRTUAL TABLE temp.terms USING fts5vocab(main, messages_fts, 'instance')")
        yield conn
    finally:
        conn.close()


def indexed(store: Store) -> dict[int, list[str]]:
    """What the FTS index holds: message id → its terms in order."""
    with _connect(store) as conn:
        found: dict[int, list[str]] = {}
        for term, doc in conn.execute("SELECT term, doc FROM temp.terms ORDER BY doc, offset"):
            found.setdefault(doc, []).append(term)
    return found


def index_pages(store: Store) -> list[tuple[object, ...]]:
    """The raw pages of the index: any write to it changes them."""
    with _connect(store) as conn:
        return (conn.execute("SELECT * FROM messages_fts_data ORDER BY id").fetchall()
                + conn.execute("SELECT * FROM messages_fts_docsize ORDER BY id").fetchall())


def words(text: str) -> list[str]:
    return re.findall(r"\w+", text.lower())


def assert_consistent(store: Store) -> None:
    """FTS5's own check that the index matches its content (the finished messages), term by term."""
    with _connect(store) as conn:
        conn.execute("INSERT INTO messages_fts(messages_fts, rank) VALUES ('integrity-check', 1)")


def test_a_finished_message_is_indexed_once_and_a_streaming_one_not_at_all(store: Store) -> None:
    user = store.add_message("main", "user", "Fix the login page")
    reply = store.add_message("main", "assistant", "", status="streaming")
    assert indexed(store) == {user.id: ["fix", "the", "login", "page"]}
    before = index_pages(store)
    text = ""
    for chunk in ("Reading the handler. ", "The session cookie ", "expires too early. ", "Patched it."):
        text += chunk
        store.update_message(reply.id, content=text, tools=[ToolLine("Read", "auth.py")])
    assert index_pages(store) == before  # streaming flushes never wrote to the index
    store.update_message(reply.id, content=text, status="done", usage=Usage(10, 20))
    assert indexed(store) == {user.id: words(user.content), reply.id: words(text)}
    finished = index_pages(store)
    store.update_message(reply.id, usage=Usage(11, 21), tools=[ToolLine("Edit", "auth.py")])
    store.update_message(reply.id, content=text)  # the same text again
    assert index_pages(store) == finished  # nothing about the text changed: the index is untouched
    assert_consistent(store)


def test_an_edit_after_finishing_replaces_the_indexed_text(store: Store) -> None:
    msg = store.add_message("main", "assistant", "the first answer", persona="architect")
    other = store.add_message("main", "user", "an unrelated question")
    store.update_message(msg.id, content="a corrected answer")
    assert indexed(store) == {msg.id: ["a", "corrected", "answer"], other.id: words(other.content)}
    store.update_message(msg.id, status="error", error_kind="crashed", error_message="boom")
    assert indexed(store)[msg.id] == ["a", "corrected", "answer"]
    store.update_message(msg.id, status="streaming")  # taken back to streaming: out of the index
    assert indexed(store) == {other.id: words(other.content)}
    assert_consistent(store)


def test_failed_and_interrupted_replies_are_indexed_with_their_partial_text(store: Store) -> None:
    failed = store.add_message("main", "assistant", "", status="streaming")
    store.update_message(failed.id, content="partial before the crash", status="error", error_kind="crashed")
    stopped = store.add_message("main", "assistant", "cancelled halfway", status="interrupted")
    assert indexed(store) == {failed.id: words("partial before the crash"), stopped.id: ["cancelled", "halfway"]}


def test_deleting_messages_conversations_and_branches_leaves_nothing_behind(store: Store) -> None:
    keep = store.add_message("main", "user", "keep this one")
    gone = store.add_message("main", "user", "delete this one")
    live = store.add_message("main", "assistant", "still streaming", status="streaming")
    branch = store.create_branch(conversation_id="main", checkpoint_id=keep.id, parent_branch_id=None,
                                 mode="chat", kind="general", label="side")
    in_branch = store.add_message(branch.shadow_conversation_id, "assistant", "branch reply")
    adopted = store.create_branch(conversation_id="main", checkpoint_id=keep.id, parent_branch_id=None,
                                  mode="chat", kind="general", label="kept")
    in_adopted = store.add_message(adopted.shadow_conversation_id, "user", "adopted words")
    store.update_branch(adopted.id, status="adopted")
    assert set(indexed(store)) == {keep.id, gone.id, in_branch.id, in_adopted.id}
    with _connect(store) as conn:
        conn.execute("DELETE FROM messages WHERE id IN (?, ?)", (gone.id, live.id))
    assert set(indexed(store)) == {keep.id, in_branch.id, in_adopted.id}
    store.delete_branch(branch.id)  # an active branch takes its messages with it
    store.delete_branch(adopted.id)  # an adopted one leaves its conversation for citations
    assert set(indexed(store)) == {keep.id, in_adopted.id}
    with _connect(store) as conn:  # a conversation deleted outright: its messages cascade out
        conn.execute("DELETE FROM conversations WHERE id = ?", (adopted.shadow_conversation_id,))
    assert indexed(store) == {keep.id: ["keep", "this", "one"]}
    assert_consistent(store)


def test_a_crashed_run_s_streaming_reply_is_indexed_when_it_is_marked_interrupted(project_dir: Path) -> None:
    with Store.open(project_dir) as store:
        msg = store.add_message("main", "assistant", "", status="streaming")
        store.update_message(msg.id, content="half a thought")  # then the process dies: nothing finishes it
    assert msg.id not in indexed(store)
    with Store.open(project_dir) as reopened:
        assert reopened.recovered_message_ids == (msg.id,)
        assert indexed(reopened) == {msg.id: ["half", "a", "thought"]}


def test_an_older_index_is_rebuilt_to_hold_finished_messages_only(tmp_path: Path) -> None:
    from tunaflow_tui.core.storage.schema import MIGRATIONS, apply_migrations

    conn = sqlite3.connect(tmp_path / "old.db", isolation_level=None)
    try:
        apply_migrations(conn, MIGRATIONS[:4])  # the last schema that indexed every flush
        conn.execute("INSERT INTO projects VALUES (1, '/p', 'p', 'now')")
        conn.execute("INSERT INTO conversations(id, project_id, created_at) VALUES ('main', 1, 'now')")
        for status, text in (("done", "finished words"), ("streaming", "flushed words")):
            conn.execute("INSERT INTO messages(conversation_id, role, status, content, created_at, updated_at)"
                         " VALUES ('main', 'assistant', ?, ?, 'now', 'now')", (status, text))
        assert conn.execute("SELECT count(*) FROM messages_fts WHERE messages_fts MATCH 'flushed'").fetchone() == (1,)
        apply_migrations(conn)
        conn.execute("CREATE VIRTUAL TABLE temp.terms USING fts5vocab(main, messages_fts, 'instance')")
        assert conn.execute("SELECT doc, term FROM temp.terms ORDER BY doc, offset").fetchall() == [
            (1, "finished"), (1, "words")]
        conn.execute("INSERT INTO messages_fts(messages_fts, rank) VALUES ('integrity-check', 1)")
    finally:
        conn.close()

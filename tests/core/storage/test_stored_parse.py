"""A finished message is parsed for markers once, when it finishes, and read back from the database."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from tunaflow_tui.controllers.sources import StoreMessageSource
from tunaflow_tui.core.markers import MarkerSummary
from tunaflow_tui.core.markers import parser as marker_parser
from tunaflow_tui.core.storage import Store
from tunaflow_tui.core.storage.schema import MIGRATIONS, apply_migrations

PROPOSAL = (
    "Here is the plan.\n\n<!-- tunaflow:plan-proposal -->\n## Title: Add login\n### Subtasks\n1. Form\n2. Handler\n"
    "<!-- /tunaflow:plan-proposal -->\n\nSay the word."
)


def _stored(store: Store, message_id: int) -> object:
    conn = sqlite3.connect(store.path)
    try:
        (text,) = conn.execute("SELECT parsed FROM messages WHERE id = ?", (message_id,)).fetchone()
    finally:
        conn.close()
    return None if text is None else json.loads(text)


class _Counting:
    """Counts every parse, whoever calls the parser (each parse starts by finding the marker comments)."""

    def __init__(self, real: object) -> None:
        self.real = real
        self.calls = 0

    def __call__(self, text: str) -> object:
        self.calls += 1
        return self.real(text)  # type: ignore[operator]


@pytest.fixture
def parses(monkeypatch: pytest.MonkeyPatch) -> _Counting:
    counting = _Counting(marker_parser.find_marker_comments)
    monkeypatch.setattr(marker_parser, "find_marker_comments", counting)
    return counting


def test_a_reply_is_parsed_when_it_finishes_and_kept(store: Store, parses: _Counting) -> None:
    reply = store.add_message("main", "assistant", "", persona="architect", status="streaming")
    store.update_message(reply.id, content=PROPOSAL[:60])
    streaming = store.update_message(reply.id, content=PROPOSAL)
    assert parses.calls == 0  # nothing is parsed while it streams
    assert _stored(store, reply.id) is None
    assert (streaming.display_text, streaming.markers) == (PROPOSAL, ())
    done = store.update_message(reply.id, status="done")
    assert parses.calls == 1
    assert done.display_text == "Here is the plan.\n\n\nSay the word."
    assert done.markers == (MarkerSummary("plan-proposal", True, "Plan proposal: Add login · 2 subtasks"),)
    assert _stored(store, reply.id) == {
        "display_text": done.display_text,
        "markers": [{"kind": "plan-proposal", "accepted": True, "text": "Plan proposal: Add login · 2 subtasks"}],
    }


def test_loading_a_conversation_reads_the_stored_parse(store: Store, parses: _Counting) -> None:
    with store.transaction():
        for n in range(30):
            store.add_message("main", "assistant", f"step {n}\n<!-- tunaflow:subtask-done:{n} -->", persona="developer")
    assert parses.calls == 30
    source = StoreMessageSource(store, "main")
    views = list(source.window(None, 30))
    views += source.after(views[0].id, 30)
    assert store.get_message(views[0].id) is not None and store.list_messages("main", limit=30)
    assert parses.calls == 30  # the windows, pages and single reads parsed nothing again
    assert views[-1].content == "step 29\n"
    assert store.get_message(views[-1].id).markers == (  # type: ignore[union-attr]
        MarkerSummary("subtask-done", True, "Subtask 29 done"),)


def test_messages_added_in_bulk_are_parsed_once_each(store: Store, parses: _Counting) -> None:
    store.add_messages("main", [
        {"role": "assistant", "persona": "developer", "content": "ok <!-- tunaflow:impl-complete -->"},
        {"role": "user", "content": "thanks"},
        {"role": "assistant", "persona": "developer", "content": "still going", "status": "streaming"},
    ])
    assert parses.calls == 2
    done, thanks, going = store.list_messages("main")
    assert (done.display_text, done.markers[0].kind) == ("ok ", "impl-complete")
    assert (_stored(store, thanks.id), _stored(store, going.id)) == ({}, None)
    assert parses.calls == 2


def test_only_a_changed_text_is_parsed_again(store: Store, parses: _Counting) -> None:
    msg = store.add_message("main", "assistant", "first <!-- tunaflow:impl-complete -->", persona="developer")
    store.update_message(msg.id, error_kind="x", native_session_id="s")
    assert parses.calls == 1
    edited = store.update_message(msg.id, content="second, no markers")
    assert parses.calls == 2
    assert (edited.display_text, edited.markers) == ("second, no markers", ())
    assert _stored(store, msg.id) == {}  # plain text: the content is the display text, not stored twice
    back = store.update_message(msg.id, status="streaming")
    assert _stored(store, msg.id) is None and back.markers == ()


def test_whose_marker_it_is_decides_and_system_notes_are_shown_as_written(store: Store) -> None:
    pasted = store.add_message("main", "user", PROPOSAL)  # a user may not propose a plan
    assert pasted.markers == (MarkerSummary("plan-proposal", False, "Plan proposal: Add login · 2 subtasks"),)
    assert "`` <!-- tunaflow:plan-proposal --> ``" in pasted.display_text  # shown inert, not hidden
    note = store.add_message("main", "system", "<!-- tunaflow:impl-complete --> noted")
    assert (note.display_text, note.markers) == (note.content, ())


def test_an_interrupted_reply_is_parsed_when_recovered(project_dir: Path) -> None:
    with Store.open(project_dir) as store:
        msg = store.add_message("main", "assistant", "", persona="developer", status="streaming")
        store.update_message(msg.id, content="done with one <!-- tunaflow:subtask-done:1 --> and then")
    with Store.open(project_dir) as store:
        recovered = store.get_message(msg.id)
        assert recovered is not None and recovered.status == "interrupted"
        assert recovered.display_text == "done with one  and then"
        assert _stored(store, msg.id) == {"display_text": "done with one  and then", "markers": [
            {"kind": "subtask-done", "accepted": True, "text": "Subtask 1 done"}]}


def test_messages_of_an_older_database_are_parsed_once_on_upgrade(project_dir: Path,
                                                                   parses: _Counting) -> None:
    path = project_dir / ".tunaflow" / "state.db"
    path.parent.mkdir()
    conn = sqlite3.connect(path, isolation_level=None)
    try:
        apply_migrations(conn, MIGRATIONS[:5])
        conn.execute("INSERT INTO projects VALUES (1, ?, 'proj', '2024-05-01T10:00:00+00:00')",
                     (str(project_dir.resolve()),))
        conn.execute("INSERT INTO conversations(id, project_id, created_at) VALUES ('main', 1, 'now')")
        rows = [("assistant", "architect", "done", PROPOSAL), ("user", None, "done", "plain words"),
                ("assistant", "developer", "streaming", "half <!-- tunaflow:impl-complete")]
        for role, persona, status, content in rows:
            conn.execute("INSERT INTO messages(conversation_id, role, persona, status, content, created_at,"
                         " updated_at) VALUES ('main', ?, ?, ?, ?, '2024-05-01T10:00:00+00:00',"
                         " '2024-05-01T10:00:00+00:00')", (role, persona, status, content))
    finally:
        conn.close()
    with Store.open(project_dir) as store:  # the owner: the streaming reply is recovered as well
        assert parses.calls == 3
        assert _stored(store, 1) is not None and _stored(store, 2) == {} and _stored(store, 3) == {}
        proposal, plain, half = store.list_messages("main")
        assert proposal.display_text == "Here is the plan.\n\n\nSay the word."
        assert plain.display_text == "plain words"
        assert half.status == "interrupted" and half.display_text == half.content
    with Store.open(project_dir) as store:
        store.list_messages("main")
    assert parses.calls == 3  # once each, ever


def test_a_row_written_around_the_store_is_still_shown_without_markers(store: Store) -> None:
    store.main_conversation()
    conn = sqlite3.connect(store.path)
    try:
        conn.execute("INSERT INTO messages(conversation_id, role, persona, status, content, created_at, updated_at)"
                     " VALUES ('main', 'assistant', 'developer', 'done', 'x <!-- tunaflow:impl-complete -->',"
                     " '2024-05-01T10:00:00+00:00', '2024-05-01T10:00:00+00:00')")
        conn.commit()
    finally:
        conn.close()
    (message,) = store.list_messages("main")
    assert message.display_text == "x " and message.markers[0].kind == "impl-complete"

"""Continuing a conversation in its engine's own CLI: the command, the folder, and the record of its end."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from tunaflow_tui.core.settings import EngineConfig, Settings
from tunaflow_tui.core.storage import Store
from tunaflow_tui.runtime.events import MessageAdded, RuntimeEvent
from tunaflow_tui.runtime.native_sessions import (
    NATIVE_RECORD_KIND,
    NativeSessionUnavailable,
    announce_record,
    duration_words,
    native_launch,
    write_record,
)


@dataclass
class Host:
    store: Store
    settings: Settings
    project_dir: Path
    events: list[RuntimeEvent] = field(default_factory=list)

    def emit(self, event: RuntimeEvent) -> None:
        self.events.append(event)

    def progress(self, text: str) -> None:
        pass


@pytest.fixture
def host(tmp_path: Path) -> Iterator[Host]:
    project = tmp_path / "project"
    project.mkdir()
    store = Store.open(project)
    engines = {"claude": EngineConfig(name="claude", type="claude", model="opus", env={"ANTHROPIC_BASE_URL": "x"}),
               "codex": EngineConfig(name="codex", type="codex"),
               "demo": EngineConfig(name="demo", type="demo")}
    yield Host(store, Settings(engines=engines), project)
    store.close()


def test_main_resumes_its_session_in_the_project(host: Host) -> None:
    host.store.set_native_session("main", "claude", "sess-1")
    launch = native_launch(host, "main")
    assert launch.argv == ("claude", "--resume", "sess-1", "--model", "opus")
    assert launch.cwd == host.project_dir
    assert (launch.engine, launch.session_id) == ("claude", "sess-1")
    # the engine's environment, and claude kept off the alternate screen so the pane's scrollback works
    assert launch.env == {"ANTHROPIC_BASE_URL": "x", "CLAUDE_CODE_DISABLE_ALTERNATE_SCREEN": "1"}


def test_a_branch_with_a_worktree_resumes_there(host: Host, tmp_path: Path) -> None:
    worktree = tmp_path / "worktree"
    worktree.mkdir()
    branch = host.store.create_branch(conversation_id="main", checkpoint_id=None, parent_branch_id=None,
                                      mode="chat", kind="implementation", label="dev", worktree_path=str(worktree))
    cid = f"branch:{branch.id}"
    host.store.set_native_session(cid, "codex", "thread-9")
    launch = native_launch(host, cid)
    assert launch.cwd == worktree
    assert launch.argv == ("codex", "resume", "--no-daemon", "-C", str(worktree), "thread-9")
    assert launch.env == {}


@pytest.mark.parametrize(("engine", "session", "message"), [
    (None, None, "This conversation has no native session yet: send a message first."),
    ("gone", "s", "The engine 'gone' is no longer configured."),
    ("demo", "s", "only claude, codex and gemini conversations can be continued natively."),
])
def test_what_cannot_be_continued_natively_says_why(host: Host, engine: str | None, session: str | None,
                                                    message: str) -> None:
    if engine is not None:
        host.store.set_native_session("main", engine, session)
    with pytest.raises(NativeSessionUnavailable) as raised:
        native_launch(host, "main")
    assert message in str(raised.value)


@pytest.mark.parametrize(("seconds", "words"), [(5, "under 1 min"), (60, "1 min"), (14 * 60 + 59, "14 min"),
                                                (2 * 3600 + 5 * 60, "2 h 5 min")])
def test_the_record_says_how_long_in_minutes(seconds: float, words: str) -> None:
    assert duration_words(seconds) == words


def test_the_end_is_recorded_with_the_session_id_and_the_session_is_kept_for_the_next_turn(host: Host) -> None:
    host.store.set_native_session("main", "claude", "sess-1")
    launch = native_launch(host, "main")
    record = write_record(host.store, launch, 14 * 60 + 3, 0)
    announce_record(host, record)
    assert record.content == ("native session, 14 min, ended: claude session `sess-1`; the next turn here "
                              "resumes it.")
    assert record.role == "system"
    assert record.meta["kind"] == NATIVE_RECORD_KIND and record.meta["session_id"] == "sess-1"
    assert host.events == [MessageAdded("main", record.id, "system")]
    conversation = host.store.get_conversation("main")
    assert conversation is not None and conversation.native_session_id == "sess-1"
    killed = write_record(host.store, launch, 30, -9)
    assert "ended (ended by signal 9)" in killed.content


WRITER = """
import sys
from pathlib import Path
from tunaflow_tui.core.storage import Store
store = Store.open(Path(sys.argv[1]), claim_ownership=False)
for n in range(20):
    store.add_message("main", "user", f"from the other process {n}")
store.close()
"""


def test_the_record_lands_while_another_process_writes_the_same_conversation(host: Host) -> None:
    host.store.set_native_session("main", "claude", "sess-1")
    launch = native_launch(host, "main")
    other = subprocess.Popen([sys.executable, "-c", WRITER, str(host.project_dir)])
    records = [write_record(host.store, launch, 90, 0) for _ in range(3)]
    assert other.wait(timeout=60) == 0
    contents = [m.content for m in host.store.list_messages("main", limit=100)]
    assert sum(c.startswith("native session, 1 min, ended") for c in contents) == 3
    assert sum(c.startswith("from the other process") for c in contents) == 20
    assert all(r.meta["session_id"] == "sess-1" for r in records)

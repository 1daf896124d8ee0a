"""A conversation continued in its engine's own interactive CLI: what to run, where, and the record it leaves.

The CLI resumes the conversation's stored native session in the folder that session ran in (the
branch's worktree, else the project), so what the user does there is in the agent's memory; the
next tunaflow turn resumes the same session id. When the CLI ends, the conversation gets a record:
"native session, 14 min, ended", with the session id.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from tunaflow_tui.agents.handover import HandoverUnsupportedError, native_cli_argv
from tunaflow_tui.runtime.events import MessageAdded
from tunaflow_tui.runtime.ports import Emitter, ProjectData

if TYPE_CHECKING:
    from tunaflow_tui.core.storage import Store
    from tunaflow_tui.core.storage.records import MessageRecord

NATIVE_RECORD_KIND = "native_session"
"""``meta.kind`` of the record a finished native session leaves in its conversation."""


class NativeSessionUnavailable(ValueError):
    """The conversation cannot be continued natively now; the message says why, in the user's words."""


class NativeHost(ProjectData, Emitter, Protocol):
    """What opening and recording a native session uses of the runtime: the project's data, and the screen."""


@dataclass(frozen=True, slots=True)
class NativeLaunch:
    """One native CLI to start: for which conversation, on which engine and session, the argv, the folder and
    the environment it adds (the engine's own ``env``)."""

    conversation_id: str
    engine: str
    session_id: str
    argv: tuple[str, ...]
    cwd: Path
    env: Mapping[str, str] = field(default_factory=dict)


def working_dir(rt: NativeHost, conversation_id: str) -> Path:
    """The folder a conversation's turns run in: a branch's worktree where it has one, else the project."""
    if conversation_id.startswith("branch:"):
        branch = rt.store.get_branch(int(conversation_id.removeprefix("branch:")))
        if branch is not None and branch.worktree_path and Path(branch.worktree_path).is_dir():
            return Path(branch.worktree_path)
    return rt.project_dir


def native_launch(rt: NativeHost, conversation_id: str) -> NativeLaunch:
    """What to run to continue ``conversation_id`` in its engine's CLI; :class:`NativeSessionUnavailable` if nothing."""
    conversation = rt.store.get_conversation(conversation_id)
    if conversation is None or not conversation.native_session_id or not conversation.native_engine:
        raise NativeSessionUnavailable("This conversation has no native session yet: send a message first.")
    config = rt.settings.engines.get(conversation.native_engine)
    if config is None:
        raise NativeSessionUnavailable(f"The engine {conversation.native_engine!r} is no longer configured.")
    cwd = working_dir(rt, conversation_id)
    try:
        argv = native_cli_argv(config.effective_type, config, conversation.native_session_id, cwd)
    except (HandoverUnsupportedError, ValueError) as exc:
        raise NativeSessionUnavailable(str(exc)) from exc
    env = dict(config.env)
    if config.effective_type == "claude":
        # Claude Code's fullscreen renderer draws on the alternate screen, where the pane keeps no scrollback;
        # the choice is stored globally in ~/.claude/settings.json, so it is set here for this session only
        env.setdefault("CLAUDE_CODE_DISABLE_ALTERNATE_SCREEN", "1")
    return NativeLaunch(conversation_id, conversation.native_engine, conversation.native_session_id, tuple(argv),
                        cwd, env)


def duration_words(seconds: float) -> str:
    """How long a session lasted, as the record says it: ``under 1 min``, ``14 min``, ``2 h 5 min``."""
    minutes = int(seconds // 60)
    if minutes < 1:
        return "under 1 min"
    if minutes < 60:
        return f"{minutes} min"
    return f"{minutes // 60} h {minutes % 60} min"


def record_text(launch: NativeLaunch, seconds: float, exit_code: int | None) -> str:
    """The record's text."""
    how = "" if exit_code in (0, None) else (f" (exit code {exit_code})" if exit_code > 0
                                             else f" (ended by signal {-exit_code})")
    return (f"native session, {duration_words(seconds)}, ended{how}: {launch.engine} session "
            f"`{launch.session_id}`; the next turn here resumes it.")


def write_record(store: Store, launch: NativeLaunch, seconds: float, exit_code: int | None) -> MessageRecord:
    """Store the record of a finished native session in its conversation (any thread)."""
    meta: dict[str, object] = {"kind": NATIVE_RECORD_KIND, "engine": launch.engine, "session_id": launch.session_id,
                               "seconds": round(seconds, 1), "exit_code": exit_code, "cwd": str(launch.cwd)}
    return store.add_message(launch.conversation_id, "system", record_text(launch, seconds, exit_code), meta=meta)


def announce_record(rt: NativeHost, record: MessageRecord) -> None:
    """Tell the screen about a stored record (on the loop)."""
    rt.emit(MessageAdded(record.conversation_id, record.id, "system"))

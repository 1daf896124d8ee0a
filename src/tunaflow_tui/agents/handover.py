"""Hand the terminal to an engine's own interactive CLI, resuming the conversation's native session.

The UI suspends itself, runs the argv returned here (with ``cwd`` as the working directory — claude
and gemini find sessions per directory), and comes back when the CLI exits.
"""

from __future__ import annotations

from pathlib import Path

from tunaflow_tui.core.settings.engines import EngineConfig

#: flags each native resume command uses (checked against the captured ``--help`` texts)
HANDOVER_FLAGS: dict[str, frozenset[str]] = {
    "claude": frozenset({"--resume", "--model"}),
    "codex": frozenset({"-C", "-m", "--no-daemon"}),
    "gemini": frozenset({"--resume", "-m"}),
}
_DEFAULT_COMMANDS = {"claude": "claude", "codex": "codex", "gemini": "gemini"}


class HandoverUnsupportedError(ValueError):
    """The engine has no interactive CLI that can resume a session."""


def native_cli_argv(engine_type: str, config: EngineConfig, session_id: str, cwd: Path) -> list[str]:
    """The argv that opens the engine's interactive CLI on ``session_id`` (run it with cwd = ``cwd``).

    ``claude --resume ID``, ``codex resume --no-daemon ID`` (with ``-C cwd``), ``gemini --resume ID``; plus the
    configured model. Raises :class:`HandoverUnsupportedError` for engines without a native CLI and
    ``ValueError`` when there is no session to resume yet.
    """
    if engine_type not in _DEFAULT_COMMANDS:
        raise HandoverUnsupportedError(
            f"The {engine_type!r} engine has no interactive CLI to hand the terminal to; "
            "only claude, codex and gemini conversations can be continued natively.")
    if not session_id:
        raise ValueError("This conversation has no native session yet: send a message first.")
    command = config.command or _DEFAULT_COMMANDS[engine_type]
    model = config.model
    if engine_type == "claude":
        return [command, "--resume", session_id, *(["--model", model] if model else [])]
    if engine_type == "codex":
        # without --no-daemon the TUI starts a shared background server that outlives it (and its group)
        return [command, "resume", "--no-daemon", "-C", str(cwd), *(["-m", model] if model else []), session_id]
    return [command, "--resume", session_id, *(["-m", model] if model else [])]

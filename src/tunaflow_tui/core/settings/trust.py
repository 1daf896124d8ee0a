"""Workspace trust: a project's own configuration runs nothing until its user trusted it.

A repository can ship ``.tunaflow/config.toml``; whoever cloned it has not read it. Its keys that
name something to execute, somewhere to send prompts or a security switch (the *command keys*:
an engine's ``command``, ``extra_args``, ``env``, ``base_url``, ``api_key_env``; the workflow's
``test_command``, ``worktree_setup``, ``worktree_root``, ``allow_push``) apply only once the user
trusted the project; every other key (roles, themes, caps, timeouts) always applies.

The decision lives in the user's state directory, never in the project: a record per project,
keyed by the real path of its folder (a symlinked spelling is the same project) and holding the
sha256 of the canonical command keys. Editing a command key changes the hash, so the project asks
again (as direnv does); editing a theme does not. "Never" is remembered for that content too.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Any

from tunaflow_tui.core.config_paths import APP_NAME

_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")  # a hostile table name must not drive the terminal
ENGINE_COMMAND_KEYS: tuple[str, ...] = ("command", "extra_args", "env", "base_url", "api_key_env",
                                        "allow_commands")
WORKFLOW_COMMAND_KEYS: tuple[str, ...] = ("test_command", "worktree_setup", "worktree_root", "allow_push")


class TrustState(StrEnum):
    """Where a project stands with its user."""

    NOTHING_TO_TRUST = "nothing_to_trust"  # its configuration names no commands
    TRUSTED = "trusted"  # the user trusted exactly these commands
    UNTRUSTED = "untrusted"  # never decided, or the commands changed since
    DENIED = "denied"  # the user said never for these commands


def command_keys(data: Mapping[str, Any]) -> dict[str, Any]:
    """The command keys of one configuration file's data, as ``{"engines.x.command": value, …}``."""
    found: dict[str, Any] = {}
    engines = data.get("engines")
    if isinstance(engines, Mapping):
        for name, table in engines.items():
            if isinstance(table, Mapping):
                for key in ENGINE_COMMAND_KEYS:
                    if key in table:
                        found[f"engines.{name}.{key}"] = table[key]
    workflow = data.get("workflow")
    if isinstance(workflow, Mapping):
        for key in WORKFLOW_COMMAND_KEYS:
            if key in workflow:
                found[f"workflow.{key}"] = workflow[key]
    return found


def without_command_keys(data: Mapping[str, Any]) -> dict[str, Any]:
    """``data`` with its command keys removed (what applies while the project is not trusted)."""
    cleaned: dict[str, Any] = dict(data)
    engines = data.get("engines")
    if isinstance(engines, Mapping):
        cleaned["engines"] = {
            name: ({k: v for k, v in table.items() if k not in ENGINE_COMMAND_KEYS}
                   if isinstance(table, Mapping) else table)
            for name, table in engines.items()
        }
    workflow = data.get("workflow")
    if isinstance(workflow, Mapping):
        cleaned["workflow"] = {k: v for k, v in workflow.items() if k not in WORKFLOW_COMMAND_KEYS}
    return cleaned


def fingerprint(commands: Mapping[str, Any]) -> str:
    """sha256 of the canonical form of the command keys (sorted keys, JSON)."""
    canonical = json.dumps(commands, sort_keys=True, ensure_ascii=False, separators=(",", ":"), default=str)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def describe(commands: Mapping[str, Any]) -> list[str]:
    """One line per command key, as the user should read them before trusting (env: names only)."""
    lines = []
    for key in sorted(commands):
        value = commands[key]
        if key.endswith(".env") and isinstance(value, Mapping):
            shown = "{" + ", ".join(f"{name} = …" for name in sorted(value)) + "}"
        else:
            shown = json.dumps(value, ensure_ascii=False, default=str)
        lines.append(f"{_CONTROL.sub('?', key)} = {shown}")
    return lines


def state_dir() -> Path:
    """The user's state directory for tunaflow (``$XDG_STATE_HOME/tunaflow`` where set)."""
    xdg = os.environ.get("XDG_STATE_HOME")
    if xdg:
        return Path(xdg) / APP_NAME
    import platformdirs

    return Path(platformdirs.user_state_dir(APP_NAME))


def project_key(project_dir: Path) -> str:
    """The key of a project's record: the real path of its folder."""
    return os.path.realpath(project_dir)


@dataclass(frozen=True, slots=True)
class ProjectTrust:
    """A project's command keys and what its user decided about them."""

    project: Path
    commands: dict[str, Any]
    state: TrustState

    @property
    def lines(self) -> list[str]:
        """The command keys, one line each, for a prompt or a refusal."""
        return describe(self.commands)


class TrustStore:
    """The user's decisions, one JSON file in the state directory, changed under a file lock."""

    def __init__(self, directory: Path | None = None) -> None:
        """A store in ``directory`` (default: :func:`state_dir`)."""
        self.path = (directory or state_dir()) / "trust.json"

    def _read(self) -> dict[str, dict[str, str]]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (FileNotFoundError, ValueError):
            return {"trusted": {}, "denied": {}}
        if not isinstance(data, dict):
            return {"trusted": {}, "denied": {}}
        return {part: dict(data.get(part) or {}) for part in ("trusted", "denied")}

    @contextlib.contextmanager
    def _locked(self) -> Iterator[dict[str, dict[str, str]]]:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with open(self.path.with_suffix(".lock"), "a", encoding="utf-8") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            data = self._read()
            yield data
            partial = self.path.with_suffix(f".{os.getpid()}.part")
            partial.write_text(json.dumps(data, indent=1, sort_keys=True), encoding="utf-8")
            os.replace(partial, self.path)

    def state(self, project_dir: Path, commands: Mapping[str, Any]) -> TrustState:
        """What the user decided about exactly these commands in this project."""
        if not commands:
            return TrustState.NOTHING_TO_TRUST
        data, key, digest = self._read(), project_key(project_dir), fingerprint(commands)
        if data["trusted"].get(key) == digest:
            return TrustState.TRUSTED
        if data["denied"].get(key) == digest:
            return TrustState.DENIED
        return TrustState.UNTRUSTED

    def trust(self, project_dir: Path, commands: Mapping[str, Any]) -> None:
        """Remember that the user trusts these commands in this project (replacing an older decision)."""
        with self._locked() as data:
            key = project_key(project_dir)
            data["trusted"][key] = fingerprint(commands)
            data["denied"].pop(key, None)

    def deny(self, project_dir: Path, commands: Mapping[str, Any]) -> None:
        """Remember "never" for these commands in this project (they are not asked about again)."""
        with self._locked() as data:
            key = project_key(project_dir)
            data["denied"][key] = fingerprint(commands)
            data["trusted"].pop(key, None)

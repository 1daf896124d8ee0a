"""Read the user and project TOML files, merge them over the defaults, apply env overrides, validate."""

from __future__ import annotations

import difflib
import os
import re
import shutil
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import platformdirs
from pydantic import ValidationError

from tunaflow_tui.core.config_paths import APP_NAME, project_config_path, user_config_path
from tunaflow_tui.core.settings.setting_models import ENGINE_TYPES, ROLE_NAMES, Settings
from tunaflow_tui.core.settings.settings_errors import SettingsError
from tunaflow_tui.core.settings.trust import (
    ProjectTrust,
    TrustState,
    TrustStore,
    command_keys,
    without_command_keys,
)

ENV_PREFIX = "TUNAFLOW_"
VENDOR_CLIS: tuple[str, ...] = ("claude", "codex", "gemini")
"""Agent CLIs looked up on PATH to pick default roles, in order of preference."""

_LINE_RE = re.compile(r"at line (\d+)")
TOP_LEVEL_TABLES: tuple[str, ...] = tuple(name for name in Settings.model_fields if name != "config_files")
"""The tables a configuration file may hold at its top level."""


def default_worktree_root() -> Path:
    """Where implementation worktrees live by default: ``<user data dir>/worktrees``."""
    xdg = os.environ.get("XDG_DATA_HOME")
    base = Path(xdg) / APP_NAME if xdg else Path(platformdirs.user_data_dir(APP_NAME))
    return base / "worktrees"


def installed_vendor_clis() -> list[str]:
    """The agent CLIs (claude, codex, gemini) found on PATH, in preference order."""
    return [name for name in VENDOR_CLIS if shutil.which(name) is not None]


ACP_AGENTS: tuple[tuple[str, str, str], ...] = (
    ("claude-acp", "claude-agent-acp", "claude-agent-acp"),
    ("claude-acp", "claude-code-acp", "claude-code-acp"),
    ("codex-acp", "codex-acp", "codex-acp"),
    ("gemini-acp", "gemini", "gemini --acp"),
)
"""Agents that speak ACP: (engine name offered, binary looked up on PATH, command), first found wins per name."""


def installed_acp_agents() -> dict[str, str]:
    """The ACP agents found on PATH, as engine name → command (``gemini-acp`` → ``gemini --acp``)."""
    found: dict[str, str] = {}
    for name, binary, command in ACP_AGENTS:
        if name not in found and shutil.which(binary) is not None:
            found[name] = command
    return found


def default_roles(installed: list[str]) -> dict[str, str]:
    """Roles for the installed CLIs: reviewer and verifier on two different vendors where possible."""
    if not installed:
        return dict.fromkeys(ROLE_NAMES, "demo")
    primary = installed[0]
    roles = dict.fromkeys(ROLE_NAMES, primary)
    roles["reviewer"] = installed[1 % len(installed)]
    roles["verifier"] = installed[2 % len(installed)]
    return roles


def _defaults() -> dict[str, Any]:
    engines: dict[str, Any] = {name: {} for name in (*VENDOR_CLIS, "demo")}
    # offered, not assigned: a role runs on an ACP agent once the user names it under [roles]
    engines.update({name: {"type": "acp", "command": command} for name, command in installed_acp_agents().items()})
    return {
        "roles": default_roles(installed_vendor_clis()),
        "engines": engines,
        "workflow": {"worktree_root": str(default_worktree_root())},
    }


def read_toml(path: Path) -> dict[str, Any]:
    """Parse one TOML file; a missing file is empty; a malformed one raises SettingsError with its line."""
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return {}
    except OSError as exc:
        raise SettingsError(f"cannot read: {exc.strerror or exc}", source=path) from exc
    try:
        return tomllib.loads(raw.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise SettingsError("not valid UTF-8", source=path) from exc
    except tomllib.TOMLDecodeError as exc:
        match = _LINE_RE.search(str(exc))
        line = int(match.group(1)) if match else None
        message = _LINE_RE.sub("", str(exc)).replace("(, column", "(column").strip()
        raise SettingsError(f"malformed TOML: {message}", source=path, line=line) from exc


def check_top_level(path: Path, data: Mapping[str, Any]) -> None:
    """Refuse a top-level key that is not one of :data:`TOP_LEVEL_TABLES` (e.g. ``[role]``).

    Without this a misspelled table would be silently ignored and its settings never applied.
    """
    for key in data:
        if key in TOP_LEVEL_TABLES:
            continue
        valid = ", ".join(f"[{name}]" for name in TOP_LEVEL_TABLES)
        what = "table" if isinstance(data[key], Mapping) else "top-level key"
        close = difflib.get_close_matches(key.casefold(), TOP_LEVEL_TABLES, n=1)
        hint = f"; did you mean [{close[0]}]?" if close else ""
        raise SettingsError(f"unknown {what} {key!r}{hint} (valid tables: {valid})", source=path, key=key)


def deep_merge(base: Mapping[str, Any], override: Mapping[str, Any]) -> dict[str, Any]:
    """Merge ``override`` into ``base`` table by table; non-table values are replaced."""
    merged: dict[str, Any] = dict(base)
    for key, value in override.items():
        current = merged.get(key)
        if isinstance(current, Mapping) and isinstance(value, Mapping):
            merged[key] = deep_merge(current, value)
        else:
            merged[key] = value
    return merged


def _has_key(data: Mapping[str, Any], path: tuple[str, ...]) -> bool:
    node: Any = data
    for part in path:
        if not isinstance(node, Mapping) or part not in node:
            return False
        node = node[part]
    return True


def _env_var_for(path: tuple[str, ...]) -> str | None:
    wanted = (ENV_PREFIX + "__".join(path)).upper()
    for name in os.environ:
        if name.upper() == wanted:
            return name
    return None


def _source_of(path: tuple[str, ...], layers: list[tuple[Path, dict[str, Any]]]) -> Path | str | None:
    """Which layer set a key: the env var, else the highest-precedence file that has it."""
    for depth in range(len(path), 0, -1):
        env = _env_var_for(path[:depth])
        if env is not None:
            return f"environment variable {env}"
    for layer in reversed(layers):
        if _has_key(layer[1], path):
            source: Path = layer[0]
            return source
    return None


def project_trust(project_dir: Path, store: TrustStore | None = None) -> ProjectTrust:
    """The command keys of the project's own configuration file and what its user decided about them."""
    file = project_config_path(project_dir)
    data = read_toml(file)
    check_top_level(file, data)
    commands = command_keys(data)
    return ProjectTrust(project_dir, commands, (store or TrustStore()).state(project_dir, commands))


def load_settings(project_dir: Path | None = None, *, force_demo: bool = False, trust: bool = False) -> Settings:
    """Load the effective settings for ``project_dir`` (or user-level only when None).

    Precedence: built-in defaults < user ``config.toml`` < project ``.tunaflow/config.toml`` <
    ``TUNAFLOW_*`` env vars (``__`` separates nesting). ``force_demo`` assigns every role to ``demo``.
    The project file's command keys apply only when its user trusted them (see :mod:`.trust`);
    ``trust`` records that trust first. ``settings.project_trust`` says which way it went.
    """
    layers: list[tuple[Path, dict[str, Any]]] = []
    user_file = user_config_path()
    data = read_toml(user_file)
    check_top_level(user_file, data)
    if data:
        layers.append((user_file, data))
    decided: ProjectTrust | None = None
    if project_dir is not None:
        file = project_config_path(project_dir)
        data = read_toml(file)
        check_top_level(file, data)
        store = TrustStore()
        decided = project_trust(project_dir, store)
        if trust and decided.state in (TrustState.UNTRUSTED, TrustState.DENIED):
            store.trust(project_dir, decided.commands)
            decided = ProjectTrust(project_dir, decided.commands, TrustState.TRUSTED)
        if decided.state not in (TrustState.TRUSTED, TrustState.NOTHING_TO_TRUST):
            data = without_command_keys(data)
        if data:
            layers.append((file, data))
    merged = _defaults()
    for _file, data in layers:
        merged = deep_merge(merged, data)
    engines = merged.get("engines")
    if isinstance(engines, dict):
        merged["engines"] = {
            name: ({**table, "name": name} if isinstance(table, Mapping) else table)
            for name, table in engines.items()
        }
    try:
        settings = Settings(**merged)
    except ValidationError as exc:
        error = exc.errors()[0]
        loc = tuple(str(part) for part in error["loc"])
        raise SettingsError(error["msg"], source=_source_of(loc, layers), key=".".join(loc)) from exc
    settings = _finish(settings, layers, force_demo)
    settings.config_files = [file for file, _ in layers]
    settings.project_trust = decided
    return settings


def _finish(settings: Settings, layers: list[tuple[Path, dict[str, Any]]], force_demo: bool) -> Settings:
    """Fill engine names/types, validate types and role references, apply ``force_demo``."""
    engines = {}
    for name, config in settings.engines.items():
        filled = config.model_copy(update={"name": name, "type": config.type or name})
        if filled.type not in ENGINE_TYPES:
            raise SettingsError(
                f"unknown engine type {filled.type!r}; set type to one of: {', '.join(ENGINE_TYPES)}",
                source=_source_of(("engines", name), layers), key=f"engines.{name}.type",
            )
        engines[name] = filled
    updates: dict[str, Any] = {"engines": engines}
    if force_demo:
        updates["roles"] = settings.roles.model_copy(update=dict.fromkeys(ROLE_NAMES, "demo"))
    result = settings.model_copy(update=updates)
    for role in ROLE_NAMES:
        engine = result.roles.engine_name(role)
        if engine not in result.engines:
            raise SettingsError(
                f"no engine named {engine!r} is defined (defined: {', '.join(sorted(result.engines))}); "
                f"add an [engines.{engine}] table or pick a defined engine",
                source=_source_of(("roles", role), layers), key=f"roles.{role}",
            )
    return result


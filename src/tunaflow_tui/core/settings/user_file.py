"""Writing one ``[ui]`` value into the user's configuration file, keeping everything else in it.

The file is the user's: comments, order and other tables stay as they are.  Only the one key's
line is replaced (or added to ``[ui]``, or a ``[ui]`` table is added at the end).  The result is
parsed before it replaces the file, and it replaces it atomically, so a failure leaves the old file.
"""

from __future__ import annotations

import json
import os
import re
import tempfile
import tomllib
from pathlib import Path

from tunaflow_tui.core.config_paths import project_config_path, user_config_path

_TABLE_RE = re.compile(r"^\s*\[\[?\s*([^\]]+?)\s*\]\]?\s*(?:#.*)?$")
_BARE_KEY = re.compile(r"[A-Za-z0-9_-]+")


class UserFileError(ValueError):
    """The configuration file cannot take the value as it is (the message says why)."""


def _key_re(key: str) -> re.Pattern[str]:
    return re.compile(rf"^\s*{re.escape(key)}\s*=")


def with_ui_value(text: str, key: str, value: str) -> str:
    """``text`` (a TOML document) with ``[ui] key = "value"`` set; raises UserFileError if it cannot be."""
    if not _BARE_KEY.fullmatch(key):
        raise UserFileError(f"{key!r} is not a plain key")
    try:
        before = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise UserFileError(f"it is not valid TOML ({error}); fix it first") from None
    ui = before.get("ui", {})
    if not isinstance(ui, dict):
        raise UserFileError("its 'ui' is not a table")
    assignment = f"{key} = {json.dumps(value, ensure_ascii=False)}"  # a TOML basic string
    lines = text.splitlines()
    table: str | None = None
    ui_header: int | None = None
    ui_end: int | None = None
    replaced = False
    for index, line in enumerate(lines):
        header = _TABLE_RE.match(line)
        if header:
            if table == "ui" and ui_end is None:
                ui_end = index
            table = header.group(1)
            if table == "ui":
                ui_header = index
            continue
        if table == "ui" and _key_re(key).match(line) and not replaced:
            lines[index] = assignment
            replaced = True
    if not replaced:
        if ui_header is not None:
            end = ui_end if ui_end is not None else len(lines)
            while end > ui_header + 1 and not lines[end - 1].strip():
                end -= 1  # right after the table's last line, not after the blank lines that follow it
            lines.insert(end, assignment)
        elif "ui" in before:
            raise UserFileError("its [ui] settings are written inline or dotted; set the theme there by hand")
        else:
            lines += ([""] if lines and lines[-1].strip() else []) + ["[ui]", assignment]
    result = "\n".join(lines) + "\n"
    try:
        after = tomllib.loads(result)
    except tomllib.TOMLDecodeError:
        raise UserFileError("the value could not be written into it safely; set it by hand") from None
    if after.get("ui", {}).get(key) != value:
        raise UserFileError("the value could not be written into it safely; set it by hand")
    return result


def save_ui_value(key: str, value: str, path: Path | None = None) -> Path:
    """Set ``[ui] key = "value"`` in the user's configuration file (created if missing); returns its path.

    Raises:
        OSError: The file cannot be read or written.
        UserFileError: The file's content does not allow it (invalid TOML, an inline ``ui`` table).
    """
    target = path or user_config_path()
    try:
        text = target.read_text(encoding="utf-8")
    except FileNotFoundError:
        text = ""
    updated = with_ui_value(text, key, value)
    if updated == text:
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(prefix=".config-", suffix=".toml", dir=target.parent)
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as file:
            file.write(updated)
        if target.exists():
            os.chmod(temporary, target.stat().st_mode & 0o777)
        os.replace(temporary, target)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
    return target


def ui_value_overridden(key: str, project: Path | None) -> str:
    """Where a ``[ui]`` value set in the user's file is overridden at start (empty when it is not).

    The project's ``.tunaflow/config.toml`` and ``TUNAFLOW_UI__<KEY>`` both win over the user's file.
    """
    if f"TUNAFLOW_UI__{key.upper()}" in {name.upper() for name in os.environ}:
        return f"the environment variable TUNAFLOW_UI__{key.upper()}"
    if project is not None:
        config = project_config_path(project)
        try:
            ui = tomllib.loads(config.read_text(encoding="utf-8")).get("ui", {})
        except (OSError, ValueError):
            return ""
        if isinstance(ui, dict) and key in ui:
            return str(config)
    return ""

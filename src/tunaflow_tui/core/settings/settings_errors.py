"""The one error configuration problems raise: it always names where the bad value came from."""

from __future__ import annotations

from pathlib import Path


class SettingsError(Exception):
    """Configuration is invalid; ``source`` is the file (or env var) and ``key`` the dotted key at fault."""

    def __init__(self, message: str, *, source: Path | str | None = None, key: str = "",
                 line: int | None = None) -> None:
        self.source = source
        self.key = key
        self.line = line
        where = ""
        if source is not None:
            where = str(source)
            if line is not None:
                where += f", line {line}"
            where += ": "
        if key:
            where += f"{key}: "
        super().__init__(where + message)

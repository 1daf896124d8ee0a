"""The flag contract between tunaflow's CLI adapters and the installed CLIs' ``--help`` texts."""

from __future__ import annotations

import re
from dataclasses import dataclass

from tunaflow_tui.agents.claude import ClaudeEngine
from tunaflow_tui.agents.codex import CodexEngine
from tunaflow_tui.agents.gemini import GeminiEngine
from tunaflow_tui.agents.handover import HANDOVER_FLAGS

_FLAG = re.compile(r"(?:^|[\s,\[])(--?[A-Za-z0-9][A-Za-z0-9_-]*)")


def parse_help_flags(text: str) -> frozenset[str]:
    """Every option name (``-m``, ``--model``, both spellings of aliases) in a ``--help`` text.

    Only option lines count: lines whose first non-blank character is ``-``; the option part is the
    text before the description (the first run of two or more spaces).
    """
    flags: set[str] = set()
    for line in text.splitlines():
        stripped = line.strip()
        if not stripped.startswith("-"):
            continue
        signature = re.split(r"\s{2,}", stripped, maxsplit=1)[0]
        flags.update(m.group(1) for m in _FLAG.finditer(signature))
    return frozenset(flags)


@dataclass(frozen=True, slots=True)
class FlagContract:
    """Flags an adapter emits, and the help command whose output must list them."""

    engine_type: str
    help_args: tuple[str, ...]  # arguments after the executable, e.g. ("exec", "--help")
    help_fixture: str  # name of the captured help text this contract is tested against
    flags: frozenset[str]


CONTRACTS: tuple[FlagContract, ...] = (
    FlagContract("claude", ("--help",), "claude.txt", ClaudeEngine.FLAGS | HANDOVER_FLAGS["claude"]),
    FlagContract("codex", ("exec", "--help"), "codex-exec.txt", CodexEngine.FLAGS),
    FlagContract("codex", ("exec", "resume", "--help"), "codex-exec-resume.txt", CodexEngine.RESUME_FLAGS),
    FlagContract("codex", ("resume", "--help"), "codex-resume.txt", HANDOVER_FLAGS["codex"]),
    FlagContract("gemini", ("--help",), "gemini.txt", GeminiEngine.FLAGS | HANDOVER_FLAGS["gemini"]),
)


def contracts_for(engine_type: str) -> list[FlagContract]:
    """The flag contracts of one engine type (empty for engines without a CLI)."""
    return [c for c in CONTRACTS if c.engine_type == engine_type]


def missing_flags(help_text: str, contract: FlagContract) -> frozenset[str]:
    """Flags the adapter emits that this help text does not list."""
    return contract.flags - parse_help_flags(help_text)

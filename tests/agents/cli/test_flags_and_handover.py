"""Every flag the adapters emit is listed in the real CLIs' captured --help; hand-over argv."""

from __future__ import annotations

from pathlib import Path

import pytest

from tunaflow_tui.agents.cli_flags import CONTRACTS, missing_flags, parse_help_flags
from tunaflow_tui.agents.handover import HandoverUnsupportedError, native_cli_argv
from tunaflow_tui.core.settings.engines import EngineConfig

HELP = Path(__file__).resolve().parents[2] / "fakes" / "help"


@pytest.mark.parametrize("contract", CONTRACTS, ids=lambda c: c.help_fixture)
def test_emitted_flags_exist_in_the_captured_help(contract) -> None:
    text = (HELP / contract.help_fixture).read_text(encoding="utf-8")
    assert missing_flags(text, contract) == frozenset()


def test_parser_reads_aliases_and_short_flags() -> None:
    claude = parse_help_flags((HELP / "claude.txt").read_text(encoding="utf-8"))
    assert {"--allowedTools", "--allowed-tools", "-p", "--print", "--session-id"} <= claude
    assert "--no-such-flag" not in claude
    gemini = parse_help_flags((HELP / "gemini.txt").read_text(encoding="utf-8"))
    assert {"-m", "--model", "--skip-trust", "--approval-mode", "-o", "--output-format"} <= gemini
    codex = parse_help_flags((HELP / "codex-exec.txt").read_text(encoding="utf-8"))
    assert {"-C", "--cd", "-c", "--config", "--skip-git-repo-check", "--json"} <= codex


def test_contract_fails_when_an_older_cli_lacks_a_flag() -> None:
    text = (HELP / "gemini.txt").read_text(encoding="utf-8")
    older = "\n".join(line for line in text.splitlines() if "--skip-trust" not in line)
    [contract] = [c for c in CONTRACTS if c.help_fixture == "gemini.txt"]
    assert missing_flags(older, contract) == frozenset({"--skip-trust"})


def test_native_cli_argv(tmp_path: Path) -> None:
    sid = "fb22f538-079c-4cc3-b52c-4d6ddd797109"
    assert native_cli_argv("claude", EngineConfig(), sid, tmp_path) == ["claude", "--resume", sid]
    assert native_cli_argv("claude", EngineConfig(model="opus", command="/opt/claude"), sid, tmp_path) == [
        "/opt/claude", "--resume", sid, "--model", "opus"]
    assert native_cli_argv("codex", EngineConfig(model="gpt-5"), sid, tmp_path) == [
        "codex", "resume", "--no-daemon", "-C", str(tmp_path), "-m", "gpt-5", sid]
    assert native_cli_argv("gemini", EngineConfig(model="flash"), sid, tmp_path) == [
        "gemini", "--resume", sid, "-m", "flash"]


def test_native_cli_argv_refuses_engines_without_a_cli(tmp_path: Path) -> None:
    with pytest.raises(HandoverUnsupportedError, match="ollama"):
        native_cli_argv("ollama", EngineConfig(), "x", tmp_path)
    with pytest.raises(ValueError, match="no native session"):
        native_cli_argv("claude", EngineConfig(), "", tmp_path)

"""The process module's texts: the stderr tail an error card shows (the last lines, decoded whatever the
bytes, as they were), a tool call's one-line summary, the missing-binary hint, the turn's environment."""

from __future__ import annotations

import os

import pytest

from tunaflow_tui.agents.process import binary_hint, merged_env, shorten, tail_text, tool_summary


def test_the_tail_keeps_the_last_forty_lines_as_written() -> None:
    lines = [f"line {number}" for number in range(50)]
    assert tail_text(("\n".join(lines) + "\n").encode()) == "\n".join(lines[-40:])
    assert tail_text(b"\n\nfirst came two blank lines\nfix X  \n\n") == "\n\nfirst came two blank lines\nfix X  "
    assert tail_text(b"a\nb\nc", max_lines=2) == "b\nc"
    assert tail_text(b"fix X\n") == "fix X"


def test_bytes_that_are_not_utf8_are_replaced_not_raised() -> None:
    assert tail_text(b"bad \xff byte\n") == "bad \ufffd byte"


def test_a_tool_call_is_summed_up_by_its_path_command_pattern_or_url() -> None:
    assert tool_summary({"file_path": "src/app.py", "command": "rm -rf /"}) == "src/app.py", "the first key that is set"
    assert tool_summary({"file_path": "", "path": None, "command": "pytest -q"}) == "pytest -q", "empty values skipped"
    assert tool_summary({"command": ["git", "status", "--short"]}) == "git status --short", "an argv list, joined"
    assert tool_summary({"command": ["git", 3]}) == "", "a list that is not all text says nothing"
    assert tool_summary({"command": []}) == ""
    for key in ("path", "notebook_path", "pattern", "url", "query", "description", "prompt", "dir_path",
                "absolute_path"):
        assert tool_summary({key: f"the {key}"}) == f"the {key}", key
    assert tool_summary({"content": "the whole file"}) == "", "a key that names nothing short"
    assert tool_summary(["file_path", "x"]) == "" and tool_summary(None) == ""
    assert tool_summary({"command": "echo " + "x" * 200}) == "echo " + "x" * 114 + "…", "120 characters at most"
    assert tool_summary({"command": "echo hello world"}, limit=10) == "echo hell…"
    assert tool_summary({"command": ["echo", "hello", "world"]}, limit=10) == "echo hell…"


def test_a_summary_is_one_line_of_at_most_the_limit() -> None:
    assert shorten("  grep -rn\n\tTODO   src/  ") == "grep -rn TODO src/"
    assert shorten("x" * 120) == "x" * 120, "exactly the limit: kept whole"
    assert shorten("x" * 121) == "x" * 119 + "…"
    assert shorten("abcdef", limit=6) == "abcdef" and shorten("abcdefg", limit=6) == "abcde…"


def test_a_missing_binary_says_how_to_install_or_point_to_it() -> None:
    assert binary_hint("claude-work", "claude") == (
        'Install it, or set command = "/absolute/path/to/claude" under [engines.claude-work] in your '
        "tunaflow configuration.")
    assert binary_hint("", "codex").endswith("under [engines.codex] in your tunaflow configuration.")


def test_the_turn_environment_layers_the_engine_and_the_turn_over_this_process(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TUNAFLOW_LAYER", "process")
    monkeypatch.setenv("TUNAFLOW_KEPT", "kept")
    env = merged_env({"TUNAFLOW_LAYER": "engine", "ENGINE_ONLY": "1"}, {"TUNAFLOW_LAYER": "turn"})
    assert (env["TUNAFLOW_LAYER"], env["TUNAFLOW_KEPT"], env["ENGINE_ONLY"]) == ("turn", "kept", "1")
    assert merged_env({"TUNAFLOW_LAYER": "engine"}, {})["TUNAFLOW_LAYER"] == "engine"
    assert "TUNAFLOW_LAYER" in os.environ and os.environ["TUNAFLOW_LAYER"] == "process", "this process untouched"

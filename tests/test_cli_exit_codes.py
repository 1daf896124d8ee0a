"""The README's exit-code table, checked on real `tunaflow` processes for every subcommand.

A usage error is one line on stderr that names the real mistake, exit 2, and nothing is written:
neither the project nor the directory the command ran in gets a `.tunaflow/`.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tunaflow_tui.cli import SUBCOMMANDS
from tunaflow_tui.core.storage import Store

MISSING = "/nonexistent/tunaflow-project"
#: Well-formed arguments besides an unknown option, so the option is the only mistake.
AROUND_AN_UNKNOWN_OPTION: dict[str, tuple[str, ...]] = {"parse": ("-",), "run": ("--resume",), "ask": ("hello",),
                                                     "branch": ("list",), "search": ("WAL",),
                                                     "roundtable": ("--topic", "t", "--seat", "a=demo")}
#: Per subcommand, the arguments that make it act on a PATH that does not exist (besides the PATH itself).
ON_A_MISSING_PATH: dict[str, tuple[str, ...]] = {
    "open": (MISSING,), "demo": (), "run": (MISSING, "--resume"), "status": (MISSING,), "doctor": (MISSING,),
    "parse": (MISSING,), "export": (MISSING,), "ask": (MISSING, "a question"), "branch": (MISSING, "list"),
    "roundtable": (MISSING, "--topic", "t", "--seat", "a=demo"), "search": (MISSING, "WAL"),
    "serve": (MISSING,), "trust": (MISSING,),
}


def _tunaflow(*args: str, cwd: Path, stdout: int | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "tunaflow_tui", *args], capture_output=True, text=True,
                          encoding="utf-8", timeout=120, cwd=cwd, env={**os.environ, "PYTHONIOENCODING": "utf-8"})


@pytest.fixture
def project(tmp_path: Path) -> Path:
    path = tmp_path / "proj"
    path.mkdir()
    with Store.open(path) as store:
        store.add_message("main", "user", "Should the journal use WAL?")
        store.add_message("main", "assistant", "Yes: WAL.", persona="architect")
    return path


@pytest.fixture
def elsewhere(tmp_path: Path) -> Path:
    """An empty directory to run commands in: a usage error must leave it empty."""
    path = tmp_path / "elsewhere"
    path.mkdir()
    return path


def _usage_error(out: subprocess.CompletedProcess[str], command: str | None) -> None:
    assert out.returncode == 2, (out.returncode, out.stdout, out.stderr)
    assert out.stdout == "" and out.stderr.count("\n") == 1 and "Traceback" not in out.stderr, out.stderr
    assert out.stderr.startswith(f"tunaflow {command}: " if command else "tunaflow: "), out.stderr
    assert "usage:" not in out.stderr, "one line naming the mistake, not a usage block"


def _messages(project: Path) -> list[tuple[int, str]]:
    with Store.open(project) as store:
        return [(m.id, m.content) for m in store.list_messages("main", limit=100)]


def test_every_subcommand_is_in_the_table() -> None:
    assert set(ON_A_MISSING_PATH) == set(SUBCOMMANDS)


@pytest.mark.parametrize("command", list(SUBCOMMANDS))
def test_an_unknown_option_is_a_usage_error(command: str, elsewhere: Path) -> None:
    out = _tunaflow(command, "--bogus", *AROUND_AN_UNKNOWN_OPTION.get(command, ()), cwd=elsewhere)
    _usage_error(out, command)
    assert "--bogus" in out.stderr
    assert list(elsewhere.iterdir()) == []


@pytest.mark.parametrize("command", [c for c, args in ON_A_MISSING_PATH.items() if args])
def test_a_path_that_does_not_exist_is_a_usage_error(command: str, elsewhere: Path) -> None:
    out = _tunaflow(command, *ON_A_MISSING_PATH[command], cwd=elsewhere)
    _usage_error(out, None if command == "open" else command)
    assert "/nonexistent" in out.stderr and ("not a directory" in out.stderr or "no file" in out.stderr)
    assert list(elsewhere.iterdir()) == [] and not Path(MISSING).exists()


def test_a_mistyped_command_gets_did_you_mean(elsewhere: Path) -> None:
    out = _tunaflow("stauts", cwd=elsewhere)
    _usage_error(out, None)
    assert out.stderr == "tunaflow: unknown command 'stauts' — did you mean 'status'?\n"


def test_a_mistyped_command_with_its_arguments_gets_did_you_mean(elsewhere: Path) -> None:
    out = _tunaflow("serach", "WAL", "--limit", "3", cwd=elsewhere)
    _usage_error(out, None)
    assert out.stderr == "tunaflow: unknown command 'serach' — did you mean 'search'?\n"


def test_an_unknown_top_level_option_does_not_print_open_usage(elsewhere: Path) -> None:
    out = _tunaflow("--bogus", cwd=elsewhere)
    _usage_error(out, None)
    assert "--bogus" in out.stderr and "tunaflow open" not in out.stderr and "--help" in out.stderr


def test_ask_with_a_path_and_no_text_sends_nothing(project: Path, elsewhere: Path) -> None:
    before = _messages(project)
    out = _tunaflow("ask", str(project), cwd=elsewhere)
    _usage_error(out, "ask")
    assert "give the TEXT" in out.stderr
    assert _messages(project) == before and list(elsewhere.iterdir()) == [], "nothing sent, nothing created"


def test_search_with_a_path_and_no_query_names_the_query(project: Path, elsewhere: Path) -> None:
    out = _tunaflow("search", str(project), cwd=elsewhere)
    _usage_error(out, "search")
    assert "give the QUERY" in out.stderr and "no tunaflow data" not in out.stderr


def test_search_in_a_directory_without_data_says_which_directory(elsewhere: Path) -> None:
    out = _tunaflow("search", "WAL", cwd=elsewhere)
    assert out.returncode == 1 and "(the current directory) has no tunaflow data" in out.stderr
    assert list(elsewhere.iterdir()) == []


@pytest.mark.parametrize(("action", "expected"), [
    ("frobnicate", "unknown action 'frobnicate' (use one of list, show,"),
    ("shwo", "unknown action 'shwo' — did you mean 'show'?"),
])
def test_branch_names_the_unknown_action_not_the_path(project: Path, elsewhere: Path, action: str,
                                                        expected: str) -> None:
    out = _tunaflow("branch", str(project), action, cwd=elsewhere)
    _usage_error(out, "branch")
    assert expected in out.stderr and str(project) not in out.stderr


@pytest.mark.parametrize("args", [("status",), ("export",), ("branch", "list"), ("search", "--mode", "fts", "WAL")],
                         ids=lambda args: " ".join(args))
def test_a_reader_that_left_ends_the_command_quietly(project: Path, args: tuple[str, ...]) -> None:
    proc = subprocess.Popen([sys.executable, "-m", "tunaflow_tui", *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, cwd=project, env={**os.environ, "PYTHONIOENCODING": "utf-8"})
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.close()  # `| head -c 0`: the reader is gone before the command writes its first line
    err = proc.stderr.read().decode()
    code = proc.wait(timeout=120)
    assert "Traceback" not in err and "BrokenPipeError" not in err and err == "", err
    assert code == 141, "128 + SIGPIPE, the code a shell shows for a pipe its reader left"


def test_branch_with_a_path_and_no_action_asks_for_the_action(project: Path, elsewhere: Path) -> None:
    out = _tunaflow("branch", str(project), cwd=elsewhere)
    _usage_error(out, "branch")
    assert "give the ACTION after it" in out.stderr and "unknown action" not in out.stderr


@pytest.mark.parametrize("command", ["open", "status", "export", "branch", "ask", "doctor", "run", "roundtable"])
def test_a_path_no_system_accepts_is_a_usage_error_not_a_traceback(command: str, elsewhere: Path) -> None:
    too_long = "x" * 5000  # longer than any file name may be
    args = [too_long if arg == MISSING else arg for arg in ON_A_MISSING_PATH[command]]
    out = _tunaflow(*args, cwd=elsewhere) if command == "open" else _tunaflow(command, *args, cwd=elsewhere)
    assert out.returncode == 2 and "Traceback" not in out.stderr and out.stderr.count("\n") == 1, out.stderr[-300:]
    assert list(elsewhere.iterdir()) == []


def test_an_empty_request_is_a_usage_error(project: Path, elsewhere: Path) -> None:
    out = _tunaflow("run", str(project), "--demo", "--request", "  ", cwd=elsewhere)
    _usage_error(out, "run")
    assert "--request is empty" in out.stderr, out.stderr
    assert "Nothing in progress" not in out.stdout


def test_a_misspelt_option_is_named_before_the_argument_it_leaves_missing(elsewhere: Path) -> None:
    out = _tunaflow("run", "--reqest", "add a word count", cwd=elsewhere)
    _usage_error(out, "run")
    assert out.stderr.startswith("tunaflow run: unrecognized arguments: --reqest — did you mean '--request'?"), \
        out.stderr


def test_a_misspelt_option_beside_the_right_ones_gets_did_you_mean(elsewhere: Path) -> None:
    out = _tunaflow("run", "--request", "add a word count", "--aprove", cwd=elsewhere)
    _usage_error(out, "run")
    assert "unrecognized arguments: --aprove — did you mean '--approve'?" in out.stderr, out.stderr

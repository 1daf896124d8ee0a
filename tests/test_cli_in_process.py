"""Commands run in the test process (``tunaflow_cli``) give what a new ``python -m tunaflow_tui`` gives."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest
from tunaflow_cli import tunaflow

pytestmark = pytest.mark.e2e

REPLY = "Done.\n<!-- tunaflow:subtask-done:1 -->\n<!-- tunaflow:impl-complete -->\n"


@pytest.mark.parametrize("args", [
    ("--version",),
    ("branch", "list", "--json"),
    ("branch", "show", "77"),
    ("branch", "frobnicate", "1"),
    ("status", "--json", "--bogus"),
    ("parse", "-"),
], ids=["version", "empty-list", "no-such-branch", "usage-error", "unknown-flag", "stdin"])
def test_a_command_in_process_exits_and_prints_as_a_new_process(git_repo: Path, args: tuple[str, ...]) -> None:
    here = tunaflow(args, cwd=git_repo, stdin=REPLY)
    there = tunaflow(args, cwd=git_repo, stdin=REPLY, in_process=False)
    assert (here.returncode, here.stdout, here.stderr) == (there.returncode, there.stdout, there.stderr)


def test_this_process_is_left_as_it_was(git_repo: Path) -> None:
    before = (os.getcwd(), dict(os.environ), sys.stdin, sys.stdout, sys.stderr)
    done = tunaflow(["branch", "list", "--json"], cwd=git_repo, env={**os.environ, "TUNAFLOW_ONLY_THERE": "1"})
    failed = tunaflow(["branch", "show", "1"], cwd=git_repo)
    assert (json.loads(done.stdout), failed.returncode) == ([], 1)
    assert (os.getcwd(), dict(os.environ), sys.stdin, sys.stdout, sys.stderr) == before
    print("still this test's output")

"""Arguments a script may pass that once ended in tracebacks or were refused: real `tunaflow` processes.

Ids beyond SQLite's range, bytes that are not UTF-8 (Python keeps them as lone surrogates), and a
search query split around its options.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tunaflow_tui.core.storage import Store

HUGE = "99999999999999999999999"


def _tunaflow(*args: str | bytes, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable.encode(), b"-m", b"tunaflow_tui", *(os.fsencode(a) for a in args)],
                          capture_output=True, text=True, encoding="utf-8", errors="replace", timeout=120, cwd=cwd,
                          env={**os.environ, "PYTHONIOENCODING": "utf-8"})


@pytest.fixture
def project(tmp_path: Path) -> Path:
    path = tmp_path / "proj"
    path.mkdir()
    with Store.open(path) as store:
        store.add_message("main", "user", "Should the journal use WAL?")
        store.add_message("main", "assistant", "Yes: WAL, and pass -strict to the checker.", persona="architect")
        store.create_branch(conversation_id="main", checkpoint_id=None, parent_branch_id=None, mode="chat",
                            kind="general", label="journal idea")
    return path


def _state(project: Path) -> tuple[object, ...]:
    with Store.open(project) as store:
        return ([(m.id, m.content) for m in store.list_messages("main", limit=100)],
                [(b.id, b.label, b.status) for b in store.list_branches()])


@pytest.mark.parametrize("args", [
    ("ask", ".", "hello", "--fork", HUGE), ("ask", ".", "hello", "--to", HUGE), ("ask", "hello", "--to", f"branch:{HUGE}"),
    ("branch", ".", "show", HUGE), ("branch", ".", "rename", HUGE, "new name"), ("branch", "delete", HUGE, "--yes"),
    ("export", ".", "--plan", HUGE), ("export", "--conversation", f"branch:{HUGE}"),
], ids=lambda args: " ".join(args[:4]))
def test_an_id_beyond_any_row_is_a_usage_error(project: Path, args: tuple[str, ...]) -> None:
    before = _state(project)
    out = _tunaflow(*args, cwd=project)
    assert out.returncode == 2, out.stderr
    assert out.stdout == "" and out.stderr.count("\n") == 1 and "Traceback" not in out.stderr
    assert f"{HUGE} is not an id" in out.stderr and out.stderr.startswith(f"tunaflow {args[0]}: ")
    assert _state(project) == before


@pytest.mark.parametrize("args", [
    (b"ask", b".", b"caf\xe9 or tea?"),
    (b"branch", b"rename", b"1", b"\xff\xfe label"),
    (b"roundtable", b"--topic", b"caf\xe9", b"--seat", b"a=demo"),
    (b"search", b"\xffdir", b"WAL"),
    (b"export", b"--output", b"out-\xe9.md"),
], ids=["ask question", "branch label", "roundtable topic", "search path", "export path"])
def test_bytes_that_are_not_utf8_are_one_clear_line(project: Path, args: tuple[bytes, ...]) -> None:
    before = _state(project)
    out = _tunaflow(*args, cwd=project)
    assert out.returncode == 2, out.stderr
    assert out.stderr.count("\n") == 1 and "Traceback" not in out.stderr and "UnicodeEncodeError" not in out.stderr
    assert "is not UTF-8 text" in out.stderr and "\\x" in out.stderr, "the bad bytes are shown escaped"
    assert _state(project) == before
    assert not list(project.glob("out-*")), "nothing was written"


def test_search_words_may_come_after_the_options(project: Path) -> None:
    out = _tunaflow("search", ".", "--mode", "fts", "WAL", cwd=project)
    assert out.returncode == 0, out.stderr
    assert "«WAL»" in out.stdout
    out = _tunaflow("search", str(project), "--mode", "fts", "--json", "--", "-strict", cwd=project.parent)
    assert out.returncode == 0, out.stderr
    payload = json.loads(out.stdout)
    assert payload["query"] == "-strict" and [hit["message_id"] for hit in payload["hits"]] == [2]
    refused = _tunaflow("search", ".", "--loud", "WAL", cwd=project)
    assert refused.returncode == 2 and "unrecognized arguments: --loud" in refused.stderr, "a real unknown flag"


def test_the_app_s_paths_refuse_such_an_id_in_a_sentence_too(project: Path) -> None:
    from tunaflow_tui.core.exporting import ExportError, find_plan
    from tunaflow_tui.runtime.branching import BranchError, parse_ref

    with pytest.raises(BranchError, match=f"there is no branch {HUGE}"):
        parse_ref(f"#{HUGE}")
    with Store.open(project) as store, pytest.raises(ExportError, match="there is no plan"):
        find_plan(store, HUGE)

"""`tunaflow search` prints what a person reads: no marker comments, no Markdown syntax, alike hits as one."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from tunaflow_cli import tunaflow

from tunaflow_tui.core.snippet_text import group_alike, plain_snippet, snippet_runs
from tunaflow_tui.core.storage import Store

SEAT_ANSWER = "I agree: keep the **journal** in WAL mode and checkpoint on close."


def _search(project: Path, *args: str, in_process: bool = True) -> subprocess.CompletedProcess[str]:
    """``tunaflow search PROJECT --mode fts ARGS``, in this process (``tunaflow_cli``) unless ``in_process`` is False."""
    return tunaflow(["search", str(project), "--mode", "fts", *args], in_process=in_process)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    path = tmp_path / "proj"
    path.mkdir()
    with Store.open(path) as store:
        store.add_message("main", "assistant", "Counted in `frequency.py`: the journal words are done.\n"
                          "<!-- tunaflow:subtask-done:2 -->", persona="developer")
        for _ in range(12):  # a roundtable's seats all saying the same thing
            store.add_message("main", "assistant", SEAT_ANSWER, persona="critic")
    return path


def test_search_prints_plain_text_without_markers_or_markdown(project: Path) -> None:
    out = _search(project, "frequency", in_process=False)
    assert out.returncode == 0, out.stderr
    assert "tunaflow:" not in out.stdout and "<!--" not in out.stdout, "markers are never shown"
    assert "`" not in out.stdout and "**" not in out.stdout
    assert "«frequency».py: the journal" in out.stdout, "inline code keeps its punctuation beside it"


def test_alike_hits_are_one_hit_and_more_like_it(project: Path) -> None:
    out = _search(project, "journal")
    assert out.returncode == 0, out.stderr
    assert out.stdout.count("keep the «journal» in WAL mode") == 1, out.stdout
    assert "and 11 more like it: main #" in out.stdout
    assert "frequency.py" in out.stdout, "a different message is still its own hit"
    payload = json.loads(_search(project, "journal", "--json").stdout)
    assert len(payload["hits"]) == 2
    seat = next(hit for hit in payload["hits"] if hit["more_like_it"])
    assert len(seat["more_like_it"]) == 11 and "**" not in seat["snippet"]


def test_limit_counts_groups_not_the_duplicates_inside_them(project: Path) -> None:
    out = _search(project, "journal", "--limit", "2")
    assert " 2. " in out.stdout and " 3. " not in out.stdout
    assert "frequency.py" in out.stdout and "and 11 more like it" in out.stdout, "both different answers fit"


def test_snippet_runs_style_code_and_flag_matches() -> None:
    runs = snippet_runs("Run «`frequency.py`» now <!-- tunaflow:subtask-d")
    assert [(r.text, r.matched, r.style) for r in runs] == [
        ("Run ", False, ""), ("frequency.py", True, "code"), (" now", False, "")]
    assert plain_snippet("done:2 --> ## Consensus: **yes**") == "Consensus: yes", "a marker cut at the start"


def test_group_alike_keeps_order_and_different_texts_apart() -> None:
    groups = group_alike(["Use WAL.", "use  **WAL**!", "Use a lock."], lambda text: text)
    assert groups == [("Use WAL.", ("use  **WAL**!",)), ("Use a lock.", ())]


def test_the_wait_for_the_embedding_worker_is_not_reported_as_0_of_0(capsys, monkeypatch) -> None:
    from tunaflow_tui.subcommands import search_command

    clock = [100.0]
    monkeypatch.setattr(search_command.time, "monotonic", lambda: clock[0])
    progress = search_command._EmbeddingProgress()
    for _tick in range(20):  # the worker still starting, several seconds
        clock[0] += 0.5
        progress(0, 0)
    clock[0] += 1.0
    progress(3, 12)
    lines = capsys.readouterr().err.splitlines()
    assert lines == ["tunaflow search: starting the embedding worker before searching…",
                     "tunaflow search: embedding messages before searching: 3 of 12 done"]

"""Memory from the shell: what `tunaflow ask` writes is found by meaning by `tunaflow search`, as in the app."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from typing import Any

import pytest
from runtime_harness import Harness

from tunaflow_tui.core.memory.model_files import MODEL_ID, MODEL_PACKAGE
from tunaflow_tui.core.storage import Store

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.embeddings,
    pytest.mark.skipif(__import__("importlib").util.find_spec(MODEL_PACKAGE) is None, reason="model not installed"),
]

#: Questions asked with `tunaflow ask`, and a rewording of each that shares none of its words.
REWORDED = {
    "How should we store the passwords of our users safely?": "hashing credentials securely",
    "The login page takes ages to appear every morning.": "slow sign-in screen performance",
    "Can the interface be translated into Korean and Japanese?": "localization for asian languages",
    "Which database ought to hold the invoices?": "where to persist billing records",
    "Our tests break at random on the build server.": "intermittent failures in the CI pipeline",
    "Please add a dark colour theme for working at night.": "black background mode for evenings",
}


def _tunaflow(h: Harness, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONIOENCODING": "utf-8"}
    return subprocess.run([sys.executable, "-m", "tunaflow_tui", *args], capture_output=True, text=True,
                          encoding="utf-8", timeout=180, env=env, cwd=h.project)


def _search(h: Harness, query: str, mode: str = "hybrid") -> dict[str, Any]:
    out = _tunaflow(h, "search", str(h.project), query, "--mode", mode, "--json", "--limit", "3")
    assert out.returncode == 0, out.stderr
    document: dict[str, Any] = json.loads(out.stdout)
    return document


def test_questions_asked_from_the_shell_are_found_by_meaning_from_the_shell(harness: Harness) -> None:
    harness.set_script(architect=[{"text": "Noted; I will look into it."} for _ in REWORDED])
    (harness.project / ".tunaflow").mkdir(exist_ok=True)
    harness.write_config()
    asked: dict[str, int] = {}
    for question in REWORDED:
        out = _tunaflow(harness, "ask", str(harness.project), question, "--json")
        assert out.returncode == 0, out.stderr
        asked[question] = json.loads(out.stdout)["user_message_id"]

    found_by_meaning = 0
    for question, rewording in REWORDED.items():
        document = _search(harness, rewording)
        assert document["mode"] == "hybrid" and not document["notes"], "never full text alone with a model"
        if any(hit["message_id"] == asked[question] and "vector" in hit["found_by"] for hit in document["hits"]):
            found_by_meaning += 1
    assert found_by_meaning == len(REWORDED), f"found by meaning: {found_by_meaning} of {len(REWORDED)}"
    full_text = sum(1 for question, rewording in REWORDED.items()
                    if any(hit["message_id"] == asked[question] for hit in _search(harness, rewording, "fts")["hits"]))
    assert full_text <= 1, "the rewordings share (almost) no words with the questions"
    with Store.open(harness.project) as store:
        counts = store.embedding_counts(MODEL_ID)
        assert counts.remaining == 0 and counts.total == 2 * len(REWORDED)


def test_search_with_embeddings_off_is_full_text_and_starts_no_worker(harness: Harness,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TUNAFLOW_MEMORY__EMBEDDINGS")  # the project's file turns them off, not the test run
    harness.set_script(architect=[{"text": "Noted."}])
    harness.write_config("\n[memory]\nembeddings = false\n")
    out = _tunaflow(harness, "ask", str(harness.project), "How should we store the passwords safely?", "--json")
    assert out.returncode == 0, out.stderr
    document = _search(harness, "passwords")
    assert document["mode"] == "fts" and "turned off" in " ".join(document["notes"])
    assert [hit["role"] for hit in document["hits"]] == ["user"]
    assert not (harness.project / ".tunaflow" / "embed-worker.log").exists(), "no worker was started"


def test_a_long_conversation_is_summarised_and_a_new_branch_linked_when_ask_writes_them(harness: Harness) -> None:
    harness.set_script(architect=[{"text": "Noted."}, {"text": "Backoff it is."}],
                       summarizer=[{"text": "The parser keeps its state; the uploader retries with backoff."}
                                   for _ in range(4)])
    harness.write_config("\n[memory]\ncompress_after_tokens = 600\ncompress_keep_messages = 2\n"
        "summary_span_tokens = 300\n")
    with Store.open(harness.project) as store:  # an earlier, long conversation in main
        for i in range(12):
            store.add_message("main", "user" if i % 2 == 0 else "assistant",
                              f"On topic {i} the uploader retries three times with exponential backoff. " * 4)
    first = _tunaflow(harness, "ask", str(harness.project), "Anything else on the uploader?", "--json")
    assert first.returncode == 0, first.stderr
    with Store.open(harness.project) as store:
        summaries = store.list_summaries("main")
        assert summaries and "backoff" in summaries[-1].content, "the older part of main was summarised"
    answer = json.loads(first.stdout)["message_id"]
    fork = _tunaflow(harness, "ask", str(harness.project), "Should the uploader retries use exponential backoff?",
                     "--fork", str(answer), "--json")
    assert fork.returncode == 0, fork.stderr
    branch = json.loads(fork.stdout)["conversation_id"]
    with Store.open(harness.project) as store:
        related = [link for link in store.all_session_links()
                   if link.kind == "related" and link.from_conversation_id == branch]
        assert [link.to_conversation_id for link in related] == ["main"], "the new branch is linked to main"

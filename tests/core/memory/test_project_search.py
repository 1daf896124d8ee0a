"""Project search: every finished message, by words and by meaning, each hit pointing at its message."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from tunaflow_tui.cli import main
from tunaflow_tui.core.memory.embedder import Embedder
from tunaflow_tui.core.memory.indexer import EmbeddingIndexer
from tunaflow_tui.core.memory.project_search import ProjectSearch, SearchUnavailable
from tunaflow_tui.core.storage import Store

PARAPHRASED = "The nightly CI job broke after we bumped the dependencies."
QUESTION = "why did the build fail after upgrading packages"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    path = tmp_path / "proj"
    path.mkdir()
    return path


@pytest.fixture
def seeded(project: Path) -> Iterator[Store]:
    with Store.open(project) as store:
        store.add_message("main", "user", "How should the uploader retry on timeouts?")
        store.add_message("main", "assistant", "Retry three times with exponential backoff, then give up.",
                          persona="architect")
        branch = store.create_branch(conversation_id="main", checkpoint_id=None, parent_branch_id=None,
                                     mode="chat", kind="implementation", label="impl")
        store.add_message(branch.shadow_conversation_id, "assistant", PARAPHRASED, persona="developer")
        store.add_message("main", "assistant", "half written reply about retry", status="streaming")
        yield store


def test_full_text_hits_point_at_their_message_with_the_match_marked(seeded: Store) -> None:
    result = ProjectSearch(seeded, None).search("uploader retry", mode="fts")
    assert result.mode == "fts"
    first = result.hits[0]
    assert first.conversation_id == "main" and first.message.role == "user" and first.branch_id is None
    assert "«uploader»" in first.snippet and "«retry»" in first.snippet
    assert all("half written" not in hit.message.content for hit in result.hits), "streaming text is not searched"


def test_hybrid_finds_by_meaning_what_words_miss(seeded: Store, embedder: Embedder) -> None:
    EmbeddingIndexer(seeded, embedder).run_pass()
    search = ProjectSearch(seeded, embedder)
    assert search.search(QUESTION, mode="fts").hits == ()
    hybrid = search.search(QUESTION, limit=3)
    top = hybrid.hits[0]
    assert hybrid.mode == "hybrid" and top.message.content == PARAPHRASED
    assert top.branch_id is not None and top.conversation_id == f"branch:{top.branch_id}"
    assert top.sources == ("vector",) and top.chunk_text == PARAPHRASED
    vector = search.search(QUESTION, limit=1, mode="vector")
    assert vector.hits[0].message.content == PARAPHRASED


def test_hybrid_keeps_a_match_by_meaning_above_messages_sharing_only_some_words(project: Path,
                                                                               embedder: Embedder) -> None:
    """Beside the vectors, full text brings only messages holding every word: messages sharing one
    word of the question ("build", "upgrading", "packages") no longer push the answer out of the top."""
    with Store.open(project) as store:
        for text in ("The build of the docs site takes four minutes on a cold cache.",
                     "We should stop upgrading the linter every week.",
                     "Packages for the installer are signed by the release job.",
                     "Why does the build print so many warnings?"):
            store.add_message("main", "assistant", text)
        store.add_message("main", "assistant", PARAPHRASED)
        store.add_message("main", "user", "The build failed after upgrading packages: pin them?")
        EmbeddingIndexer(store, embedder).run_pass()
        search = ProjectSearch(store, embedder)
        assert PARAPHRASED not in [hit.message.content for hit in search.search(QUESTION, mode="fts", limit=3).hits]
        hits = search.search(QUESTION, limit=3).hits
        assert hits[0].message.content.startswith("The build failed after upgrading packages")  # every word
        assert hits[0].sources == ("fts", "vector")
        assert PARAPHRASED in [hit.message.content for hit in hits]
        assert all(hit.sources != ("fts",) for hit in hits)


def test_while_messages_wait_for_embedding_hybrid_still_finds_them_by_some_of_their_words(
        seeded: Store, embedder: Embedder) -> None:
    EmbeddingIndexer(seeded, embedder).run_pass()
    waiting = seeded.add_message("main", "assistant", "The kiwifruit importer is slow on Mondays.")
    hits = ProjectSearch(seeded, embedder).search("kiwifruit uploader", limit=5).hits
    assert waiting.id in [hit.message.id for hit in hits], "not embedded yet: only full text can find it"
    EmbeddingIndexer(seeded, embedder).run_pass()
    search = ProjectSearch(seeded, embedder)
    assert search.all_embedded()


def test_full_text_search_follows_edits_and_deletions(seeded: Store) -> None:
    search = ProjectSearch(seeded, None)
    [hit] = search.search("exponential backoff", mode="fts").hits
    seeded.update_message(hit.message.id, content="Retry with a fixed delay instead.")
    assert search.search("exponential backoff", mode="fts").hits == ()
    assert [h.message.id for h in search.search("fixed delay", mode="fts").hits] == [hit.message.id]
    seeded.delete_message(hit.message.id)
    assert search.search("fixed delay", mode="fts").hits == ()
    streaming = seeded.add_message("main", "assistant", "a kiwifruit reply in progress", status="streaming")
    assert search.search("kiwifruit", mode="fts").hits == ()
    seeded.update_message(streaming.id, status="done")
    assert [h.message.id for h in search.search("kiwifruit", mode="fts").hits] == [streaming.id]


def test_the_vector_index_follows_edits_and_deletions(seeded: Store, embedder: Embedder) -> None:
    search = ProjectSearch(seeded, embedder)
    indexer = EmbeddingIndexer(seeded, embedder, on_chunks=search.add_chunks)
    indexer.run_pass()
    assert search.search(QUESTION, limit=1, mode="vector").hits[0].message.content == PARAPHRASED
    target = search.search(QUESTION, limit=1, mode="vector").hits[0].message
    seeded.update_message(target.id, content="We renamed the settings screen.")
    indexer.run_pass()
    hits = search.search(QUESTION, limit=5, mode="vector").hits
    assert all(hit.message.content != PARAPHRASED for hit in hits)
    assert all(hit.chunk_text == hit.message.content[hit.chunk_start:hit.chunk_end] for hit in hits)


def test_any_text_is_a_query(seeded: Store) -> None:
    search = ProjectSearch(seeded, None)
    for query in ('"unbalanced', "NEAR(retry AND*", "^uploader:", "retry OR -", "x" * 1_000_000, "\x00\x1b[2J"):
        search.search(query, mode="fts")
    assert search.search("   ", mode="fts").hits == ()
    with pytest.raises(SearchUnavailable, match="embedding model"):
        search.search("retry", mode="vector")
    with pytest.raises(ValueError, match="mode"):
        search.search("retry", mode="semantic")


# ---------------------------------------------------------------------------------------------- the CLI
def _cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    try:
        code = main(["search", *args])
    except SystemExit as exit_:  # a usage error ends the process, as argparse does
        code = int(exit_.code or 0)
    out, err = capsys.readouterr()
    return code, out, err


def test_cli_json_hits_carry_the_ids_other_commands_accept(seeded: Store, project: Path,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = _cli(capsys, str(project), "exponential", "backoff", "--mode", "fts", "--json")
    assert code == 0, err
    payload = json.loads(out)
    [hit] = payload["hits"]
    assert hit["conversation_id"] == "main" and hit["persona"] == "architect" and hit["role"] == "assistant"
    assert "«exponential»" in hit["snippet"] and hit["found_by"] == ["fts"]


def test_cli_hybrid_without_the_model_says_so_and_still_answers(seeded: Store, project: Path, tmp_path: Path,
                                                                capsys: pytest.CaptureFixture[str],
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TUNAFLOW_EMBEDDING_MODEL", str(tmp_path / "gone.onnx"))
    code, out, err = _cli(capsys, str(project), "uploader")
    assert code == 0 and "#1 user" in out and "«uploader»" in out
    assert err.count("\n") == 1 and "full-text search only" in err
    code, out, err = _cli(capsys, str(project), "uploader", "--mode", "vector")
    assert code == 1 and out == "" and err.count("\n") == 1 and "embedding model" in err


def test_cli_bad_input_is_one_clear_line(seeded: Store, project: Path, tmp_path: Path,
                                         capsys: pytest.CaptureFixture[str],
                                         monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(project)
    code, out, err = _cli(capsys, "   ")
    assert (code, out) == (2, "") and err == "tunaflow search: the query is empty; give the words to search for\n"
    code, out, err = _cli(capsys, "retry", "--limit", "0")
    assert code == 2 and err.count("\n") == 1 and "--limit" in err
    for query in ('"NEAR(retry AND* ^x:', '"', "*", "NEAR(", "-", "x" * 1_000_000):
        code, out, err = _cli(capsys, query, "--mode", "fts")
        assert code == 0 and "Traceback" not in err and out
    code, out, err = _cli(capsys, "--")
    assert (code, out) == (2, "") and err == "tunaflow search: the query is empty; give the words to search for\n"
    # A word that looks like an option: one line saying how to search for it, and that way finds it.
    code, out, err = _cli(capsys, "-retry")
    assert (code, out) == (2, "") and err.count("\n") == 1 and "-retry" in err and "tunaflow search -- -word" in err
    code, out, err = _cli(capsys, "--mode", "fts", "--", "-retry")
    assert code == 0 and "uploader" in out, err
    code, out, err = _cli(capsys, "--limit", "ten", "retry")
    assert (code, out) == (2, "") and err.count("\n") == 1 and "--limit" in err
    never_opened = tmp_path / "elsewhere"
    never_opened.mkdir()
    code, out, err = _cli(capsys, str(never_opened), "retry")
    assert code == 1 and "no tunaflow data" in err and not (never_opened / ".tunaflow").exists()


def test_cli_output_is_neutralised(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with Store.open(project) as store:
        store.add_message("main", "assistant", "poison \x1b]0;owned\x07 title and \x1b[2J clear screen")
    code, out, _err = _cli(capsys, str(project), "poison", "--mode", "fts")
    assert code == 0 and "\x1b" not in out and "\x07" not in out and "«poison»" in out


def test_the_index_vocabulary_counts_finished_messages_per_word(seeded: Store) -> None:
    assert seeded.term_frequency("uploader", False) == 1
    assert seeded.term_frequency("retr", True) == 2, "retry and retries, the streaming reply left out"
    assert seeded.term_frequency("nowhere", False) == 0


def test_a_long_message_is_shown_by_the_part_that_matches(project: Path) -> None:
    filler = " ".join(f"Paragraph {n} talks about colours of the dashboard and nothing else." for n in range(30))
    tail = "The uploader should add jitter between attempts so that clients do not retry in lockstep."
    with Store.open(project) as store:
        store.add_message("main", "assistant", f"{filler}\n\n{tail}", persona="architect")
        store.add_message("main", "user", "Short note: the uploader works.")
        hit = ProjectSearch(store, None).search("uploader jitter", mode="fts").hits[0]
    assert tail in hit.chunk_text and hit.chunk_start > 0, "the hit points at the chunk holding the words"
    assert "«uploader»" in hit.snippet and "«jitter»" in hit.snippet
    shown = hit.snippet.replace("«", "").replace("»", "").strip("…")
    assert shown in " ".join(hit.chunk_text.split()), "the snippet is cut from the chunk the hit points at"

"""Natural-language FTS5 queries against a real SQLite FTS5 table (the tokenizer the message index uses)."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tunaflow_tui.core.memory.fts_query import (
    MAX_TERMS,
    all_words_match,
    every_word_match,
    match_tiers,
    natural_language_match,
    query_terms,
)
from tunaflow_tui.core.storage.search_query import fts_match_expression

MESSAGES = {
    1: "The nightly job broke when we bumped the dependencies; pinning urllib3 fixed it.",
    2: "Let's cache the rendered markdown so that scrolling stays smooth in long chats.",
    3: "Review: the migration drops the old column before copying its data into the new table.",
    4: "데이터베이스가 잠겨서 마이그레이션이 실패했습니다. 다시 시도해 주세요.",
    5: "We rotate the API keys every ninety days and keep the previous key valid for a week.",
    6: "To be fair, the data looked fine yesterday.",
    7: "Kita perlu memperbaiki konfigurasi basis data sebelum rilis berikutnya.",
    8: 'He wrote "NEAR" and a -flag with a star* in the commit message.',
}


@pytest.fixture
def db() -> Iterator[sqlite3.Connection]:
    conn = sqlite3.connect(":memory:")
    conn.execute("CREATE VIRTUAL TABLE messages_fts USING fts5(content, tokenize='unicode61')")
    conn.executemany("INSERT INTO messages_fts(rowid, content) VALUES (?, ?)", MESSAGES.items())
    yield conn
    conn.close()


def search(conn: sqlite3.Connection, query: str) -> list[int]:
    expression = natural_language_match(query)
    if expression is None:
        return []
    rows = conn.execute("SELECT rowid FROM messages_fts WHERE messages_fts MATCH ? ORDER BY bm25(messages_fts)",
                        (expression,)).fetchall()
    return [row[0] for row in rows]


def tiered_search(conn: sqlite3.Connection, query: str) -> list[int]:
    found: list[int] = []
    for expression in match_tiers(query):
        rows = conn.execute("SELECT rowid FROM messages_fts WHERE messages_fts MATCH ? "
                            "ORDER BY bm25(messages_fts)", (expression,)).fetchall()
        found += [row[0] for row in rows if row[0] not in found]
    return found


def test_a_question_finds_the_message_that_shares_only_some_words(db: sqlite3.Connection) -> None:
    question = "why did the nightly build fail after the dependency upgrade?"
    assert search(db, question)[0] == 1
    # The all-words expression of the search box finds nothing for the same question.
    assert db.execute("SELECT rowid FROM messages_fts WHERE messages_fts MATCH ?",
                      (fts_match_expression(question),)).fetchall() == []


def test_word_forms_match_through_light_stems(db: sqlite3.Connection) -> None:
    assert search(db, "caching markdown")[0] == 2
    assert search(db, "rotating keys")[0] == 5
    assert search(db, "migrations")[0] == 3


def test_messages_matching_more_words_rank_first(db: sqlite3.Connection) -> None:
    found = search(db, "did the migration copy the column data?")
    assert found[0] == 3 and 6 in found  # 6 shares only "data"


def test_korean_particles_do_not_block_a_match(db: sqlite3.Connection) -> None:
    assert search(db, "데이터베이스를 마이그레이션하는 방법") == [4]


def test_indonesian_words_match(db: sqlite3.Connection) -> None:
    assert search(db, "bagaimana konfigurasi basis data?")[0] == 7


def test_a_query_of_only_common_words_still_searches(db: sqlite3.Connection) -> None:
    assert search(db, "to be")[0] == 6


@pytest.mark.parametrize("query", ["", "   ", "?!...", "---", "\x00\x1b", "** ^^ ::", "\u200b\u200d"])
def test_nothing_to_search_gives_none(query: str) -> None:
    assert natural_language_match(query) is None


HOSTILE = [
    '"', '""', '"unbalanced', "NEAR(cache markdown, 2)", "NEAR", "cache NOT markdown", "a AND OR NOT b",
    "content:cache", "{content}: cache", "^cache", "-cache", "- -", "*", "cache*", "(cache", "cache)",
    "'; DROP TABLE messages_fts; --", "\x00nul byte", "lone \ud800 surrogate", "\u202eRTL override",
    'star* and "NEAR" -flag', "+", "c:d:e", "%_", "\\", "`ls`",
]


@pytest.mark.parametrize("query", HOSTILE)
def test_fts_syntax_typed_by_the_user_is_searched_as_text(db: sqlite3.Connection, query: str) -> None:
    tiered_search(db, query)  # must not raise sqlite3.OperationalError


def test_quoted_syntax_words_find_the_message_containing_them(db: sqlite3.Connection) -> None:
    assert search(db, 'star* "NEAR" -flag')[0] == 8


def test_messages_with_every_word_come_first_in_the_tiers() -> None:
    conn = sqlite3.connect(":memory:")
    conn.execute("CREATE VIRTUAL TABLE messages_fts USING fts5(content, tokenize='unicode61')")
    long_match = ("We agreed to keep the retry budget per client and log every attempt. " * 12
                  + "The breaker opens after five failures.")
    rows = [(1, "Is the breaker configured?"), (2, long_match)]
    rows += [(10 + i, f"The job opens a file after {i} failures, five at most.") for i in range(20)]
    conn.executemany("INSERT INTO messages_fts(rowid, content) VALUES (?, ?)", rows)
    query = "breaker opens after five failures"
    assert search(conn, query)[:2] == [1, 2]  # bm25 over OR: a short message with the rare word wins
    found = tiered_search(conn, query)
    assert found[:2] == [2, 1] and len(found) == len(rows)  # every word first, nothing lost
    conn.close()


def test_all_words_groups_the_forms_of_a_short_word() -> None:
    assert all_words_match("logs of accounts") == '("log" OR "logs") AND "account"*'
    assert all_words_match("cache") is None and match_tiers("cache") == ['"cach"*']
    assert match_tiers("?!") == []


def test_the_every_word_expression_of_hybrid_search_includes_a_one_word_query() -> None:
    assert every_word_match("logs of accounts") == all_words_match("logs of accounts")
    assert every_word_match("cache") == '"cach"*', "an identifier alone is still searched by full text"
    assert every_word_match("the --no-verify flag") == '"no-verify"* AND "flag"*'
    assert every_word_match("?!") is None and every_word_match("") is None


def test_a_megabyte_query_is_bounded(db: sqlite3.Connection) -> None:
    words = [f"term{i}" for i in range(150_000)]
    huge = " ".join(words)[:1_000_000] + " nightly"
    expression = natural_language_match(huge)
    assert expression is not None and expression.count(" OR ") == MAX_TERMS - 1
    assert len(expression) < 1_000
    tiered_search(db, huge)
    tiered_search(db, '"' * 1_000_000)
    tiered_search(db, "(" * 1_000_000)


def test_terms_are_deduplicated_and_keep_their_order() -> None:
    assert [t for t, _ in query_terms("Cache the cache, then CACHING again")] == ["cach"]
    assert query_terms("deploy db v2") == [("deploy", True), ("db", False), ("v2", False)]


_ALPHABET = st.sampled_from([*'ab"\'*-+^:(){}[]. \t\n\\%_`~', "NEAR", "AND", "OR", "NOT", "한국어", "é"])


@settings(max_examples=300, deadline=None)
@given(st.lists(_ALPHABET, max_size=40).map("".join))
def test_any_input_is_a_valid_expression(query: str) -> None:
    conn = sqlite3.connect(":memory:")
    try:
        conn.execute("CREATE VIRTUAL TABLE t USING fts5(content, tokenize='unicode61')")
        conn.execute("INSERT INTO t(content) VALUES ('a b near and or not 한국어 e')")
        for expression in match_tiers(query):
            conn.execute("SELECT rowid FROM t WHERE t MATCH ? ORDER BY bm25(t)", (expression,)).fetchall()
    finally:
        conn.close()

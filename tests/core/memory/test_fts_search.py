"""Tiered FTS search through a caller's runner, and leaving common words out of the any-word tier."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterator

import pytest

from tunaflow_tui.core.memory.fts_query import natural_language_match
from tunaflow_tui.core.memory.fts_search import tiered_search

ROWS = [f"The test suite passed on run {i}." for i in range(40)]
ROWS += ["The flaky test fails when the fixture teardown races.", "Teardown of the fixture is racy."]


@pytest.fixture
def conn() -> Iterator[sqlite3.Connection]:
    connection = sqlite3.connect(":memory:")
    connection.execute("CREATE VIRTUAL TABLE messages_fts USING fts5(content, tokenize='unicode61')")
    connection.executemany("INSERT INTO messages_fts(rowid, content) VALUES (?, ?)", enumerate(ROWS, start=1))
    connection.execute("CREATE VIRTUAL TABLE temp.vocab USING fts5vocab(main, messages_fts, row)")
    yield connection
    connection.close()


class Runner:
    """Runs expressions against the table and records which ran."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn
        self.expressions: list[str] = []

    def __call__(self, expression: str, limit: int) -> list[int]:
        self.expressions.append(expression)
        rows = self.conn.execute("SELECT rowid FROM messages_fts WHERE messages_fts MATCH ? "
                                 "ORDER BY bm25(messages_fts) LIMIT ?", (expression, limit)).fetchall()
        return [row[0] for row in rows]


def doc_frequency(conn: sqlite3.Connection) -> Callable[[str, bool], int]:
    def count(term: str, prefix: bool) -> int:
        if prefix:
            row = conn.execute("SELECT coalesce(sum(doc), 0) FROM temp.vocab WHERE term >= ? AND term < ?",
                               (term, term + "\U0010ffff")).fetchone()
        else:
            row = conn.execute("SELECT coalesce(sum(doc), 0) FROM temp.vocab WHERE term = ?", (term,)).fetchone()
        return int(row[0])
    return count


def test_every_word_matches_come_first_then_any_word_ones(conn: sqlite3.Connection) -> None:
    runner = Runner(conn)
    found = tiered_search(runner, "fixture teardown races", limit=10)
    assert found[:2] == [41, 42] or found[:2] == [42, 41]
    assert len(runner.expressions) == 2 and len(found) == len(set(found))


def test_the_any_word_tier_is_skipped_when_the_first_has_enough(conn: sqlite3.Connection) -> None:
    runner = Runner(conn)
    found = tiered_search(runner, "test suite passed", limit=5)
    assert len(found) == 5 and len(runner.expressions) == 1 and " AND " in runner.expressions[0]


def test_nothing_to_search_runs_nothing(conn: sqlite3.Connection) -> None:
    runner = Runner(conn)
    assert tiered_search(runner, "?!", limit=5) == [] and runner.expressions == []
    assert tiered_search(runner, "test", limit=0) == []


def test_common_words_are_left_out_of_the_any_word_tier(conn: sqlite3.Connection) -> None:
    count = doc_frequency(conn)
    assert count("test", True) == 41
    expression = natural_language_match("flaky test teardown", doc_frequency=count, max_rows=10)
    assert expression == '"flaky"* OR "teardown"*'
    # the budget counts the rows of all kept words together: 1 + 2 rows exceed a budget of 2
    assert natural_language_match("teardown flaky", doc_frequency=count, max_rows=2) == '"flaky"*'
    # nothing but common words: the rarest stays, so the search still finds something
    assert natural_language_match("test suite", doc_frequency=count, max_rows=10) == '"suit"*'
    runner = Runner(conn)
    found = tiered_search(runner, "why is the test teardown flaky", limit=3, doc_frequency=count, max_rows=10)
    assert set(found) <= {41, 42} and found
    assert all("test" not in expression for expression in runner.expressions[1:])


def test_word_frequencies_are_looked_up_only_when_the_any_word_tier_runs(conn: sqlite3.Connection) -> None:
    lookups: list[str] = []
    count = doc_frequency(conn)

    def counting(term: str, prefix: bool) -> int:
        lookups.append(term)
        return count(term, prefix)

    tiered_search(Runner(conn), "test suite passed", limit=5, doc_frequency=counting)
    assert lookups == []  # the every-word tier had five hits
    tiered_search(Runner(conn), "fixture teardown races", limit=5, doc_frequency=counting)
    assert lookups

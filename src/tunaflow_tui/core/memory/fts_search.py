"""Running the FTS tiers of a natural-language query against any FTS5 table the caller owns.

The caller passes a function that runs one MATCH expression and returns ids, best first; this
module decides which expressions run and merges their hits. SQL, connections and schema stay
with the caller (the storage layer), so this works for the message index today and for any
chunk table later.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from typing import TypeVar

from tunaflow_tui.core.memory.fts_query import (
    COMMON_TERM_ROWS,
    DocFrequency,
    all_words_match,
    every_word_match,
    natural_language_match,
)

K = TypeVar("K", bound=Hashable)

#: Runs ``expression`` with ``LIMIT limit`` ordered by bm25 and returns the ids, best first.
MatchRunner = Callable[[str, int], Sequence[K]]


def tiered_search(run: MatchRunner[K], text: str, limit: int = 50, *,
                  doc_frequency: DocFrequency | None = None, max_rows: int = COMMON_TERM_ROWS) -> list[K]:
    """Up to ``limit`` ids for a natural-language query: every-word matches first, then any-word ones.

    The any-word tier only runs when the every-word tier found fewer than ``limit``, which spares
    the expensive OR over common words whenever the strict query already has enough. Example::

        def run(expression: str, limit: int) -> list[int]:
            sql = "SELECT rowid FROM messages_fts WHERE messages_fts MATCH ? ORDER BY bm25(messages_fts) LIMIT ?"
            return [row[0] for row in conn.execute(sql, (expression, limit))]

        message_ids = tiered_search(run, "why did the nightly build break?")
    """
    found: list[K] = []
    if limit <= 0:
        return found
    strict = all_words_match(text)
    if strict is not None:
        found = list(dict.fromkeys(run(strict, limit)))
        if len(found) >= limit:
            return found[:limit]
    # Only now are the word frequencies looked up: often the strict tier was enough.
    loose = natural_language_match(text, doc_frequency=doc_frequency, max_rows=max_rows)
    if loose is not None:
        seen = set(found)
        for item in run(loose, limit):
            if item not in seen:
                seen.add(item)
                found.append(item)
    return found[:limit]


def every_word_search(run: MatchRunner[K], text: str, limit: int = 50) -> list[K]:
    """Up to ``limit`` ids of messages holding every meaningful word of ``text``, best bm25 first.

    The full-text ranking of a hybrid search, beside the vectors: one cheap query (no OR over
    common words). On the labelled set of bench/retrieval_quality.py, fusing it with the vectors
    finds more than either alone, while fusing the any-word tier too found less than the vectors.
    """
    expression = every_word_match(text)
    if limit <= 0 or expression is None:
        return []
    return list(dict.fromkeys(run(expression, limit)))[:limit]

"""Natural-language questions as FTS5 MATCH expressions that bm25 can rank by how much they match.

"why did the nightly build fail after the dependency upgrade?" must find the message that says
"the nightly job broke when we bumped the dependencies", which contains only some of the words.
So the expression OR-s the meaningful words: common English words are dropped, English words
are cut to a light stem and matched as prefixes ("dependencies" → ``"dependenc"*``, which also
finds "dependency"), Korean particles are cut from their nouns ("데이터베이스를" → ``"데이터베이스"*``),
and every term is quoted, so FTS5 syntax typed by the user (quotes, ``NEAR``, ``AND``, ``*``,
``-``, ``^``, ``:``, parentheses) is searched for as text, never parsed. bm25 ranks messages
that match more (and rarer) words first. :func:`match_tiers` adds a first pass requiring every
word, so that a remembered phrase finds its message at the top (bm25 alone can rank a long
message with every word below a short one with one rare word).

The all-words builder in ``core/storage/search_query.py`` stays the right tool for a search box
where the user expects every word to match.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable
from functools import lru_cache

#: Characters of a query that are looked at; the rest of a pasted megabyte is ignored.
MAX_QUERY_CHARS = 2_000
#: Terms in one expression; more only slows the search without changing the top results.
MAX_TERMS = 16
_MIN_PREFIX = 3

_STOP_WORDS_TEXT = """
a about above after again against all also am an and any are aren as at be because been before being
below between both but by can cannot could couldn did didn do does doesn doing don down during each
either else ever every few for from further get gets got had hadn has hasn have haven having he her
here hers herself him himself his how i if in into is isn it its itself just let lets like made make
many may me might more most much must mustn my myself no nor not now of off on once one only or other
ought our ours ourselves out over own please really said same say says shall shan she should shouldn
since so some something still such than that the their theirs them themselves then there these they
thing things this those through thus to too under until up upon us use used using very via was wasn
way we were weren what whatever when where whether which while who whom whose why will with within
without won would wouldn yes yet you your yours yourself yourselves
anyone anything anybody everyone everything someone talk talked talking discuss discussed discussing
mention mentioned remember recall tell told know knew think thought want wanted need needed
able across actually almost along already although always among another anyhow anyway anywhere around
away back became become becomes behind beside besides better beyond came come comes certain certainly
clearly currently definitely done enough especially etc even eventually exactly far find first following
getting give given go goes going gone gotten happen happens happened hardly hence however instead keep
keeps kept last later least less likely little look looking looks lot lots mainly maybe mean meanwhile
merely mostly nearly never nevertheless new next nobody none nothing nowhere often ok okay perhaps
possible probably put quite rather seem seemed seems several sometimes somewhat soon sure take takes
taken took tried tries try trying two three whenever wherever whole
"""
#: Words too common to tell messages apart, plus words about the conversation itself ("discussed").
STOP_WORDS = frozenset(_STOP_WORDS_TEXT.split())

# Endings stripped before a prefix match, longest first; each with the shortest stem it may leave.
_ENGLISH_SUFFIXES = (("ations", 4), ("ation", 4), ("ing", 4), ("ies", 4), ("ed", 3), ("es", 4),
                     ("ly", 4), ("s", 3), ("e", 4))
# Particles and the commonest endings of "noun + 하다/되다" verbs, cut from Korean words; longest first.
_KOREAN_ENDINGS = tuple(sorted((
    "에서는", "으로는", "에게서", "이라는", "합니다", "됩니다", "에서", "으로", "에게", "까지", "부터", "처럼",
    "보다", "라는", "이랑", "하고", "하는", "하다", "했다", "해서", "하면", "했던", "하기", "되는", "된다",
    "됐다", "을", "를", "이", "가", "은", "는", "에", "의", "로", "와", "과", "도", "만", "랑"),
    key=len, reverse=True))
# A word, with hyphenated or apostrophised parts kept together ("on-call", "don't") and searched as
# the phrase the tokenizer makes of them.
_WORD = re.compile(r"\w+(?:[-'’]\w+)*")
_POSSESSIVE = re.compile(r"['’]s$")


def _is_hangul(ch: str) -> bool:
    return "\uac00" <= ch <= "\ud7a3"


def _english_stem(word: str) -> str:
    """A light stem: "dependencies" → "dependenc", "logged" → "log", "caching" → "cach"."""
    if word.endswith(("ss", "eed")):
        return word
    for suffix, shortest in _ENGLISH_SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= shortest:
            stem = word[: -len(suffix)]
            if suffix in ("ing", "ed") and stem[-1] == stem[-2] and stem[-1] not in "aeiouylsz":
                stem = stem[:-1]  # "logged" → "log", "mapping" → "map"
            return stem
    return word


def _stem(word: str) -> list[tuple[str, bool]]:
    """A word's searchable forms, each with whether to match it as a prefix.

    English stems of four letters or more are matched as prefixes ("cach"* finds cache, cached,
    caching). Shorter stems would match too much as prefixes ("log"* finds login), so they are
    matched exactly, together with the word as typed ("logs" → log, logs).
    """
    if word.isdigit():
        return [(word, False)]
    if word.isascii():
        head, sep, last = word.rpartition("-")
        if not last.isalpha():
            return [(word, len(word) >= _MIN_PREFIX + 1)]
        stem = head + sep + _english_stem(last)
        if len(stem) - len(head + sep) > _MIN_PREFIX:
            return [(stem, True)]
        return [(stem, False)] if stem == word else [(stem, False), (word, False)]
    if _is_hangul(word[-1]):
        for particle in _KOREAN_ENDINGS:
            if word.endswith(particle) and len(word) - len(particle) >= 2:
                return [(word[: -len(particle)], True)]
        return [(word, len(word) >= 2)]
    return [(word, len(word) >= _MIN_PREFIX)]


Groups = tuple[tuple[tuple[str, bool], ...], ...]


def _word_groups(text: str) -> Groups:
    """Per meaningful word of ``text``, its searchable forms (term, as_prefix); at most MAX_TERMS words.

    Remembered for recent queries: one search asks for them several times (tiers, snippets, chunks).
    """
    return _head_word_groups(text[:MAX_QUERY_CHARS])


@lru_cache(maxsize=256)
def _head_word_groups(head: str) -> Groups:
    # Control, format and lone-surrogate characters cannot be indexed and some cannot reach SQLite.
    head = "".join(" " if unicodedata.category(ch) in ("Cc", "Cf", "Cs") else ch for ch in head)
    words = [_POSSESSIVE.sub("", word.lower()) for word in _WORD.findall(unicodedata.normalize("NFC", head))]
    # Single Latin letters ("s" of "it's", "a") match nearly everything and mean nothing.
    words = [word for word in words if any(ch.isalnum() for ch in word) and not (len(word) == 1 and word.isascii())]
    meaningful = [word for word in words if word not in STOP_WORDS]
    groups: list[tuple[tuple[str, bool], ...]] = []
    seen: set[str] = set()
    for word in meaningful or words:
        forms = tuple(form for form in _stem(word) if form[0] not in seen)
        seen.update(form for form, _prefix in forms)
        if forms:
            groups.append(forms)
    if len(groups) > MAX_TERMS:
        # Keep the longest words, which tend to be the specific ones, in their original order.
        keep = set(sorted(range(len(groups)), key=lambda i: (-len(groups[i][0][0]), i))[:MAX_TERMS])
        groups = [group for i, group in enumerate(groups) if i in keep]
    return tuple(groups)


def query_terms(text: str) -> list[tuple[str, bool]]:
    """The (term, as_prefix) pairs a query searches for, in order, without duplicates.

    Stop words are dropped unless the query has nothing else ("to be or not to be" still searches).
    """
    return [form for group in _word_groups(text) for form in group]


def _quoted(term: str, prefix: bool) -> str:
    return '"' + term.replace('"', '""') + '"' + ("*" if prefix else "")


#: Rows the any-word tier may score, summed over its words (see ``doc_frequency``).
COMMON_TERM_ROWS = 4_000

#: The number of rows containing a term (``prefix``: any term starting with it), e.g. from fts5vocab.
DocFrequency = Callable[[str, bool], int]


def _rare_groups(groups: Groups, doc_frequency: DocFrequency | None, max_rows: int) -> Groups:
    """The rarest words of ``groups`` whose rows add up to at most ``max_rows``, in query order.

    The rarest word always stays, so there is always something to search.
    """
    if doc_frequency is None or len(groups) < 2:
        return groups
    counts = [sum(doc_frequency(term, prefix) for term, prefix in group) for group in groups]
    keep: set[int] = set()
    total = 0
    for i in sorted(range(len(groups)), key=lambda i: (counts[i], i)):
        if keep and total + counts[i] > max_rows:
            break
        keep.add(i)
        total += counts[i]
    return tuple(group for i, group in enumerate(groups) if i in keep)


def natural_language_match(text: str, *, doc_frequency: DocFrequency | None = None,
                           max_rows: int = COMMON_TERM_ROWS) -> str | None:
    """An FTS5 MATCH expression OR-ing the meaningful words of ``text``; None if nothing to search.

    Safe for any input: every term is a quoted FTS5 string, so nothing the user typed is parsed
    as syntax. Use it with ``ORDER BY bm25(<table>)`` (or ``rank``).

    bm25 scores every row that matches any term, so words found in tens of thousands of messages
    ("test", "error") cost tens of milliseconds while barely changing the order. Given
    ``doc_frequency``, the rarest words are kept while the rows they match add up to at most
    ``max_rows``, and the commoner ones are left out (the rarest word always stays): a bound on
    the work, whatever the user typed. A temporary fts5vocab table answers it without a schema
    change::

        CREATE VIRTUAL TABLE temp.messages_vocab USING fts5vocab(main, messages_fts, row);
        -- exact: WHERE term = ?; prefix: WHERE term >= ? AND term < ? with (term, term + "\U0010ffff")
        SELECT coalesce(sum(doc), 0) FROM temp.messages_vocab WHERE term >= ? AND term < ?;
    """
    groups = _rare_groups(_word_groups(text), doc_frequency, max_rows)
    if not groups:
        return None
    return " OR ".join(_quoted(term, prefix) for group in groups for term, prefix in group)


def all_words_match(text: str) -> str | None:
    """The same words as :func:`natural_language_match`, all required; None for fewer than two words.

    Run it first and the OR expression after, appending the hits not already found: messages with
    every word then come first, as users expect when they type a phrase they remember (see
    :func:`match_tiers`).
    """
    if len(_word_groups(text)) < 2:
        return None
    return every_word_match(text)


def every_word_match(text: str) -> str | None:
    """Every meaningful word of ``text`` required, a one-word query included; None if nothing to search.

    The full-text ranking a hybrid search fuses with the vectors: a message holding every word is
    strong evidence, while messages holding only some of them (the any-word tier) mostly push the
    vectors' better answers out of the top (see bench/retrieval_quality.py).
    """
    groups = _word_groups(text)
    if not groups:
        return None
    return " AND ".join(_quoted(*group[0]) if len(group) == 1
                        else "(" + " OR ".join(_quoted(*form) for form in group) + ")" for group in groups)


def match_tiers(text: str, *, doc_frequency: DocFrequency | None = None,
                max_rows: int = COMMON_TERM_ROWS) -> list[str]:
    """The expressions to run in order, concatenating their hits without repeats: all words, then any.

    Empty when there is nothing to search. Each tier is ranked by bm25 on its own; when the first
    tier already gives as many hits as wanted, the second need not run (see
    :func:`~tunaflow_tui.core.memory.fts_search.tiered_search`).
    """
    tiers = (all_words_match(text), natural_language_match(text, doc_frequency=doc_frequency, max_rows=max_rows))
    return [expression for expression in tiers if expression]

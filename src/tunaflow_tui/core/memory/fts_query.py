"""Natural-language questions as FTS5 MATCH expressions that bm25 can rank by how much they match.

"why did the nightly build fail after the dependency upgrade?" must find the message that says
"the nightly job broke when we bumped the dependencies", which contains only some of the words.
So the expression OR-s the meaningful words: common English words are dropped, English words
are cut to a light stem and matched as prefixes ("dependencies" → ``"dependenc"*``, which also
finds "dependency"), Korean particles are cut from their nouns ("데이터베이스를" → ``"데이터베이스"*``),
and every term is quoted, so FTS5 syntax typed by the user (quotes, ``NEAR``, ``AND``, ``*``,
``-``, ``^``, ``:``, parentheses) is searched for as text, never parsed. bm25 ranks messages
that match more (and rarer) words first.

The all-words builder in ``core/storage/search_query.py`` stays the right tool for a search box
where the user expects every word to match.
"""

from __future__ import annotations

import re
import unicodedata

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
_WORD = re.compile(r"\w+")


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


def _stem(word: str) -> tuple[str, bool]:
    """A word's searchable form and whether to match it as a prefix."""
    if word.isdigit():
        return word, False
    if word.isascii():
        if not word.isalpha():
            return word, len(word) >= _MIN_PREFIX
        return _english_stem(word), len(word) >= _MIN_PREFIX
    if _is_hangul(word[-1]):
        for particle in _KOREAN_ENDINGS:
            if word.endswith(particle) and len(word) - len(particle) >= 2:
                return word[: -len(particle)], True
        return word, len(word) >= 2
    return word, len(word) >= _MIN_PREFIX


def query_terms(text: str) -> list[tuple[str, bool]]:
    """The (term, as_prefix) pairs a query searches for, in order, without duplicates.

    Stop words are dropped unless the query has nothing else ("to be or not to be" still searches).
    """
    head = text[:MAX_QUERY_CHARS]
    # Control, format and lone-surrogate characters cannot be indexed and some cannot reach SQLite.
    head = "".join(" " if unicodedata.category(ch) in ("Cc", "Cf", "Cs") else ch for ch in head)
    words = [word.lower() for word in _WORD.findall(unicodedata.normalize("NFC", head))]
    words = [word for word in words if any(ch.isalnum() for ch in word)]
    meaningful = [word for word in words if word not in STOP_WORDS]
    terms: list[tuple[str, bool]] = []
    seen: set[str] = set()
    for word in meaningful or words:
        term = _stem(word)
        if term[0] not in seen:
            seen.add(term[0])
            terms.append(term)
    if len(terms) > MAX_TERMS:
        # Keep the longest words, which tend to be the specific ones, in their original order.
        keep = set(sorted(range(len(terms)), key=lambda i: (-len(terms[i][0]), i))[:MAX_TERMS])
        terms = [term for i, term in enumerate(terms) if i in keep]
    return terms


def natural_language_match(text: str) -> str | None:
    """An FTS5 MATCH expression OR-ing the meaningful words of ``text``; None if nothing to search.

    Safe for any input: every term is a quoted FTS5 string, so nothing the user typed is parsed
    as syntax. Use it with ``ORDER BY bm25(<table>)`` (or ``rank``).
    """
    terms = query_terms(text)
    if not terms:
        return None
    return " OR ".join('"' + term.replace('"', '""') + '"' + ("*" if prefix else "") for term, prefix in terms)

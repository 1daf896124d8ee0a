"""Mask secrets in text that arrives piece by piece, as an agent's reply streams.

A secret split across two pieces is in neither, so each piece cannot be masked on its own. A
:class:`StreamMasker` masks the joined text instead: it holds back the end of what it was given
that could still be the start of a secret, until the next piece (or the end) decides it. Nothing
is flushed on a timer; the end of a block or of the turn flushes with ``final=True``, which also
masks a trailing prefix of a known value (a stream cut mid-secret by a crash, a cancel or a
timeout leaks none of it).

The registry holds the values of secret-looking variables given to an agent (8+ characters), each
with its common encodings (base64 at the three alignments, trimmed at both ends so the neighbouring
bytes do not matter; URL-quoted; JSON-escaped), and bounded patterns of well-known tokens (Anthropic,
GitHub, AWS keys, PEM private-key headers). Every match is at most ``longest`` characters and none
contains a newline, so everything up to the last newline, or all but the last ``longest - 1``
characters, is final and can be shown: the result does not depend on how the text was split.
"""

from __future__ import annotations

import base64
import json
import re
import urllib.parse
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

MASK = "***"
#: values shorter than this are not treated as secrets (too many false hits)
MIN_SECRET_LEN = 8
#: a trailing prefix of a value at least this long is masked when a stream ends mid-secret
MIN_PREFIX_LEN = 4

_SECRET_NAME = re.compile(r"KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL|AUTH", re.IGNORECASE)


def _started(word: str) -> str:
    """A regex for the non-empty proper prefixes of ``word``."""
    return "|".join(re.escape(word[:size]) for size in range(1, len(word)))


#: well-known token shapes, each bounded (a match never grows past what is held back): the shape,
#: the longest it can be, and a regex for the ends of text that could still become one
TOKEN_SHAPES: tuple[tuple[str, int, str], ...] = (
    (r"sk-ant-[A-Za-z0-9_\-]{20,120}", 127, _started("sk-ant-") + r"|sk-ant-[A-Za-z0-9_\-]{0,120}"),
    (r"gh[pousr]_[A-Za-z0-9]{36}", 40, r"g|gh|gh[pousr]|gh[pousr]_[A-Za-z0-9]{0,36}"),
    (r"github_pat_[A-Za-z0-9_]{22,255}", 266, _started("github_pat_") + r"|github_pat_[A-Za-z0-9_]{0,255}"),
    (r"(?:AKIA|ASIA)[0-9A-Z]{16}", 20, r"A|AK|AKI|AS|ASI|(?:AKIA|ASIA)[0-9A-Z]{0,16}"),
    (r"-----BEGIN [A-Z0-9 ]{0,40}PRIVATE KEY-----", 67,
     _started("-----BEGIN ") + r"|-----BEGIN [A-Z0-9 ]{0,51}-{0,5}"),
)
TOKEN_PATTERNS = tuple(shape for shape, _, _ in TOKEN_SHAPES)
_TOKEN_STARTS = re.compile("|".join(f"(?:{start})" for _, _, start in TOKEN_SHAPES))
#: the start of a well-known token cut off by the end of a stream
_TRAILING_TOKEN = re.compile(r"(?:sk-ant-|gh[pousr]_|github_pat_|AKIA|ASIA)[A-Za-z0-9_\-]*\Z")


#: literals up to this length have their prefixes in one regex (deeper nesting strains ``re``)
_NESTED_MAX = 200


def _prefixes(literal: str) -> str:
    """A regex for the non-empty prefixes of ``literal``: ``a(?:b(?:c)?)?`` for ``abc``."""
    nested = ""
    for char in reversed(literal[1:]):
        nested = f"(?:{re.escape(char)}{nested})?"
    return re.escape(literal[0]) + nested


def looks_secret(name: str) -> bool:
    """True for a variable name like ``ANTHROPIC_API_KEY``, ``GH_TOKEN`` or ``DB_PASSWORD``."""
    return bool(_SECRET_NAME.search(name))


def secret_env_values(env: Mapping[str, str]) -> list[str]:
    """The values of secret-looking variables in ``env`` (each line of a multi-line value apart)."""
    values: set[str] = set()
    for name, value in env.items():
        if looks_secret(name):
            values.update(line.strip() for line in value.splitlines() if len(line.strip()) >= MIN_SECRET_LEN)
    return sorted(values)


def encodings(value: str) -> set[str]:
    """``value`` and the forms it takes when an agent prints it encoded (8+ characters each)."""
    forms = {value, urllib.parse.quote(value, safe=""), json.dumps(value)[1:-1]}
    raw = value.encode("utf-8")
    for shift in range(3):
        # base64 of the value at each alignment, without the characters that also depend on its neighbours
        encoded = base64.b64encode(b"\0" * shift + raw).decode("ascii")
        first = -(-8 * shift // 6)
        last = 8 * (shift + len(raw)) // 6
        forms.add(encoded[first:last])
    return {form for form in forms if len(form) >= MIN_SECRET_LEN}


@dataclass(frozen=True, slots=True)
class SecretRegistry:
    """The literals (values and their encodings) and token patterns to mask, compiled once."""

    literals: tuple[str, ...]
    pattern: re.Pattern[str] | None
    longest: int
    token_patterns: bool = True
    #: matches, at the end of a text, the earliest point from which more text could still make a secret
    open_end: re.Pattern[str] | None = None

    @classmethod
    def build(cls, values: Iterable[str] = (), *, token_patterns: bool = True) -> SecretRegistry:
        """A registry of ``values`` (with their encodings) and, unless told not to, the token patterns."""
        literals: set[str] = set()
        for value in values:
            if "\n" in value:
                raise ValueError("register each line of a multi-line secret on its own")
            if len(value) >= MIN_SECRET_LEN:
                literals |= encodings(value)
        ordered = tuple(sorted(literals, key=lambda s: (-len(s), s)))  # longest first wins at one offset
        alternatives = [re.escape(s) for s in ordered]
        longest = max((len(s) for s in ordered), default=0)
        if token_patterns:
            alternatives += TOKEN_PATTERNS
            longest = max(longest, *(size for _, size, _ in TOKEN_SHAPES))
        pattern = re.compile("|".join(alternatives)) if alternatives else None
        # nested groups in one regex for the usual lengths; longer values are looked at in Python
        starts = [_prefixes(literal) for literal in ordered if len(literal) <= _NESTED_MAX]
        if token_patterns:
            starts.append(_TOKEN_STARTS.pattern)
        open_end = re.compile(f"(?:{'|'.join(starts)})\\Z") if starts else None
        return cls(ordered, pattern, longest, token_patterns, open_end)

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> SecretRegistry:
        """The registry for an agent given ``env``: its secret-looking values and the token patterns."""
        return cls.build(secret_env_values(env))

    def open_from(self, text: str, start: int) -> int:
        """The earliest point at or after ``start`` from which more text could still make a secret
        (``len(text)`` when there is none): what follows it must wait for the next piece."""
        found = self.open_end.search(text, start) if self.open_end is not None else None
        earliest = found.start() if found is not None else len(text)
        for literal in self.literals:
            if len(literal) <= _NESTED_MAX:
                continue
            at = text.find(literal[0], start, earliest)
            while at != -1:
                if literal.startswith(text[at:]):
                    earliest = at
                    break
                at = text.find(literal[0], at + 1, earliest)
        return earliest

    def mask(self, text: str) -> str:
        """``text`` masked as a whole, as if it were a complete stream (trailing prefixes included)."""
        masker = StreamMasker(self)
        return masker.feed(text) + masker.flush(final=True)

    def trailing_prefix_start(self, text: str) -> int:
        """Where a cut-off secret begins at the end of ``text`` (``len(text)`` when none does)."""
        start = len(text)
        token = _TRAILING_TOKEN.search(text)
        if token is not None:
            start = token.start()
        for literal in self.literals:
            for size in range(min(len(literal) - 1, len(text)), MIN_PREFIX_LEN - 1, -1):
                if len(text) - size < start and text.endswith(literal[:size]):
                    start = len(text) - size
                    break
        return start


class StreamMasker:
    """Masks one text stream piece by piece; the concatenated output equals masking the whole text."""

    def __init__(self, registry: SecretRegistry) -> None:
        """A masker for one stream (one per reply, one per stderr)."""
        self._registry = registry
        self._tail = ""

    @property
    def held(self) -> int:
        """How many characters are held back, waiting for the next piece to decide them."""
        return len(self._tail)

    def feed(self, piece: str) -> str:
        """The part of the text so far that is decided, masked; the rest is held back."""
        if self._registry.pattern is None:
            return piece
        buf = self._tail + piece
        # text before this point has every character a match could span: it is decided
        decided = max(len(buf) - (self._registry.longest - 1), buf.rfind("\n") + 1, 0)
        cut = self._registry.open_from(buf, decided)
        out, emitted = self._replace(buf, cut)
        self._tail = buf[emitted:]
        return out

    def flush(self, *, final: bool = True) -> str:
        """Everything held back, masked; ``final`` also masks a trailing prefix of a known secret."""
        buf, self._tail = self._tail, ""
        if self._registry.pattern is None or not buf:
            return buf
        out, _ = self._replace(buf, len(buf))
        if final:
            start = self._registry.trailing_prefix_start(out)
            if start < len(out):
                out = out[:start] + MASK
        return out

    def _replace(self, buf: str, cut: int) -> tuple[str, int]:
        """Mask matches that start before ``cut``; the masked text and how far into ``buf`` it reaches."""
        assert self._registry.pattern is not None
        parts: list[str] = []
        position = 0
        for match in self._registry.pattern.finditer(buf):
            if match.start() >= cut:
                break
            parts += [buf[position:match.start()], MASK]
            position = match.end()
        end = max(cut, position)
        parts.append(buf[position:end])
        return "".join(parts), end

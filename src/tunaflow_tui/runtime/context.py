"""The ContextPack: one prompt assembled from ordered sections, each fitted to a token budget.

Lower-priority sections shrink first. The result is inspectable: which sections, how many
tokens each, which were cut.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from tunaflow_tui.runtime.tokens import WordPieceCounter, default_counter


@dataclass(frozen=True, slots=True)
class SectionSpec:
    """A section to place in the pack. Lower ``priority`` numbers are kept longest."""

    name: str
    title: str
    text: str
    priority: int
    keep: str = "head"  # which end survives a cut: head or tail


@dataclass(frozen=True, slots=True)
class Section:
    """A section as placed in the pack."""

    name: str
    title: str
    text: str
    tokens: int
    truncated: bool


@dataclass(frozen=True, slots=True)
class ContextPack:
    """The assembled prompt context."""

    sections: tuple[Section, ...]
    budget: int
    request: str = ""
    request_tokens: int = 0
    dropped: tuple[str, ...] = field(default_factory=tuple)

    @property
    def total_tokens(self) -> int:
        """Tokens of all sections plus the request."""
        return sum(s.tokens for s in self.sections) + self.request_tokens

    def render(self) -> str:
        """The prompt text: every non-empty section under its heading, then the request."""
        parts = [f"## {s.title}\n\n{s.text.strip()}" for s in self.sections if s.text.strip()]
        if self.request:
            parts.append(self.request.strip())
        return "\n\n".join(parts) + "\n"

    def describe(self) -> list[tuple[str, int, bool]]:
        """(section name, tokens, truncated) for every section, for the UI."""
        return [(s.name, s.tokens, s.truncated) for s in self.sections]


def assemble(
    specs: Sequence[SectionSpec],
    budget: int,
    *,
    request: str = "",
    counter: WordPieceCounter | None = None,
) -> ContextPack:
    """Fit ``specs`` into ``budget`` tokens (the request is never cut), shrinking low priority first."""
    counter = counter or default_counter()
    request_tokens = counter.count(request)
    texts = {spec.name: spec.text for spec in specs}
    tokens = {spec.name: counter.count(spec.text) for spec in specs}
    truncated: set[str] = set()
    available = max(0, budget - request_tokens)
    # Least important first: the highest priority number, and among equals the later one.
    order = sorted(range(len(specs)), key=lambda i: (specs[i].priority, i), reverse=True)
    for index in order:
        excess = sum(tokens.values()) - available
        if excess <= 0:
            break
        spec = specs[index]
        keep_tokens = max(0, tokens[spec.name] - excess)
        cut = counter.truncate(texts[spec.name], keep_tokens, keep=spec.keep)
        marker = "[…earlier part cut to fit the context budget…]\n" if spec.keep == "tail" else ""
        end_marker = "\n[…cut to fit the context budget…]" if spec.keep == "head" else ""
        texts[spec.name] = (marker + cut + end_marker) if cut else ""
        tokens[spec.name] = counter.count(texts[spec.name]) if cut else 0
        truncated.add(spec.name)
        # the marker lines themselves cost a few tokens; trim once more if they pushed us over
        over = sum(tokens.values()) - available
        if over > 0 and cut:
            cut = counter.truncate(cut, max(0, counter.count(cut) - over), keep=spec.keep)
            texts[spec.name] = (marker + cut + end_marker) if cut else ""
            tokens[spec.name] = counter.count(texts[spec.name]) if cut else 0
    sections = tuple(
        Section(spec.name, spec.title, texts[spec.name], tokens[spec.name], spec.name in truncated)
        for spec in specs
    )
    dropped = tuple(s.name for s in sections if s.truncated and not s.text)
    return ContextPack(sections, budget, request, request_tokens, dropped)

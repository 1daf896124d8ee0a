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
    budget: int | None = None
    """The section's own token budget (None: only the pack's); a longer text is cut to it first."""


@dataclass(frozen=True, slots=True)
class Section:
    """A section as placed in the pack: ``full_tokens`` is what its text counted before any cut."""

    name: str
    title: str
    text: str
    tokens: int
    truncated: bool
    budget: int | None = None
    full_tokens: int = 0

    @property
    def cut_tokens(self) -> int:
        """Tokens of the section's text left out to fit its budget or the pack's."""
        return max(0, self.full_tokens - self.tokens) if self.truncated else 0


@dataclass(frozen=True, slots=True)
class ContextPack:
    """The assembled prompt context (the persona travels separately, as the system prompt)."""

    sections: tuple[Section, ...]
    budget: int
    request: str = ""
    request_tokens: int = 0
    system_tokens: int = 0
    dropped: tuple[str, ...] = field(default_factory=tuple)

    @property
    def total_tokens(self) -> int:
        """Tokens of the persona, every section (with its heading) and the request."""
        return self.system_tokens + sum(s.tokens for s in self.sections) + self.request_tokens

    def render(self) -> str:
        """The prompt text: every non-empty section under its heading, then the request."""
        parts = [f"{_heading(s.title)}{s.text.strip()}" for s in self.sections if s.text.strip()]
        if self.request:
            parts.append(self.request.strip())
        return "\n\n".join(parts) + "\n"

    def describe(self) -> list[tuple[str, int, bool]]:
        """(section name, tokens, truncated) for the persona, every section and the request."""
        rows = [("persona", self.system_tokens, False)]
        rows += [(s.name, s.tokens, s.truncated) for s in self.sections]
        rows.append(("request", self.request_tokens, False))
        return rows


@dataclass(frozen=True, slots=True)
class SentPack:
    """The pack a turn was sent with: which role, in which conversation, and the exact prompt.

    ``resumed``: the turn resumed a native session, so the pack holds only what it had not seen.
    """

    role: str
    conversation_id: str
    pack: ContextPack
    resumed: bool = False
    prompt: str = ""


def _heading(title: str) -> str:
    return f"## {title}\n\n"


_CUT_HEAD = "\n[…cut to fit the context budget…]"
_CUT_TAIL = "[…earlier part cut to fit the context budget…]\n"


def assemble(
    specs: Sequence[SectionSpec],
    budget: int,
    *,
    request: str = "",
    system: str = "",
    counter: WordPieceCounter | None = None,
) -> ContextPack:
    """Fit ``specs`` into ``budget`` tokens, shrinking the least important sections first.

    The persona (``system``) and the request are never cut; they are counted first. A section's
    heading counts toward its tokens, and a section cut to nothing disappears with its heading.
    """
    counter = counter or default_counter()
    request_tokens = counter.count(request)
    system_tokens = counter.count(system)
    available = max(0, budget - request_tokens - system_tokens)
    heads = {spec.name: counter.count(_heading(spec.title)) for spec in specs}
    full = {spec.name: counter.count(spec.text) + heads[spec.name] if spec.text.strip() else 0 for spec in specs}
    texts = {spec.name: spec.text for spec in specs}
    truncated: set[str] = set()
    for spec in specs:  # each section's own budget first (its heading not counted)
        if spec.budget is not None and full[spec.name] and full[spec.name] - heads[spec.name] > spec.budget:
            texts[spec.name] = counter.truncate(spec.text, spec.budget, keep=spec.keep)
            truncated.add(spec.name)

    def cost(name: str) -> int:
        text = texts[name]
        return counter.count(text) + heads[name] if text.strip() else 0

    tokens = {spec.name: cost(spec.name) for spec in specs}
    # Least important first: the highest priority number, and among equals the later one.
    order = sorted(range(len(specs)), key=lambda i: (specs[i].priority, i), reverse=True)
    for index in order:
        spec = specs[index]
        for _attempt in range(4):  # the cut note costs a few tokens: trim again if it pushed us over
            excess = sum(tokens.values()) - available
            if excess <= 0 or not texts[spec.name]:
                break
            note = _CUT_TAIL if spec.keep == "tail" else _CUT_HEAD
            body = texts[spec.name].replace(_CUT_TAIL, "").replace(_CUT_HEAD, "")
            keep = counter.count(body) - excess - counter.count(note)
            cut = counter.truncate(body, keep, keep=spec.keep) if keep > 0 else ""
            texts[spec.name] = ((note + cut) if spec.keep == "tail" else (cut + note)) if cut.strip() else ""
            tokens[spec.name] = cost(spec.name)
            truncated.add(spec.name)
    sections = tuple(
        Section(spec.name, spec.title, texts[spec.name], tokens[spec.name], spec.name in truncated,
                spec.budget, full[spec.name])
        for spec in specs
    )
    dropped = tuple(s.name for s in sections if s.truncated and not s.text)
    return ContextPack(sections, budget, request, request_tokens, system_tokens, dropped)

"""The ContextPack: budgets in real tokens, low priority shrinks first, the request is never cut."""

from __future__ import annotations

from tunaflow_tui.runtime.context import SectionSpec, assemble
from tunaflow_tui.runtime.tokens import default_counter


def _words(n: int, word: str = "alpha") -> str:
    return " ".join(f"{word}{i}" for i in range(n))


def test_everything_fits_untouched() -> None:
    pack = assemble([SectionSpec("plan", "Plan", "add mul", 1)], 1000, request="do it", system="You are X.")
    assert pack.render() == "## Plan\n\nadd mul\n\ndo it\n"
    assert not any(s.truncated for s in pack.sections)
    assert pack.describe()[0][0] == "persona" and pack.describe()[-1] == ("request", pack.request_tokens, False)


def test_rendered_prompt_never_exceeds_the_budget_and_low_priority_shrinks_first() -> None:
    counter = default_counter()
    specs = [
        SectionSpec("plan", "Plan", _words(300, "plan"), 1),
        SectionSpec("project", "Project", _words(100, "proj"), 2),
        SectionSpec("recent", "Recent conversation", _words(2000, "turn"), 4, keep="tail"),
    ]
    request = "Please implement the plan now."
    persona = _words(50, "persona")
    budget = 1500
    pack = assemble(specs, budget, request=request, system=persona)
    rendered_tokens = counter.count(pack.render()) + counter.count(persona)
    assert rendered_tokens <= budget + 5  # joins between sections cost at most a few tokens
    by_name = {s.name: s for s in pack.sections}
    assert not by_name["plan"].truncated and not by_name["project"].truncated
    assert by_name["recent"].truncated
    assert "turn1999" in by_name["recent"].text, "recent turns keep their newest end"
    assert "turn0 " not in by_name["recent"].text
    assert pack.render().rstrip().endswith(request), "the request is never cut"


def test_many_small_sections_respect_the_budget_including_headings() -> None:
    counter = default_counter()
    specs = [SectionSpec(f"s{i}", f"Section number {i}", f"text {i}", 3) for i in range(20)]
    pack = assemble(specs, 100)
    assert counter.count(pack.render()) <= 100 + 20
    assert pack.dropped, "sections that no longer fit disappear with their headings"
    rendered = pack.render()
    for name in pack.dropped:
        assert f"## Section number {name[1:]}\n" not in rendered
    kept = [s for s in pack.sections if s.text]
    assert kept and all(f"## {s.title}" in rendered for s in kept)


def test_request_larger_than_the_budget_keeps_the_request_and_drops_sections() -> None:
    request = _words(400, "req")
    pack = assemble([SectionSpec("recent", "Recent", _words(100), 4)], 200, request=request)
    assert pack.render().strip() == request
    assert pack.dropped == ("recent",)

"""The tail of a streaming answer draws only the block being written on each flush, and draws the same
lines as the whole text drawn at once."""

from __future__ import annotations

from textual.app import App, ComposeResult

from tunaflow_tui.widgets import markdown_stream
from tunaflow_tui.widgets.markdown_stream import StreamTail

PARAGRAPHS = [
    "## Plan\n\n",
    "I read `counting.py` first; the counter is **one function**.\n\n",
    "- split on whitespace\n- count with a `Counter`\n\n",
    "```python\ndef top(words):\n\n    return Counter(words).most_common(10)\n```\n\n",
    "Then the CLI gets a `--top` flag and the tests an empty file. The last paragraph is still being wri",
]


class Tails(App[None]):
    def compose(self) -> ComposeResult:
        yield StreamTail(classes="growing")
        yield StreamTail(classes="whole")


def _lines(tail: StreamTail) -> list[str]:
    return [strip.text for strip in tail.strips_at(60)]


async def test_each_show_parses_only_the_block_being_written_and_draws_what_the_whole_text_draws(
    monkeypatch,
) -> None:
    parsed: list[str] = []
    real = markdown_stream.markdown_renderable

    def counting(source: str, code_theme: str = "monokai"):  # type: ignore[no-untyped-def]
        parsed.append(source)
        return real(source, code_theme)

    monkeypatch.setattr(markdown_stream, "markdown_renderable", counting)
    app = Tails()
    async with app.run_test(size=(60, 40)) as pilot:
        growing, whole = app.query_one(".growing", StreamTail), app.query_one(".whole", StreamTail)
        await pilot.pause()
        text = ""
        for paragraph in PARAGRAPHS:
            text += paragraph
            growing.show(text, grow=True)
            _lines(growing)
        parsed.clear()
        for more in ("tten", " word", " by word."):
            text += more
            growing.show(text, grow=False)
            _lines(growing)
        # three flushes, each parsing the last paragraph alone, not the blocks above it
        assert len(parsed) == 3 and all(source.startswith("Then the CLI") for source in parsed)

        whole.show(text, grow=True)
        assert _lines(growing) == _lines(whole)
        assert any("def top(words):" in line for line in _lines(growing))
        assert "word by word." in "".join(_lines(growing))

        # a seal moved the first blocks into the body: the tail starts over with what is left
        rest = text[text.index("- split") :]
        growing.show(rest, grow=True)
        whole.show(rest, grow=True)
        assert _lines(growing) == _lines(whole)
        assert not any("Plan" in line for line in _lines(growing))

"""A message's Markdown is drawn once per document and width, and looks exactly as Textual draws it."""

from __future__ import annotations

from textual.app import App, ComposeResult
from textual.widget import Widget

from tunaflow_tui.textual_compat import draw_with_textual
from tunaflow_tui.widgets import markdown_stream
from tunaflow_tui.widgets.markdown_stream import MarkdownBody

DOCUMENTS = [
    "## What changed\n\n- `count_words(text)` splits on any run of whitespace, " + "so tabs count " * 12 + "\n- two\n\n",
    "```python\ndef count_words(text: str) -> int:\n    return len(text.split())\n```\n\n",
    "| a | b |\n|---|---|\n| 1 | **bold** and [a link](https://example.com) |\n\n> quoted 한국어 문장\n\n",
]


class OneBody(App[None]):
    CSS = "MarkdownBody { padding: 0 1; }"

    def compose(self) -> ComposeResult:
        yield MarkdownBody(DOCUMENTS[0])


async def test_the_lines_drawn_are_textuals_own_and_sealing_draws_only_the_new_document(monkeypatch) -> None:
    app = OneBody()
    async with app.run_test(size=(70, 60)) as pilot:
        body = app.query_one(MarkdownBody)
        for document in DOCUMENTS[1:]:
            body.seal(document)
        await pilot.pause()
        assert body.size.height == body.line_count(body.size.width)
        ours = [body.render_line(y) for y in range(body.size.height)]
        draw_with_textual(body)
        theirs = [Widget.render_line(body, y) for y in range(body.size.height)]
        assert [strip.text for strip in ours] == [strip.text for strip in theirs]
        assert [list(strip) for strip in ours] == [list(strip) for strip in theirs]  # styles too
        assert "def count_words" in "\n".join(strip.text for strip in ours)

        drawn: list[int] = []
        lines_of = markdown_stream.MarkdownChunks.lines_of

        def counting(self, index, console, options):  # type: ignore[no-untyped-def]
            drawn.append(index)
            return lines_of(self, index, console, options)

        monkeypatch.setattr(markdown_stream.MarkdownChunks, "lines_of", counting)
        body.seal("A new paragraph after the table.\n\n")
        await pilot.pause()
        assert drawn and set(drawn) == {3}, "only the sealed document is drawn"
        assert "A new paragraph after the table." in "\n".join(
            body.render_line(y).text for y in range(body.size.height))

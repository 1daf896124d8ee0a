"""The streaming parts of a chat message: a Markdown body drawn as one widget, and the tail still being written.

Every widget in the chat costs time on each layout pass and repaint, and a chat shows dozens of
messages while several answers stream.  So a message's Markdown is not a tree of widgets (Textual's
``Markdown`` makes one per paragraph, list and code block): it is drawn by a single
:class:`MarkdownBody` (one widget drawing :class:`rich.markdown.Markdown` renderables).  While an
answer streams, the body holds the *sealed* part — the blocks that are complete — and a second
widget, the *tail* (:class:`StreamTail`), holds the paragraphs still being written, in the rows it
was granted on the last growth beat (:mod:`~tunaflow_tui.widgets.stream_clock`).  On a growth beat
the tail's finished blocks are sealed into the body (:func:`find_seal` says where), where they are
parsed once and their rendered lines are kept per width.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from rich.console import Console, ConsoleOptions, RenderResult
from rich.segment import Segment
from textual.strip import Strip
from textual.visual import RichVisual, Visual
from textual.widget import Widget

from tunaflow_tui.textual_compat import forget_dirty_regions, is_selecting, styles_key

if TYPE_CHECKING:
    from rich.markdown import Markdown as RichMarkdown
    from textual.geometry import Size


SEAL_INTERVAL = 0.4
"""A streaming answer's finished blocks move from the tail into the body at most this often (seconds)."""

TAIL_MAX_CHARS = 2_000
"""A tail longer than this is sealed at the next flush (inside a code block if it must)."""

_FENCE = re.compile(r" {0,3}(`{3,}|~{3,})")


def _closes(line: str, opener: str) -> bool:
    """True if ``line`` closes the code fence opened by ``opener`` (e.g. ````` ``` ````` or ``~~~~``)."""
    stripped = line.strip()
    return bool(stripped) and set(stripped) == {opener[0]} and len(stripped) >= len(opener)


def find_seal(text: str, fence: str | None = None, *, in_code: bool = False) -> tuple[int, str | None]:
    """Where ``text`` (the start of a tail) can be cut so that the part before it renders on its own.

    A cut falls after a blank line that is followed by an unindented line, outside code fences: what
    comes before is then a complete run of Markdown blocks.  With ``in_code`` a cut may also fall
    between two lines of a code block (the caller closes the fence before the cut and opens it again
    after), so that one enormous code block cannot keep the tail growing.

    Args:
        text: The tail text.
        fence: The fence marker (e.g. ``"```"``) of a code block that is open where ``text`` starts.
        in_code: Also cut inside a code block, at its last complete line, when no better cut exists.

    Returns:
        ``(position, fence)``: the cut (0 for none) and the marker of the code block open there.
    """
    best, best_fence = 0, None
    code_cut, code_fence = 0, None
    position = 0
    blank_before = False
    for line in text.splitlines(keepends=True):
        if blank_before and fence is None and line.strip() and not line[0].isspace():
            best, best_fence = position, None
        if not line.endswith("\n"):
            break  # the line still being written
        if fence is not None:
            if _closes(line, fence):
                fence = None
            elif in_code:
                code_cut, code_fence = position + len(line), fence
        elif match := _FENCE.match(line):
            fence = match.group(1)
        blank_before = not line.strip()
        position += len(line)
    if best == 0 and code_cut:
        return code_cut, code_fence
    return best, best_fence


class MarkdownChunks:
    """A Rich renderable: Markdown documents drawn one after another, a blank line between them.

    A blank line follows the last one too (the space Markdown leaves after a block), none if empty.

    Each document is parsed once; its rendered lines are kept for the last width it was drawn at, so
    adding a document to a long message only renders the new one.
    """

    def __init__(self, sources: list[str] | None = None, *, code_theme: str = "monokai") -> None:
        self.code_theme = code_theme
        self.sources: list[str] = []
        self._documents: list[RichMarkdown] = []
        self._lines: list[tuple[int, list[list[Segment]]] | None] = []
        for source in sources or []:
            self.add(source)

    def add(self, source: str) -> None:
        """Append a Markdown document (empty ones are skipped)."""
        if not source.strip():
            return
        self.sources.append(source)
        self._documents.append(markdown_renderable(source, self.code_theme))
        self._lines.append(None)

    def drop_from(self, index: int) -> None:
        """Remove document ``index`` and those after it."""
        del self.sources[index:], self._documents[index:], self._lines[index:]

    def __len__(self) -> int:
        return len(self._documents)

    def lines_of(self, index: int, console: Console, options: ConsoleOptions) -> list[list[Segment]]:
        """The rendered lines of document ``index`` at ``options.max_width`` (kept for that width)."""
        width = options.max_width
        cached = self._lines[index]
        if cached is None or cached[0] != width:
            lines = console.render_lines(self._documents[index], options.update(height=None), pad=False)
            while lines and not any(segment.text.strip() for segment in lines[-1]):
                lines.pop()
            if index:  # Rich starts a document that opens with a list with an empty line: the
                # blank line before it is already drawn, as in the text drawn as one document
                while lines and not any(segment.text for segment in lines[0]):
                    del lines[0]
            cached = self._lines[index] = (width, lines)
        return cached[1]

    def piece(self, index: int) -> _Piece:
        """Document ``index`` as drawn here, with the blank line after it: the pieces one after
        another draw exactly what this renderable draws."""
        return _Piece(self, index)

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        for index in range(len(self._documents)):
            yield from _Piece(self, index).__rich_console__(console, options)


class _Piece:
    """One document of a :class:`MarkdownChunks` and the blank line after it, as a Rich renderable."""

    def __init__(self, chunks: MarkdownChunks, index: int) -> None:
        self.chunks, self.index = chunks, index

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        new_line = Segment.line()
        for line in self.chunks.lines_of(self.index, console, options):
            yield from line
            yield new_line
        yield new_line


class MarkdownLines(Widget):
    """A widget that draws :class:`MarkdownChunks` and keeps each document's drawn lines.

    Textual draws a widget by rendering its whole renderable again after each refresh, and measures
    its height by rendering it once more: for a long answer, hundreds of lines each time a block is
    sealed or the chat is laid out.  Here each document is turned into lines (styled as Textual would
    style the whole) once per width and style, and the widget hands out the lines asked for; adding a
    document draws only it, and the height is a count.
    """

    def __init__(self, chunks: MarkdownChunks, *, classes: str | None = None) -> None:
        super().__init__(classes=classes)
        self._chunks = chunks
        self._strips: list[Strip] = []
        self._strips_key: tuple[object, ...] | None = None
        self._strips_done = 0
        self._marks: list[int] = []
        """Where each drawn document's lines start in ``_strips``."""

    def render(self) -> MarkdownChunks:
        return self._chunks

    def _set_chunks(self, chunks: MarkdownChunks) -> None:
        self._chunks, self._strips_key = chunks, None

    def _own_drawing(self) -> bool:
        """False when Textual's own drawing must be used (a text selection, non-default alignment)."""
        return (
            self.text_selection is None
            and not is_selecting(self.screen)
            and self.styles.content_align == ("left", "top")
        )

    def strips_at(self, width: int) -> list[Strip]:
        """Every line of the documents at ``width``, as Textual draws them (new documents drawn now)."""
        style = self.visual_style
        # The link style comes from this widget's own rules: they are the same while its styles are.
        key = (width, style, styles_key(self.styles), self.auto_links, self._chunks)
        if key != self._strips_key:
            self._strips, self._strips_key, self._strips_done, self._marks = [], key, 0, []
        chunks = self._chunks
        while self._strips_done < len(chunks):
            self._marks.append(len(self._strips))
            piece = RichVisual(self, chunks.piece(self._strips_done))
            self._strips.extend(Visual.to_strips(self, piece, width, None, style))
            self._strips_done += 1
        return self._strips

    def _redraw_from(self, index: int) -> None:
        """Document ``index`` and those after it changed: their lines are drawn again when asked for."""
        if self._strips_done > index:
            del self._strips[self._marks[index] :], self._marks[index:]
            self._strips_done = index

    def line_count(self, width: int) -> int:
        """Rows the documents take at ``width``."""
        return len(self.strips_at(width)) if width > 0 else 0

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        return self.line_count(width)

    def render_line(self, y: int) -> Strip:
        if not self._own_drawing():
            return super().render_line(y)
        width = self.size.width
        forget_dirty_regions(self)
        strips = self.strips_at(width)
        if 0 <= y < min(len(strips), self.size.height):
            return strips[y]
        return Strip.blank(width, self.visual_style.rich_style)


def keep_line_breaks(text: str) -> str:
    """``text`` with each line break outside code blocks made a Markdown hard break.

    What the user typed on two lines (ctrl+j in the composer) shows on two lines, as typed, while
    their Markdown (lists, code blocks, emphasis) still renders.
    """
    lines = text.split("\n")
    fence: str | None = None
    for i, line in enumerate(lines[:-1]):
        if fence is not None:
            if _closes(line + "\n", fence):
                fence = None
            continue
        if match := _FENCE.match(line + "\n"):
            fence = match.group(1)
            continue
        if line.strip() and lines[i + 1].strip() and not line.endswith("  "):
            lines[i] = line + "  "
    return "\n".join(lines)


def markdown_renderable(source: str, code_theme: str = "monokai") -> RichMarkdown:
    """Rich Markdown for (already neutralised) agent text: links show their address, never hide it."""
    from rich.markdown import Markdown as RichMarkdown

    return RichMarkdown(source, code_theme=code_theme, hyperlinks=False)


class MarkdownBody(MarkdownLines):
    """A message's Markdown as one widget (see the module docstring for why not a widget tree).

    Args:
        source: The Markdown text (already neutralised).
    """

    DEFAULT_CSS = """
    MarkdownBody {
        height: auto;
    }
    """

    def __init__(self, source: str = "", *, classes: str | None = None) -> None:
        super().__init__(MarkdownChunks([source]), classes=classes)
        self._source = source

    @property
    def source(self) -> str:
        """The Markdown text shown."""
        return self._source

    def update(self, source: str) -> None:
        """Show ``source`` instead (parsed again as one document)."""
        self._set_chunks(MarkdownChunks([source], code_theme=self._chunks.code_theme))
        self._source = source
        self.refresh(layout=True)

    def seal(self, markdown: str, text: str | None = None) -> None:
        """Append a run of complete Markdown blocks (only they are parsed and rendered).

        Args:
            markdown: The blocks as drawn (a code block cut in two is closed / reopened here).
            text: The text they show, for :attr:`source` (``markdown`` if not given).
        """
        self._chunks.add(markdown)
        self._source += markdown if text is None else text
        self.refresh(layout=True)


class StreamTail(MarkdownLines):
    """The part of a streaming answer still being written: Rich Markdown in a number of rows it is granted.

    Redrawing it in the rows it has repaints only them; adding rows lays out the chat (see
    :mod:`~tunaflow_tui.widgets.stream_clock`).  So :meth:`show` adds rows only when asked to, and
    otherwise draws the text in the rows it has: the lines that do not fit yet wait for the next
    growth beat, while the last line shown keeps filling.
    """

    DEFAULT_CSS = """
    StreamTail {
        height: auto;
    }
    """

    def __init__(self, *, classes: str | None = None) -> None:
        super().__init__(MarkdownChunks(), classes=classes)
        self._complete = ""
        """The start of the text shown, made of complete blocks: drawn once, kept while it stays the same."""
        self._complete_documents = 0
        self._rows = 0
        self._rows_width = 0
        self.out_of_step = False
        """True while the text needs another number of rows than it has (until a growth beat)."""

    @property
    def rows(self) -> int:
        """The rows granted (the widget's content height)."""
        return self._rows

    def _rows_needed(self, width: int) -> int:
        """Rows the text takes at ``width`` (drawn once: the lines counted are the lines shown)."""
        return self.line_count(width)

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        if width != self._rows_width:  # first layout or a new width: take the rows the text needs
            self._rows, self._rows_width, self.out_of_step = self._rows_needed(width), width, False
        return self._rows

    def show(self, source: str, *, grow: bool) -> None:
        """Draw ``source`` (already neutralised Markdown); take the rows it needs only if ``grow``.

        The complete blocks at its start (cut where :func:`find_seal` cuts) are drawn as documents of
        their own and kept from one call to the next while the text grows after them: each flush
        draws only the block being written, however long the tail has grown between growth beats.
        """
        chunks = self._chunks
        if self._complete and source.startswith(self._complete):
            chunks.drop_from(self._complete_documents)  # the block being written is drawn again
            self._redraw_from(self._complete_documents)
        else:
            chunks = MarkdownChunks()
            self._set_chunks(chunks)
            self._complete, self._complete_documents = "", 0
        rest = source[len(self._complete) :]
        cut, _fence = find_seal(rest)
        if cut:
            chunks.add(rest[:cut])
            self._complete += rest[:cut]
            self._complete_documents = len(chunks)
            rest = rest[cut:]
        chunks.add(rest)
        width = self._rows_width
        if not width:  # not laid out yet: the first layout sizes it
            self.refresh(layout=True)
            return
        needed = self._rows_needed(width)
        if grow and needed != self._rows:
            self._rows = needed
            self.refresh(layout=True)
        else:
            self.refresh()
        self.out_of_step = needed != self._rows

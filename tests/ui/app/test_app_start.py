"""What opening the app costs: CSS parsed once per process, the first screen styled once for its size."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest
from app_harness import screen_text
from textual.css import stylesheet
from waiting import until


@pytest.fixture
def css_parses(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """The CSS sources Textual parses from now on (where each was read from)."""
    parsed: list[str] = []
    parse: Callable[..., Any] = stylesheet.parse

    def counted(scope: str, css: str, read_from: Any, *args: Any, **kwargs: Any) -> Any:
        parsed.append(str(read_from))
        return parse(scope, css, read_from, *args, **kwargs)

    monkeypatch.setattr(stylesheet, "parse", counted)
    yield parsed


def _look(app: Any) -> tuple[object, ...]:
    """How the main widgets are styled: background, colour and border of the composer and the chat."""
    look: list[object] = []
    for selector in ("#composer", "#chat", "#chat-column"):
        styles = app.query_one(selector).styles
        look += [styles.background, styles.color, styles.border]
    return tuple(look)


async def test_a_second_app_in_the_process_parses_no_css_and_looks_the_same(open_app, css_parses) -> None:
    first, _controller, _runtime = open_app()
    async with first.run_test(size=(120, 40)) as pilot:
        await until(pilot, lambda: "Main" in screen_text(first), "the first app open")
        looked = _look(first)
        shown = screen_text(first)
    css_parses.clear()  # (whatever it parsed: an app opened earlier in this process may have parsed it all)

    second, _controller, _runtime = open_app()
    async with second.run_test(size=(120, 40)) as pilot:
        await until(pilot, lambda: "Main" in screen_text(second), "the second app open")
        assert css_parses == []
        assert _look(second) == looked
        assert screen_text(second) == shown
        # another theme: its variables make other rules, not the first theme's shared ones
        second.theme = "tunaflow-light"
        await until(pilot, lambda: _look(second) != looked, "the light theme's colours")


async def test_the_first_screen_has_the_classes_of_the_terminals_size_before_anything_mounts(open_app) -> None:
    # Textual sets them at the screen's first resize, and every widget already styled was styled again
    for size, classes in (((120, 40), {"-wide", "-tall"}), ((80, 24), {"-narrow", "-short"})):
        app, _controller, _runtime = open_app()
        async with app.run_test(size=size) as pilot:
            await pilot.pause()
            assert app.get_default_screen().classes == classes
            assert classes <= app.screen.classes

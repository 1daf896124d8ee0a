"""What opening the app costs: the first screen styled once for its size."""

from __future__ import annotations


async def test_the_first_screen_has_the_classes_of_the_terminals_size_before_anything_mounts(open_app) -> None:
    # Textual sets them at the screen's first resize, and every widget already styled was styled again
    for size, classes in (((120, 40), {"-wide", "-tall"}), ((80, 24), {"-narrow", "-short"})):
        app, _controller, _runtime = open_app()
        async with app.run_test(size=size) as pilot:
            await pilot.pause()
            assert app.get_default_screen().classes == classes
            assert classes <= app.screen.classes

"""At 80×24 the main areas' titled rules cost the chat no row: the header gives its row to the chat's
rule, which names the project in its place. Taller terminals keep the header."""

from __future__ import annotations

from app_harness import screen_text, settle
from waiting import until

CHAT_ROWS_AT_80X24 = 18
"""24 rows less the footer, the composer (its rule, who receives, two lines to write) and the chat's rule."""


async def test_the_chat_keeps_its_rows_at_80x24(open_app) -> None:
    app, _controller, _runtime = open_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot, app)
        await until(pilot, lambda: app.chat_view.size.height == CHAT_ROWS_AT_80X24, "the chat's rows", limit=10)
        rows = screen_text(app).splitlines()
        assert rows[0].startswith("━Chat · textstats━"), rows[0]
        assert not any("tunaflow — textstats" in row for row in rows), "\n".join(rows)


async def test_a_taller_terminal_keeps_the_header(open_app) -> None:
    app, _controller, _runtime = open_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        rows = screen_text(app).splitlines()
        assert "tunaflow — textstats" in rows[0], rows[0]
        assert any("Chat━" in row and "textstats" not in row for row in rows[1:3]), "\n".join(rows[:3])
        await pilot.resize_terminal(80, 24)  # made smaller: the header goes, its row to the chat
        await until(pilot, lambda: screen_text(app).splitlines()[0].startswith("━Chat · textstats━"),
                    "the chat's rule in the header's place", limit=10)
        await until(pilot, lambda: app.chat_view.size.height == 18, "the chat's rows", limit=10)

"""The symbols the app draws exist in common monospace fonts (DejaVu Sans Mono), so none is an empty box."""

from __future__ import annotations

import shutil
import subprocess

import pytest
from app_harness import screen_text
from waiting import until

from tunaflow_tui.viewmodels import glyphs

MISSING_IN_DEJAVU = ("⎇", "⭘")


def _dejavu_mono_has(char: str) -> bool:
    out = subprocess.run(["fc-list", f":charset={ord(char):x}", "family"], capture_output=True, text=True,
                         timeout=30).stdout
    return "DejaVu Sans Mono" in out


@pytest.mark.skipif(shutil.which("fc-list") is None, reason="needs fontconfig's fc-list")
def test_every_glyph_is_in_dejavu_sans_mono() -> None:
    if not _dejavu_mono_has("A"):
        pytest.skip("DejaVu Sans Mono is not installed")
    assert [char for char in MISSING_IN_DEJAVU if _dejavu_mono_has(char)] == [], "the check itself tells them apart"
    assert [char for char in glyphs.ALL if not _dejavu_mono_has(char)] == []


async def test_the_header_and_a_branch_use_those_glyphs(open_app, demo_project) -> None:
    app, session, runtime = open_app()
    checkpoint = runtime.store.add_message("main", "user", "Where should the cache live?")
    branch = runtime.store.create_branch(conversation_id="main", checkpoint_id=checkpoint.id, parent_branch_id=None,
                                         mode="chat", kind="general", label="cache experiments")
    async with app.run_test(size=(120, 40)) as pilot:
        await until(pilot, lambda: app.query("#project-sidebar"), "the sidebar")
        await session.panes.open_branch(branch.id)
        await until(pilot, lambda: f"{glyphs.BRANCH} cache experiments" in screen_text(app), "the branch pane")
        shown = screen_text(app)
        assert glyphs.APP_ICON in shown
        assert not any(char in shown for char in MISSING_IN_DEJAVU), shown

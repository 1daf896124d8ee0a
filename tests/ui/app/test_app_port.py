"""The controllers are typed against AppPort, not the app: the app they are handed must be one.

mypy checks the same statically (``app.py`` passes the app to ``ChatController.attach``, typed
``AppPort``); this checks it at run time on the app as it is wired in a session.
"""

from __future__ import annotations

from textual.app import App

from tunaflow_tui.controllers.app_port import AppPort


async def test_the_app_a_session_drives_is_what_its_controllers_are_typed_against(open_app) -> None:  # type: ignore[no-untyped-def]
    app, session, _runtime = open_app()
    async with app.run_test(size=(120, 40)):
        assert session.app is app
        assert isinstance(session.app, AppPort)


async def test_a_bare_textual_app_is_not_one() -> None:
    """The check can fail: a Textual app without the shell's chat, composer and panes is no AppPort."""
    bare: App[None] = App()
    async with bare.run_test():
        assert not isinstance(bare, AppPort)

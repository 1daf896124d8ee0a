"""textual-serve's ``Server`` with tunaflow's access checks: the one place that uses its private API.

Checked against textual-serve 1.1.x (``textual-serve>=1.1,<2`` in pyproject.toml; read in 1.1.2 and
1.1.3). It relies on one private method of ``textual_serve.server.Server``: ``_make_app()`` returns
the ``aiohttp.web.Application`` before it runs, so middlewares and response hooks can still be added
(they then cover ``/``, ``/ws``, ``/download`` and ``/static``). ``serve()`` is replaced so that the
address with the token is printed once the socket listens, and no access log ever writes it.

If a later textual-serve changes this, ``tests/test_serve_access.py`` fails (every route must refuse a
foreign Host), rather than the server running without its checks.
"""

from __future__ import annotations

import asyncio
import signal
from pathlib import Path

from aiohttp import web
from textual_serve.server import Server

from tunaflow_tui.subcommands.serve_guard import ServeAccess, add_security_headers, make_guard

CHECKED_TEXTUAL_SERVE = ">=1.1,<2"


class GuardedServer(Server):
    """A textual-serve server that only the holder of the run's token can use."""

    def __init__(self, command: str, access: ServeAccess, *, title: str, templates_path: Path) -> None:
        super().__init__(command, host=access.bind_host, port=access.port, title=title,
                         public_url=access.public_url, templates_path=templates_path)
        self.access = access

    async def _make_app(self) -> web.Application:
        app = await super()._make_app()
        app.middlewares.append(make_guard(self.access))
        app.on_response_prepare.append(add_security_headers)
        return app

    async def on_startup(self, app: web.Application) -> None:
        """Nothing: the address is printed by ``serve`` once the socket listens."""

    def serve(self, debug: bool = False) -> None:
        """Listen, print the address with the token once, and serve until SIGINT or SIGTERM.

        Raises ``OSError`` when the address cannot be bound (before anything is printed).
        """
        self.debug = debug
        asyncio.run(self._serve_until_stopped())

    async def _serve_until_stopped(self) -> None:
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for signum in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(signum, stop.set)
        # no access log: its request lines would carry the token
        runner = web.AppRunner(await self._make_app(), handle_signals=False, access_log=None)
        await runner.setup()
        try:
            await web.TCPSite(runner, self.host, self.port).start()
            print(f"tunaflow serve: {self.title}", flush=True)
            print("Open this address in your browser (it holds this run's secret; do not share it):")
            print(f"    {self.access.login_url()}")
            print("Press Ctrl+C to stop.", flush=True)
            await stop.wait()
        finally:
            await runner.cleanup()

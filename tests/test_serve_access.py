"""Only the person who started `tunaflow serve` gets in: Host, Origin and the per-run token, on a real server."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import aiohttp
import pytest
from serve_process import Served, free_port, serve, stop

pytestmark = pytest.mark.e2e

EVIL = "http://evil.example"


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    project = tmp_path_factory.mktemp("served") / "project"
    project.mkdir()
    port = free_port()
    process = serve(str(project), "--port", str(port), "--max-tabs", "1", cwd=project.parent)
    try:
        yield Served(process, port)
    finally:
        stop(process)


async def _get(url: str, headers: dict[str, str] | None = None) -> tuple[int, aiohttp.ClientResponse]:
    async with aiohttp.ClientSession() as session, session.get(
        url, headers=headers or {}, allow_redirects=False
    ) as response:
        await response.read()
        return response.status, response


async def _login(served: Served) -> str:
    """Exchange the token for the session cookie, as the browser does; the ``Cookie`` header to send."""
    status, response = await _get(served.url)
    assert status == 303
    morsel = next(iter(response.cookies.values()))
    return f"{morsel.key}={morsel.value}"


async def _ws_status(served: Served, headers: dict[str, str]) -> int:
    async with aiohttp.ClientSession() as session:
        try:
            async with session.ws_connect(f"{served.base}/ws?width=80&height=24", headers=headers) as websocket:
                await websocket.close()
                return 101
        except aiohttp.WSServerHandshakeError as exc:
            return exc.status


def test_a_foreign_host_is_refused_on_every_route(served: Served) -> None:
    async def check() -> None:
        cookie = await _login(served)
        for path in ("/", f"/?token={served.token}", "/ws", "/download/x", "/static/js/textual.js"):
            status, _ = await _get(served.base + path, {"Host": "evil.example", "Cookie": cookie, "Origin": EVIL})
            assert status == 403, path
            if path == "/ws":
                continue  # a websocket with this server's own Host: the handshake tests below
            # the same request to the server's own name is not refused for its Host
            own = f"localhost:{served.port}"
            status, _ = await _get(served.base + path, {"Host": own, "Cookie": cookie, "Origin": f"http://{own}"})
            assert status != 403, path

    asyncio.run(check())


def test_a_wrong_or_missing_token_gets_nothing(served: Served) -> None:
    async def check() -> None:
        for path in ("/?token=wrong", f"/?token={served.token[:-1]}", "/", "/download/x"):
            status, response = await _get(served.base + path)
            assert status == 403, path
            assert not response.cookies, path
        assert await _ws_status(served, {"Origin": served.origin}) == 403

    asyncio.run(check())


def test_the_token_becomes_a_strict_httponly_cookie_and_leaves_the_address(served: Served) -> None:
    async def check() -> None:
        status, response = await _get(served.url + "&fontsize=18")
        assert status == 303
        assert response.headers["Location"] == "/?fontsize=18"
        (morsel,) = response.cookies.values()
        assert morsel.key == f"tunaflow-serve-{served.port}"
        assert morsel["httponly"] and morsel["samesite"] == "Strict"
        assert served.token not in morsel.value
        status, page = await _get(served.base + "/", {"Cookie": f"{morsel.key}={morsel.value}"})
        assert status == 200
        assert page.headers["Content-Security-Policy"] == "frame-ancestors 'none'"

    asyncio.run(check())


def test_the_websocket_needs_the_cookie_and_this_pages_origin(served: Served) -> None:
    async def check() -> None:
        cookie = await _login(served)
        assert await _ws_status(served, {"Cookie": cookie, "Origin": EVIL}) == 403
        assert await _ws_status(served, {"Cookie": cookie}) == 403  # no Origin at all
        assert await _ws_status(served, {"Cookie": cookie, "Origin": f"http://127.0.0.1:{served.port + 1}"}) == 403
        assert await _ws_status(served, {"Origin": served.origin}) == 403  # no cookie
        assert await _until_accepted(served, {"Cookie": cookie, "Origin": served.origin}, 60.0) == 101  # earlier tabs closing

    asyncio.run(check())


async def _until_accepted(served: Served, headers: dict[str, str], timeout: float = 60.0) -> int:
    """Retry while an earlier tab is still closing (its app process stopping); the last status."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    status = await _ws_status(served, headers)
    while status == 429 and loop.time() < deadline:
        await asyncio.sleep(0.1)
        status = await _ws_status(served, headers)
    return status


def test_tabs_beyond_the_cap_are_refused(served: Served) -> None:
    async def check() -> None:
        cookie = await _login(served)
        headers = {"Cookie": cookie, "Origin": served.origin}
        assert await _until_accepted(served, headers) == 101  # earlier tests' tabs have closed
        async with aiohttp.ClientSession() as session:
            first = None
            deadline = asyncio.get_running_loop().time() + 20
            while first is None:
                try:
                    first = await session.ws_connect(f"{served.base}/ws?width=80&height=24", headers=headers)
                except aiohttp.WSServerHandshakeError as exc:
                    assert exc.status == 429 and asyncio.get_running_loop().time() < deadline
                    await asyncio.sleep(0.1)
            assert await _ws_status(served, headers) == 429  # --max-tabs 1: the second tab waits
            await first.close()
        assert await _until_accepted(served, headers) == 101  # the first tab closed: the next gets in

    asyncio.run(check())


def test_the_token_is_printed_once_and_never_logged(tmp_path: Path) -> None:
    port = free_port()
    process = serve(str(tmp_path), "--port", str(port), cwd=tmp_path)
    try:
        one = Served(process, port)
        asyncio.run(_login(one))
        asyncio.run(_get(one.base + "/?token=wrong"))
    finally:
        stop(process)
    _, err = process.communicate(timeout=10)
    assert "".join(one.lines).count(one.token) == 1
    assert one.token not in err


def test_the_textual_serve_in_use_is_the_range_the_guard_was_checked_against() -> None:
    """The guard subclasses a private method: a new textual-serve range must be checked before it is allowed."""
    import re
    import tomllib
    from importlib.metadata import version

    from tunaflow_tui.subcommands.serve_server import CHECKED_TEXTUAL_SERVE

    pyproject = tomllib.loads((Path(__file__).resolve().parents[1] / "pyproject.toml").read_text(encoding="utf-8"))
    pins = [d for d in pyproject["project"]["dependencies"] if d.startswith("textual-serve")]
    assert pins == [f"textual-serve{CHECKED_TEXTUAL_SERVE}"]
    bounds = re.fullmatch(r">=([\d.]+),<([\d.]+)", CHECKED_TEXTUAL_SERVE)
    assert bounds is not None
    low, high = bounds.groups()

    def parts(text: str) -> tuple[int, ...]:
        return tuple(int(p) for p in re.findall(r"\d+", text)[:3])

    assert parts(low) <= parts(version("textual-serve")) < parts(high)

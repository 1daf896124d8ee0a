"""`tunaflow serve` serves the app's page on localhost, only to whoever holds the printed token."""

from __future__ import annotations

import asyncio
import re
import shlex
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

import pytest
from serve_process import Served, free_port, serve, stop

from tunaflow_tui.subcommands.serve_command import app_command, is_loopback


def fetch_page(served: Served) -> tuple[int, str, str]:
    """Open the printed address like a browser: status, page and the session cookie (``name=value``)."""
    cookies = urllib.request.HTTPCookieProcessor()
    opener = urllib.request.build_opener(cookies)
    with opener.open(served.url, timeout=10) as response:
        assert response.url.rstrip("/") == served.base, "the redirect dropped the token from the address"
        page = response.read().decode("utf-8")
        return response.status, page, "; ".join(f"{c.name}={c.value}" for c in cookies.cookiejar)


@pytest.mark.e2e
def test_serves_the_app_page_on_localhost(tmp_path: Path) -> None:
    project = tmp_path / "my-project"
    project.mkdir()
    port = free_port()
    process = serve(str(project), "--port", str(port), cwd=tmp_path)
    try:
        served = Served(process, port)
        status, page, cookie = fetch_page(served)
        assert status == 200
        assert "tunaflow · my-project" in page
        assert f"ws://127.0.0.1:{port}/ws" in page
        # Serving alone does not open the project; a browser tab does.
        assert not (project / ".tunaflow").exists()
        database = project / ".tunaflow" / "state.db"
        screen = asyncio.run(open_tab(served, cookie, until=database))
        assert b"Architect" in screen
        assert database.is_file(), "the tab opened the project (after its first frame)"
    finally:
        stop(process)
    assert process.returncode is not None


async def open_tab(served: Served, cookie: str, until: Path, timeout: float = 30.0) -> bytes:
    """Connect like a browser tab; what the app painted until the composer showed and ``until`` exists."""
    import aiohttp

    received = b""
    async with aiohttp.ClientSession() as session, session.ws_connect(
        f"{served.base}/ws?width=100&height=30", headers={"Cookie": cookie, "Origin": served.origin}
    ) as websocket:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline and not (b"Architect" in received and until.exists()):
            try:
                message = await websocket.receive(timeout=1.0)
            except TimeoutError:
                continue
            if message.type == aiohttp.WSMsgType.BINARY:
                received += message.data
            elif message.type in (aiohttp.WSMsgType.CLOSE, aiohttp.WSMsgType.CLOSED, aiohttp.WSMsgType.ERROR):
                break
    return received


def test_refuses_a_public_host_without_public(tmp_path: Path) -> None:
    process = serve(str(tmp_path), "--host", "0.0.0.0", "--port", str(free_port()), cwd=tmp_path)
    try:
        _, err = process.communicate(timeout=30)
    finally:
        stop(process)
    assert process.returncode == 2
    assert "refusing to listen on 0.0.0.0" in err and "--public" in err


def test_refuses_a_missing_project(tmp_path: Path) -> None:
    process = serve(str(tmp_path / "nope"), "--port", str(free_port()), cwd=tmp_path)
    try:
        _, err = process.communicate(timeout=30)
    finally:
        stop(process)
    assert process.returncode == 2 and "is not a directory" in err


def test_loopback_hosts() -> None:
    assert all(is_loopback(h) for h in ("127.0.0.1", "localhost", "::1", "[::1]", "127.1.2.3"))
    assert not any(is_loopback(h) for h in ("0.0.0.0", "192.168.1.10", "example.com", "::"))


def test_each_tab_runs_the_app_on_the_project_without_shell_interpretation(tmp_path: Path) -> None:
    odd = tmp_path / "a b; rm -rf ~ $(x)"
    argv = shlex.split(app_command(odd))
    assert argv == [sys.executable, "-m", "tunaflow_tui", "open", str(odd)]
    assert shlex.split(app_command(None)) == [sys.executable, "-m", "tunaflow_tui", "demo"]


def _fetch(port: int, path: str) -> str:
    # static files (textual-serve's script, styles and fonts) need no token: they hold nothing private
    with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=10) as response:
        assert response.status == 200, path
        return response.read().decode("utf-8", errors="replace")


_URL_RE = re.compile(r"""(?:https?|wss?)://[^\s"'<>()]+""", re.IGNORECASE)
_LINKED_RE = re.compile(r"""(?:src|href)\s*=\s*["']([^"']+)["']""", re.IGNORECASE)
_CSS_URL_RE = re.compile(r"""url\(\s*["']?([^"')]+)["']?\s*\)|@import\s+["']([^"']+)["']""")


def _outside(urls: list[str]) -> list[str]:
    """URLs that would leave this machine."""
    return [url for url in urls if urllib.parse.urlsplit(url).hostname not in ("127.0.0.1", "localhost", "::1")]


@pytest.mark.e2e
def test_the_page_has_a_title_loads_nothing_from_outside_and_gives_the_terminal_the_keys(tmp_path: Path) -> None:
    project = tmp_path / "my-project"
    project.mkdir()
    port = free_port()
    process = serve(str(project), "--port", str(port), cwd=tmp_path)
    try:
        status, page, _ = fetch_page(Served(process, port))
        assert status == 200
        assert "<title>tunaflow · my-project</title>" in page
        assert _outside(_URL_RE.findall(page)) == []
        linked = _LINKED_RE.findall(page)
        assert linked and all(link.startswith("/") for link in linked), "files load from this server, by path"
        for link in linked:
            text = _fetch(port, link)
            if link.endswith(".css"):
                without_comments = re.sub(r"/\*.*?\*/", "", text, flags=re.DOTALL)  # comments load nothing
                assert _outside(_URL_RE.findall(without_comments)) == [], link
                for found in _CSS_URL_RE.findall(without_comments):
                    assert not any(part.startswith(("http:", "https:", "//")) for part in found), link
            if link.endswith(".js"):
                assert _outside(_URL_RE.findall(text)) == [], link
        # the web font the terminal uses is served from here
        inline_css = "\n".join(re.findall(r"<style>(.*?)</style>", page, flags=re.DOTALL))
        fonts = [url for url, _ in _CSS_URL_RE.findall(inline_css) if url]
        assert any(url.endswith("RobotoMono-VariableFont_wght.ttf") for url in fonts)
        for url in fonts:
            assert url.startswith("/")
            with urllib.request.urlopen(f"http://127.0.0.1:{port}{url}", timeout=10) as response:
                assert response.status == 200 and len(response.read()) > 10_000
        # keys work before the first click: on load the page gives the keyboard to the terminal
        script = "\n".join(re.findall(r"<script>(.*?)</script>", page, flags=re.DOTALL))
        assert 'window.addEventListener("load"' in script
        assert re.search(r"querySelector\(\"#terminal \.xterm-helper-textarea\"\)[\s\S]*?input\.focus\(\)", script)
        # the websocket goes back to the page's own host and port (an SSH forward may use another port)
        assert "socket.host = window.location.host" in script
    finally:
        stop(process)

"""Who may use `tunaflow serve`: the person who started it, from this machine's browser, nobody else.

A page on any web site can open a websocket to ``127.0.0.1`` (browsers do not apply the same-origin
policy to websockets), and a DNS-rebinding page can even make its own host name resolve there. So every
request passes three checks, in an aiohttp middleware that covers every route textual-serve adds:

1. ``Host`` must name this server: a loopback literal, ``localhost``, the bound host or the host of
   ``--public-url``; anything else is a rebinding page (403).
2. A websocket's ``Origin`` must be exactly the page this server serves (``http://`` + the request's
   own, already checked, host; or ``--public-url``'s origin). A foreign or missing Origin is 403.
3. A secret made per run (``secrets.token_urlsafe(32)``) is printed once as a URL, like Jupyter's.
   ``/?token=…`` (compared with ``hmac.compare_digest``) is exchanged for an HttpOnly, SameSite=Strict
   cookie named with the port, then a redirect drops the token from the address bar and history.
   Everything but the static files (textual-serve's own script and fonts) requires that cookie.

Each tab is an app process, so the number of open websockets is capped. Every response forbids
framing (``frame-ancestors 'none'``) and sending the address elsewhere (``Referrer-Policy``).
"""

from __future__ import annotations

import hmac
import ipaddress
import secrets
import urllib.parse
from dataclasses import dataclass, field

from aiohttp import web
from aiohttp.typedefs import Handler, Middleware

DEFAULT_MAX_TABS = 8
STATIC_PREFIX = "/static/"

def _is_loopback_literal(host: str) -> bool:
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def _hostname(host_header: str) -> str:
    """The host of a ``Host`` header without its port (``[::1]:8000`` → ``::1``), lower case."""
    parsed = urllib.parse.urlsplit(f"//{host_header}")
    try:
        return (parsed.hostname or "").rstrip(".")
    except ValueError:
        return ""


@dataclass
class ServeAccess:
    """The per-run secret, the names this server answers to, and the open tabs."""

    port: int
    bind_host: str
    public_url: str | None = None
    max_tabs: int = DEFAULT_MAX_TABS
    token: str = field(default_factory=lambda: secrets.token_urlsafe(32))
    session: str = field(default_factory=lambda: secrets.token_urlsafe(32))
    open_tabs: int = 0

    @property
    def cookie_name(self) -> str:
        """Cookies ignore ports, so the name carries it: two servers on one machine keep their own."""
        return f"tunaflow-serve-{self.port}"

    def login_url(self) -> str:
        """The address to open, printed once: the served address with the token."""
        base = self.public_url or f"http://{_url_host(self.bind_host)}:{self.port}"
        return f"{base.rstrip('/')}/?token={self.token}"

    def host_allowed(self, host_header: str) -> bool:
        """True when ``Host`` names this server (no DNS rebinding)."""
        host = _hostname(host_header)
        if not host:
            return False
        if host == "localhost" or _is_loopback_literal(host):
            return True
        names = {self.bind_host.strip("[]").lower()}
        if self.public_url:
            names.add((urllib.parse.urlsplit(self.public_url).hostname or "").lower())
        return host in names

    def origin_allowed(self, origin: str | None, host_header: str) -> bool:
        """True when a websocket comes from the page this server served, exactly."""
        if not origin:
            return False
        served = {f"http://{host_header}", f"https://{host_header}"}
        if self.public_url:
            parts = urllib.parse.urlsplit(self.public_url)
            served.add(f"{parts.scheme}://{parts.netloc}")
        return origin in served

    def token_matches(self, candidate: str) -> bool:
        """Constant-time comparison with the run's token."""
        return hmac.compare_digest(candidate.encode("utf-8", "replace"), self.token.encode("utf-8"))

    def has_session(self, request: web.Request) -> bool:
        """True when the request carries the cookie the token was exchanged for."""
        cookie = request.cookies.get(self.cookie_name, "")
        return hmac.compare_digest(cookie.encode("utf-8", "replace"), self.session.encode("utf-8"))


def _url_host(host: str) -> str:
    return f"[{host}]" if ":" in host and not host.startswith("[") else host


def _forbidden(reason: str) -> web.Response:
    return web.Response(status=403, text=f"tunaflow serve: {reason}\n")


def make_guard(access: ServeAccess) -> Middleware:
    """The middleware that applies the checks of this module to every request."""

    @web.middleware
    async def guard(request: web.Request, handler: Handler) -> web.StreamResponse:
        host_header = request.headers.get("Host", "")
        if not access.host_allowed(host_header):
            return _forbidden("this server answers only to its own address (Host refused)")
        if request.path.startswith(STATIC_PREFIX):
            return await handler(request)
        if request.path == "/" and "token" in request.query:
            return _exchange_token(request, access)
        if not access.has_session(request):
            return _forbidden("open the address with ?token=… that `tunaflow serve` printed")
        if request.path == "/ws":
            if not access.origin_allowed(request.headers.get("Origin"), host_header):
                return _forbidden("websocket from another site refused (Origin)")
            if access.open_tabs >= access.max_tabs:
                return web.Response(status=429, text=f"tunaflow serve: at most {access.max_tabs} tabs at once\n")
            access.open_tabs += 1
            try:
                return await handler(request)
            finally:
                access.open_tabs -= 1
        return await handler(request)

    return guard


def _exchange_token(request: web.Request, access: ServeAccess) -> web.StreamResponse:
    if not access.token_matches(request.query.get("token", "")):
        return _forbidden("wrong token")
    kept = [(key, value) for key, value in request.query.items() if key != "token"]
    location = "/" + (f"?{urllib.parse.urlencode(kept)}" if kept else "")
    response = web.Response(status=303, headers={"Location": location})
    response.set_cookie(access.cookie_name, access.session, httponly=True, samesite="Strict", path="/")
    response.headers["Cache-Control"] = "no-store"
    return response


async def add_security_headers(request: web.Request, response: web.StreamResponse) -> None:
    """No framing by other pages (clickjacking) and no address sent on as a referrer."""
    response.headers["Content-Security-Policy"] = "frame-ancestors 'none'"
    response.headers["X-Frame-Options"] = "DENY"
    response.headers["Referrer-Policy"] = "no-referrer"
    response.headers["X-Content-Type-Options"] = "nosniff"

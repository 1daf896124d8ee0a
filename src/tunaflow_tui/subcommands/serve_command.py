"""`tunaflow serve [PATH] [--host H] [--port P] [--demo] [--public]`: the app in a browser, via textual-serve.

Every browser tab gets its own app process (``python -m tunaflow_tui open PATH``, or ``demo``); they
share the project database, which is safe because it runs in WAL mode with a busy timeout.
Only the person who started it gets in: the Host, Origin and per-run token checks live in
``serve_guard``, the textual-serve subclass that installs them in ``serve_server``. Only loopback
addresses are served unless ``--public`` says otherwise.

The page is tunaflow's own (``data/serve/app_index.html``): it has a title, loads nothing from
outside this server (textual-serve's page fetched a web font from the internet), addresses its files
and websocket relative to wherever the browser reached it (an SSH port forward may use another port),
and gives the terminal the keyboard on load, so keys work before the first click.
"""

from __future__ import annotations

import argparse
import ipaddress
import shlex
import sys
from pathlib import Path

from tunaflow_tui.subcommands.arguments import is_directory

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8000
DEFAULT_MAX_TABS = 8  # the same as serve_guard's; not imported from there so --help needs no aiohttp


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Arguments of `tunaflow serve`."""
    parser.add_argument("path", nargs="?", default=".", metavar="PATH", help="the project (default: .)")
    parser.add_argument("--host", default=DEFAULT_HOST, help=f"address to listen on (default: {DEFAULT_HOST})")
    parser.add_argument("--port", type=int, default=DEFAULT_PORT, help=f"port (default: {DEFAULT_PORT})")
    parser.add_argument("--demo", action="store_true",
                        help="serve the demo (a throwaway sample project per tab) instead of PATH")
    parser.add_argument("--public", action="store_true",
                        help="allow a non-loopback --host; anyone who can reach it controls your agents")
    parser.add_argument("--public-url", default=None, metavar="URL",
                        help="the address browsers use to reach the server, e.g. behind a proxy")
    parser.add_argument("--max-tabs", type=int, default=DEFAULT_MAX_TABS, metavar="N",
                        help=f"browser tabs open at once, each an app process (default: {DEFAULT_MAX_TABS})")


def is_loopback(host: str) -> bool:
    """True for ``localhost`` and loopback addresses (127.0.0.0/8, ::1)."""
    if host.lower() in ("localhost", "localhost."):
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def app_command(project: Path | None) -> str:
    """The shell command textual-serve runs for each browser tab (built from an argv, never from text)."""
    argv = [sys.executable, "-m", "tunaflow_tui"]
    argv += ["demo"] if project is None else ["open", str(project)]
    return shlex.join(argv)


def page_templates() -> Path:
    """The folder with tunaflow's page template for textual-serve."""
    from importlib import resources

    return Path(str(resources.files("tunaflow_tui") / "data" / "serve"))


def _fail(message: str, code: int = 2) -> int:
    print(f"tunaflow serve: {message}", file=sys.stderr)
    return code


def run(args: argparse.Namespace) -> int:
    """Serve until interrupted; exit 2 for a refused host, a bad port or a missing project."""
    if not is_loopback(args.host) and not args.public:
        return _fail(
            f"refusing to listen on {args.host}: anyone who can reach that address and learns the "
            "token could drive your agents. Use --host 127.0.0.1 (the default), or add "
            "--public if you really mean it."
        )
    if not 0 < args.port < 65536:
        return _fail(f"--port must be between 1 and 65535; got {args.port}")
    if args.max_tabs < 1:
        return _fail(f"--max-tabs must be at least 1; got {args.max_tabs}")
    project: Path | None = None
    if not args.demo:
        project = Path(args.path).expanduser().resolve()
        if not is_directory(str(project)):
            return _fail(f"{args.path} is not a directory")
    if not is_loopback(args.host):
        print(f"tunaflow serve: WARNING: serving on {args.host}; traffic is not encrypted.", file=sys.stderr)

    from tunaflow_tui.subcommands.serve_guard import ServeAccess
    from tunaflow_tui.subcommands.serve_server import GuardedServer

    title = "tunaflow demo" if project is None else f"tunaflow · {project.name}"
    access = ServeAccess(port=args.port, bind_host=args.host, public_url=args.public_url, max_tabs=args.max_tabs)
    server = GuardedServer(app_command(project), access, title=title, templates_path=page_templates())
    try:
        server.serve()
    except OSError as exc:
        return _fail(f"could not listen on {args.host}:{args.port}: {exc.strerror or exc}", 1)
    return 0

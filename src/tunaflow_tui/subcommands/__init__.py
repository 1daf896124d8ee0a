"""One module per `tunaflow` subcommand; each exposes ``add_arguments(parser)`` and ``run(args) -> int``."""

from __future__ import annotations

SUBCOMMANDS: dict[str, str] = {
    "open": "open the app on a project (the default: `tunaflow [PATH]`)",
    "demo": "open a throwaway copy of the sample project with the built-in demo engine",
    "run": "run the Plan → Dev → Review cycle headless; gate decisions come only from flags",
    "status": "print the project's plans and branches",
    "doctor": "check engines, credentials, SQLite/FTS5, embedding model and terminal",
    "parse": "print the markers found in an agent reply as JSON",
    "export": "export a conversation or plan as Markdown",
    "ask": "one turn with the Architect in main, a branch, or a new branch forked at a message",
    "branch": "list, show, rename, adopt, archive, restore or delete conversation branches",
    "roundtable": "let several agents discuss one topic in rounds, in a new roundtable branch",
    "search": "search every message of the project by words and by meaning",
    "serve": "serve the app to a browser on localhost",
    "trust": "let the commands a project's own configuration names run (or never)",
}
"""Each subcommand's name and its one-line help (``tunaflow --help`` lists them in this order)."""

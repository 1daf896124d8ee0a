"""`tunaflow search [PATH] QUERY [--limit K] [--mode hybrid|fts|vector] [--json]`: search the project's messages.

Every finished message of the project (main conversation, branches, review and implementation
runs) is searched by full text (FTS5 bm25 over the words of the query) and by meaning (the stored
chunk vectors), fused by rank. The query is plain text: quotes, ``*``, ``AND``, ``NEAR`` and the
like are searched for as words. Messages not embedded yet (written by other commands, or while
the app was closed) are embedded first by the project's embedding worker, with a progress line on
stderr when that takes over a second. Without the embedding model, or with ``[memory] embeddings
= false``, hybrid search is full-text search and says so on stderr; ``--mode vector`` is then an error.

PATH is taken as the project when more than one word is given and the first is a directory;
otherwise every word is the query and the project is the current directory. Words starting with
``-`` follow ``--`` (``tunaflow search -- --no-verify``). A PATH alone (no QUERY), a first word that is a
path but no directory, an empty query: one line on stderr, exit 2. Read-only: a project tunaflow never
opened has nothing to search (exit 1) and gets no ``.tunaflow/``.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

MODES = ("hybrid", "fts", "vector")
MAX_LIMIT = 200
#: Hits read beyond --limit, so alike hits can fold into one and the list still shows --limit different ones.
ALIKE_ROOM = 50
#: The query's words may come before, between and after the options (and any word after --).
WORDS_ANYWHERE = True
#: The embedding of pending messages is reported once it has taken this long …
PROGRESS_AFTER_S = 1.0
#: … and then this often.
PROGRESS_EVERY_S = 2.0
#: Said after an unrecognised option (usage errors are one line, exit 2): a query word may start with -.
USAGE_HINT = "to search for words that start with -, put -- before the query: tunaflow search -- -word"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Arguments of `tunaflow search`."""
    # "*": no words is the empty query, answered by run() in one line like any other bad input.
    parser.add_argument("words", nargs="*", metavar="[PATH] QUERY",
                        help="the project directory (optional, default: .) and the words to search for")
    parser.add_argument("--limit", "-k", type=int, default=10, metavar="K", help="hits to show (default 10)")
    parser.add_argument("--mode", choices=MODES, default="hybrid",
                        help="hybrid (default): full text and meaning; fts: full text; vector: meaning")
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of text")


def _fail(message: str) -> int:
    print(f"tunaflow search: {message}", file=sys.stderr)
    return 1


def _looks_like_a_path(word: str) -> bool:
    return word.startswith(("/", "./", "../", "~")) and " " not in word


def _split(words: list[str]) -> tuple[Path, str] | str:
    """The project and the query, or the usage mistake in one line."""
    from tunaflow_tui.subcommands.arguments import is_directory

    first = words[0] if words else ""
    if first and is_directory(first):
        if len(words) == 1:
            return f"{first} is the project; give the QUERY after it: tunaflow search {first} WORDS"
        return Path(first).expanduser().resolve(), " ".join(words[1:])
    if _looks_like_a_path(first):
        return f"{first} is not a directory (give the project's PATH, then the QUERY)"
    query = " ".join(words)
    if not query.strip():
        return "the query is empty; give the words to search for"
    return Path.cwd(), query


def _write(text: str) -> None:
    buffer = getattr(sys.stdout, "buffer", None)
    if buffer is not None:  # UTF-8 whatever the locale says, so Korean text never fails to print
        sys.stdout.flush()
        buffer.write(text.encode("utf-8"))
        buffer.flush()
    else:
        sys.stdout.write(text)


class _EmbeddingProgress:
    """Says on stderr how far the embedding of pending messages is, once it takes over a second."""

    def __init__(self) -> None:
        self._started = time.monotonic()
        self._last = 0.0
        self._said_starting = False

    def __call__(self, embedded: int, total: int) -> None:
        now = time.monotonic()
        if now - self._started < PROGRESS_AFTER_S or now - self._last < PROGRESS_EVERY_S:
            return
        if total == 0:  # not counted yet: the worker is still starting ("0 of 0 done" said nothing)
            if self._said_starting:
                return
            self._said_starting = True
            self._last = now
            print("tunaflow search: starting the embedding worker before searching…", file=sys.stderr, flush=True)
            return
        self._last = now
        print(f"tunaflow search: embedding messages before searching: {embedded:,} of {total:,} done",
              file=sys.stderr, flush=True)


def run(args: argparse.Namespace) -> int:
    """Print the hits, best first; exit 2 for a usage error, 1 when there is nothing to search."""
    from tunaflow_tui.core.memory.model_files import MODEL_ID
    from tunaflow_tui.core.memory.project_search import SearchUnavailable
    from tunaflow_tui.core.settings import SettingsError, load_settings
    from tunaflow_tui.core.snippet_text import group_alike, more_like_it, plain_snippet
    from tunaflow_tui.core.storage import StorageError, Store
    from tunaflow_tui.core.storage.store import database_path
    from tunaflow_tui.core.terminal_text import neutralize
    from tunaflow_tui.runtime.memory import ProjectMemory
    from tunaflow_tui.subcommands.arguments import usage_error

    split = _split(list(args.words))
    if isinstance(split, str):
        return usage_error("search", split)
    project, query = split
    if not 1 <= args.limit <= MAX_LIMIT:
        return usage_error("search", f"--limit must be between 1 and {MAX_LIMIT}")
    if not database_path(project).is_file():
        here = " (the current directory)" if project == Path.cwd() else ""
        return _fail(f"{project}{here} has no tunaflow data yet (no .tunaflow/state.db); open it with tunaflow "
                     "first, or give the project's PATH before the QUERY")
    try:
        settings = load_settings(project)
    except SettingsError as exc:
        return _fail(str(exc))
    try:
        with Store.open(project) as store:
            from tunaflow_tui.subcommands.read_only import say_read_only

            say_read_only("search", store.read_only)
            memory = ProjectMemory(store, settings, lambda _event: None,
                                   use_default_embedder=args.mode != "fts")
            try:
                if args.mode != "fts" and store.read_only is None:
                    # Messages written from the shell or while the app was closed: embedded first, by
                    # the embedding worker, so that meaning finds them too.
                    memory.embed_pending(_EmbeddingProgress())
                # more than asked: hits that say the same thing fold into one, and the list stays --limit long
                wanted = min(args.limit + ALIKE_ROOM, MAX_LIMIT)
                result = memory.search(query, limit=wanted, mode=args.mode)
            finally:
                memory.close()
            counts = store.embedding_counts(MODEL_ID)
    except SearchUnavailable as exc:
        return _fail(str(exc))
    except StorageError as exc:
        return _fail(str(exc))
    notes = [result.note] if result.note else []
    if result.mode != "fts" and counts.remaining:
        notes.append(f"{counts.remaining:,} of {counts.total:,} messages are not embedded yet "
                     "(found by full text only until tunaflow has embedded them)")
    groups = group_alike(result.hits, lambda hit: hit.message.content)[:args.limit]
    if args.json:
        payload = {
            "query": neutralize(query[:2000]),
            "mode": result.mode,
            "notes": notes,
            "hits": [{
                "conversation_id": hit.conversation_id,
                "branch_id": hit.branch_id,
                "message_id": hit.message.id,
                "role": hit.message.role,
                "persona": hit.message.persona,
                "created_at": hit.created_at.isoformat(),
                "score": round(hit.score, 6),
                "found_by": list(hit.sources),
                "chunk": [hit.chunk_start, hit.chunk_end],
                "snippet": plain_snippet(hit.snippet, marks=True),
                "more_like_it": [{"conversation_id": other.conversation_id, "message_id": other.message.id}
                                 for other in alike],
            } for hit, alike in groups],
        }
        _write(json.dumps(payload, ensure_ascii=False) + "\n")
        return 0
    for note in notes:
        print(f"tunaflow search: {note}", file=sys.stderr)
    if not groups:
        _write("No messages match.\n")
        return 0
    lines = []
    for rank, (hit, alike) in enumerate(groups, start=1):
        who = hit.message.persona or hit.message.role
        lines.append(f"{rank:>2}. {hit.conversation_id} #{hit.message.id} {who} "
                     f"{hit.created_at:%Y-%m-%d %H:%M}  score {hit.score:.4f}")
        lines.append("    " + plain_snippet(hit.snippet, marks=True))
        if alike:
            ids = " ".join(f"{other.conversation_id} #{other.message.id}" for other in alike[:5])
            lines.append(f"    {more_like_it(len(alike))}: {ids}{' …' if len(alike) > 5 else ''}")
    _write("\n".join(lines) + "\n")
    return 0

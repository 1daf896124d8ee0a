"""`tunaflow branch [PATH] list|show ID|rename ID LABEL|adopt ID|archive ID|restore ID|delete ID`.

Every action takes the ids `tunaflow status --json` and `tunaflow ask --json` print (``3`` or
``branch:3``). An unknown action, a missing ID, a PATH that is not a directory: one line on stderr,
exit 2. No such branch, adopting an adopted branch, deleting main: one line on stderr, exit 1,
nothing changed. Deleting an active branch removes its messages, so it needs ``--yes`` when it has any.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tunaflow_tui.subcommands.arguments import is_directory

if TYPE_CHECKING:
    from tunaflow_tui.runtime.runtime import WorkflowRuntime

USAGE = ("tunaflow branch [PATH] list|show ID|rename ID LABEL|adopt ID [--summary-file F]|archive ID|restore ID|"
         "delete ID [--yes] [--json]")
ACTIONS: dict[str, int] = {  # action -> how many words follow it
    "list": 0, "show": 1, "rename": 2, "adopt": 1, "archive": 1, "restore": 1, "delete": 1,
}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Arguments of `tunaflow branch`."""
    parser.usage = USAGE
    parser.add_argument("words", nargs="+", metavar="ACTION",
                        help=f"[PATH] then one of: {', '.join(ACTIONS)}, with the branch ID (and LABEL for rename)")
    parser.add_argument("--summary-file", metavar="F",
                        help="adopt with this summary (- reads stdin) instead of the summarizer's")
    parser.add_argument("--yes", action="store_true",
                        help="delete an active branch together with its messages")
    parser.add_argument("--json", action="store_true", help="print the branch(es) as JSON")


def _fail(text: str) -> int:
    from tunaflow_tui.core.terminal_text import neutralize

    print(f"tunaflow branch: {neutralize(text)}", file=sys.stderr, flush=True)
    return 1


def _parse_words(words: list[str]) -> tuple[Path, str, list[str]] | str:
    from tunaflow_tui.subcommands.arguments import did_you_mean, is_directory

    path = "."
    if words[0] not in ACTIONS and len(words) > 1 and (words[1] in ACTIONS or is_directory(words[0])):
        path, words = words[0], words[1:]
    action, rest = words[0], words[1:]
    if action not in ACTIONS:
        if len(words) == 1 and is_directory(action):
            return f"{action} is the project; give the ACTION after it: one of {', '.join(ACTIONS)}"
        return f"unknown action {action!r}{did_you_mean(action, ACTIONS)} (use one of {', '.join(ACTIONS)})"
    if len(rest) != ACTIONS[action]:
        need = {0: "no argument", 1: "the branch ID", 2: "the branch ID and the LABEL (quoted)"}[ACTIONS[action]]
        return f"{action} takes {need}"
    return Path(path).expanduser(), action, rest


def _print_json(value: Any) -> None:
    print(json.dumps(value, ensure_ascii=False, indent=2))


def _show(rt: WorkflowRuntime, ref: str, as_json: bool) -> int:
    from tunaflow_tui.core.terminal_text import neutralize
    from tunaflow_tui.runtime.branching import branch_of
    from tunaflow_tui.subcommands.branch_json import branch_json, link_json

    branch = branch_of(rt, ref)
    item = branch_json(branch, rt.store)
    item["children"] = [child.id for child in rt.store.child_branches(branch.id)]
    item["session_links"] = [link_json(link) for link in rt.store.list_session_links(branch.shadow_conversation_id)]
    messages = rt.store.list_messages(branch.shadow_conversation_id, limit=5)
    if as_json:
        _print_json(item)
        return 0
    lines = [f"Branch {item['id']} “{item['label']}” — {item['kind']}, {item['status']}",
             f"  forked from {item['parent_conversation_id']} at message {item['checkpoint_message_id']}",
             f"  git branch: {item['git_branch'] or '-'} · engine: {item['engine'] or '-'} · session: "
             f"{item['session_id'] or '-'} · context: {item['context_source'] or '-'}",
             f"  messages: {item['messages']} · branches of its own: "
             f"{', '.join(str(c) for c in item['children']) or 'none'}"]
    for link in item["session_links"]:
        lines.append(f"  {link['kind']}: {link['from_conversation_id']} ← {link['to_conversation_id']}: "
                     f"{' '.join(str(link['note']).split())[:200]}")
    if messages:
        lines.append("  last messages:")
    for message in messages:
        who = message.persona or message.role
        text = " ".join(neutralize(message.display_text).split())
        lines.append(f"    #{message.id} {who}: {text[:100] + '…' if len(text) > 100 else text}")
    print("\n".join(lines))
    return 0


def _list(rt: WorkflowRuntime, as_json: bool) -> int:
    from tunaflow_tui.subcommands.branch_json import branch_line, branch_tree_json

    tree = branch_tree_json(rt.store)
    if as_json:
        _print_json(tree)
    else:
        print("\n".join(branch_line(item) for item in tree) if tree else "No branches.")
    return 0


def _read_summary(name: str) -> str:
    if name == "-":
        return sys.stdin.read()
    return Path(name).expanduser().read_text(encoding="utf-8")


async def _adopt(rt: WorkflowRuntime, ref: str, summary: str | None) -> Any:
    from tunaflow_tui.runtime.signals import run_until_signalled, stop_reason

    def stopping(sig: Any) -> None:
        rt.runner.stop_reason = stop_reason(sig)

    outcome = await run_until_signalled(rt.with_memory(rt.adopt_branch(ref, summary=summary)), on_stop=stopping)
    if outcome.stopped_by is not None:
        return stop_reason(outcome.stopped_by)
    return outcome.result


def _act(rt: WorkflowRuntime, action: str, rest: list[str], args: argparse.Namespace) -> int:
    from tunaflow_tui.core.terminal_text import neutralize
    from tunaflow_tui.runtime.branching import branch_of
    from tunaflow_tui.subcommands.branch_json import branch_json

    if action in ("list", "show"):
        from tunaflow_tui.subcommands.read_only import say_read_only

        say_read_only("branch", rt.store.read_only)
    if action == "list":
        return _list(rt, args.json)
    if action == "show":
        return _show(rt, rest[0], args.json)
    ref = rest[0]
    if action == "adopt":
        summary = None
        if args.summary_file is not None:
            try:
                summary = _read_summary(args.summary_file)
            except (OSError, UnicodeDecodeError) as exc:
                return _fail(f"cannot read the summary: {exc}")
        adoption = asyncio.run(_adopt(rt, ref, summary))
        if isinstance(adoption, str):
            return _fail(f"{adoption}; nothing was adopted")
        record = adoption.record
        if args.json:
            _print_json({"branch": branch_json(adoption.branch, rt.store), "record_message_id": record.id,
                         "archived": list(adoption.archived), "adopt": branch_json_meta(record.meta)})
        else:
            print(f"Adopted branch {adoption.branch.id} “{neutralize(adoption.branch.label)}” into "
                  f"{record.conversation_id} (message {record.id}).")
            print(neutralize(str(record.meta.get("summary", ""))))
        return 0
    if action == "delete":
        branch = branch_of(rt, ref) if ref != "main" else None
        count = rt.store.count_messages(branch.shadow_conversation_id) if branch is not None else 0
        if branch is not None and branch.status == "active" and count and not args.yes:
            return _fail(f"branch {branch.id} is active: deleting it removes its {count} messages; "
                         "run again with --yes (or archive it to keep them)")
        deleted = rt.delete_branch(ref)
        kept = "its messages are kept" if deleted.status != "active" else "its messages were removed"
        print(f"Deleted branch {deleted.id} “{neutralize(deleted.label)}”; {kept}.")
        return 0
    changed = {
        "rename": lambda: rt.rename_branch(ref, rest[1]),
        "archive": lambda: rt.archive_branch(ref),
        "restore": lambda: rt.restore_branch(ref),
    }[action]()
    if args.json:
        _print_json(branch_json(changed, rt.store))
    else:
        print(f"Branch {changed.id} “{neutralize(changed.label)}” is {changed.status}.")
    return 0


def branch_json_meta(meta: Any) -> Any:
    """An adopt record's structured data, inert."""
    from tunaflow_tui.subcommands.branch_json import inert

    return inert(dict(meta))


def run(args: argparse.Namespace) -> int:
    """Run one branch action; exit 0 done, 1 refused (nothing changed), 2 a usage error."""
    from tunaflow_tui.core.settings import SettingsError, load_settings
    from tunaflow_tui.core.storage import StorageError
    from tunaflow_tui.core.storage.store import database_path
    from tunaflow_tui.runtime.branching import BranchError
    from tunaflow_tui.runtime.leftovers import AgentStillRunning
    from tunaflow_tui.runtime.runtime import WorkflowRuntime
    from tunaflow_tui.subcommands.arguments import refuse_huge_ids, usage_error

    parsed = _parse_words(args.words)
    if isinstance(parsed, str):
        return usage_error("branch", parsed)
    path, action, rest = parsed
    refused = refuse_huge_ids("branch", [("branch", rest[0] if rest else None)])
    if refused is not None:
        return refused
    project = path.resolve()
    if not is_directory(str(project)):
        return usage_error("branch", f"{project} is not a directory")
    if not database_path(project).is_file():
        if action == "list":
            return _list_empty(args.json)
        return _fail(f"{project} has no tunaflow conversations yet, so no branch {rest[0]}")
    try:
        settings = load_settings(project)
    except SettingsError as exc:
        return _fail(str(exc))
    try:
        rt = WorkflowRuntime(project, settings)
    except StorageError as exc:
        return _fail(str(exc))
    try:
        return _act(rt, action, rest, args)
    except (BranchError, AgentStillRunning) as exc:
        return _fail(str(exc))
    finally:
        rt.close()


def _list_empty(as_json: bool) -> int:
    print("[]" if as_json else "No branches.")
    return 0

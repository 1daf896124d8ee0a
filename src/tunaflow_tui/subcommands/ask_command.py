"""`tunaflow ask [PATH] TEXT [--to ID] [--fork MESSAGE_ID] [--plan N] [--engine NAME] [--json]`: one Architect turn.

For scripts and TTY-less SSH sessions: the message goes to main (default), to a branch (``--to``), or
to a new branch forked at a message (``--fork``); in main, ``--plan N`` (or a TEXT that starts with
``#N``) points it at plan N, whose new version a proposal in the answer then is. The answer streams to stdout as inert text and is
stored exactly as the app stores it (a plan proposal in main opens the approval gate). ``--json``
prints the ids (the same ones ``tunaflow branch`` and ``status`` use) and the answer at the end.

Without ``--json`` a new branch (``--fork``) is named on stderr (``tunaflow ask: asking in branch 4 …``),
so stdout stays the answer alone.

Exit codes (the README's table): 0 answered; 2 a usage error (one line on stderr, nothing created: a
missing TEXT, a PATH that is not a directory); 1 no such message, branch or plan, or a failed turn.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tunaflow_tui.subcommands.trust_command import add_trust_flag

if TYPE_CHECKING:
    from tunaflow_tui.runtime.events import RuntimeEvent

#: The PATH and TEXT may come before or after the options (and any word after --).
WORDS_ANYWHERE = True
USAGE = ("tunaflow ask [PATH] TEXT [--to CONVERSATION_OR_BRANCH] [--fork MESSAGE_ID] [--plan N] [--engine NAME] "
         "[--json]")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Arguments of `tunaflow ask`."""
    parser.usage = USAGE
    parser.add_argument("words", nargs="+", metavar="TEXT",
                        help="what to ask, after the project's PATH if it is not the current directory")
    parser.add_argument("--to", metavar="CONVERSATION_OR_BRANCH",
                        help="main (default), a branch id (3) or branch:3")
    parser.add_argument("--fork", metavar="MESSAGE_ID", type=int,
                        help="fork a new branch at this message (of --to's conversation, if given) and ask there")
    parser.add_argument("--plan", metavar="N", type=int,
                        help="the message is about plan N (in main): the Architect's pack centres on it, and a "
                             "proposal in the answer revises it")
    parser.add_argument("--engine", metavar="NAME",
                        help="a configured engine for this turn (for --fork: the new branch's engine)")
    parser.add_argument("--json", action="store_true",
                        help="print the ids (conversation, branch, messages) and the answer as JSON at the end")
    add_trust_flag(parser)


def _fail(text: str) -> int:
    from tunaflow_tui.core.terminal_text import neutralize

    print(f"tunaflow ask: {neutralize(text)}", file=sys.stderr, flush=True)
    return 1


class _AnswerPrinter:
    """Streams the Architect's reply in one conversation to stdout, neutralised."""

    def __init__(self, conversation_id: str, *, quiet: bool) -> None:
        from tunaflow_tui.core.terminal_text import StreamNeutralizer

        self.conversation_id = conversation_id
        self.quiet = quiet
        self.message_id: int | None = None
        self.notices: list[str] = []
        self._inert = StreamNeutralizer()
        self._printed = ""

    def __call__(self, event: RuntimeEvent) -> None:
        from tunaflow_tui.runtime.events import MessageDelta, MessageStarted, NoticeRaised

        if isinstance(event, MessageStarted) and event.conversation_id == self.conversation_id:
            self.message_id = event.message_id
        elif isinstance(event, MessageDelta) and event.message_id == self.message_id and not self.quiet:
            self._write(self._inert.feed(event.text))
        elif isinstance(event, NoticeRaised) and event.level == "warning":
            self.notices.append(event.text)

    def _write(self, text: str) -> None:
        if text:
            self._printed = text
            sys.stdout.write(text)
            sys.stdout.flush()

    def finish(self) -> None:
        """Release what the neutraliser held back and end the line."""
        if self.quiet:
            return
        self._write(self._inert.flush())
        if self._printed and not self._printed.endswith("\n"):
            sys.stdout.write("\n")
        sys.stdout.flush()


def _split_words(words: list[str]) -> tuple[Path, str] | str:
    from tunaflow_tui.subcommands.arguments import is_directory

    if len(words) > 2:
        return "give the project's PATH and the TEXT as two arguments (quote the text)"
    if len(words) == 1 and is_directory(words[0]):  # it would send the path as the message
        return f"{words[0]} is the project; give the TEXT to ask after it: tunaflow ask {words[0]} \"…\""
    if len(words) == 1 and words[0].startswith(("/", "./", "../", "~")) and " " not in words[0]:
        return f"{words[0]} is not a directory, and a path alone is no question: tunaflow ask [PATH] TEXT"
    path, text = (words[0], words[1]) if len(words) == 2 else (".", words[0])
    if not is_directory(path):
        return f"{path} is not a directory (give the project's PATH, then the TEXT)"
    if not text.strip():
        return "the text is empty"
    return Path(path).expanduser(), text


async def _ask(args: argparse.Namespace, project: Path, text: str) -> int:
    from tunaflow_tui.core.markers import scrub_markers
    from tunaflow_tui.core.settings import SettingsError, load_settings
    from tunaflow_tui.core.storage.leases import TurnInProgress
    from tunaflow_tui.core.terminal_text import neutralize
    from tunaflow_tui.runtime.branching import BranchError, conversation_of
    from tunaflow_tui.runtime.leftovers import AgentStillRunning
    from tunaflow_tui.runtime.runtime import RuntimeError_, WorkflowRuntime
    from tunaflow_tui.runtime.signals import run_until_signalled, stop_reason
    from tunaflow_tui.subcommands.trust_command import untrusted_refusal

    try:
        settings = load_settings(project, trust=args.trust)
    except SettingsError as exc:
        return _fail(str(exc))
    refusal = untrusted_refusal(project, settings)
    if refusal is not None:  # before anything is stored: a refused question leaves no trace
        return _fail(refusal)
    printer = _AnswerPrinter("", quiet=args.json)
    rt = WorkflowRuntime(project, settings, observer=printer)
    try:
        branch = None
        if args.fork is not None:
            message = rt.store.get_message(args.fork)
            if message is None:
                return _fail(f"there is no message {args.fork}")
            origin = conversation_of(rt, args.to) if args.to is not None else message.conversation_id
            branch = rt.fork(origin, message.id, engine=args.engine)
            conversation = branch.shadow_conversation_id
            if not args.json:  # the new branch's id, for `--to` next time; stdout stays the answer
                print(f"tunaflow ask: asking in branch {branch.id}, forked at message {message.id}; "
                      f"continue it with --to {branch.id}", file=sys.stderr, flush=True)
        else:
            conversation = conversation_of(rt, args.to) if args.to is not None else "main"
        printer.conversation_id = conversation
        engine = None if branch is not None else args.engine
        plans_before = {p.id: p.updated_at for p in rt.store.list_plans()}

        def stopping(sig: Any) -> None:
            rt.runner.stop_reason = stop_reason(sig)

        turn = rt.send_user_message(text, conversation, engine=engine, plan_id=args.plan)
        outcome = await run_until_signalled(rt.with_memory(turn), on_stop=stopping)
        printer.finish()
        if outcome.stopped_by is not None:
            return _fail(f"{stop_reason(outcome.stopped_by)}; what the Architect wrote so far is kept")
        result = outcome.result
        if result is None:
            return _fail("nothing to send")
        if branch is None and conversation != "main":
            branch = rt.store.get_branch(int(conversation.split(":", 1)[1]))
        elif branch is not None:
            branch = rt.store.get_branch(branch.id)
        touched = [p for p in rt.store.list_plans() if plans_before.get(p.id) != p.updated_at]
        for notice in printer.notices:
            print(f"tunaflow ask: {neutralize(notice)}", file=sys.stderr)
        if args.json:
            document = {
                "conversation_id": conversation,
                "branch_id": branch.id if branch is not None else None,
                "context_source": branch.context_source if branch is not None else None,
                "user_message_id": None,
                "message_id": result.message.id,
                "status": result.message.status,
                "answer": neutralize(scrub_markers(result.message.content)).strip(),
                "plan_id": touched[-1].id if touched else None,
            }
            user = rt.store.list_messages(conversation, before_id=result.message.id, limit=1)
            document["user_message_id"] = user[-1].id if user else None
            print(json.dumps(document, ensure_ascii=False, indent=2))
        elif touched and touched[-1].pending_decision == "approval":
            print(f"Plan {touched[-1].id} “{neutralize(touched[-1].title)}” waits for your approval: "
                  "open the app, or run `tunaflow run --resume --approve`.")
        if not result.ok:
            return _fail(f"the Architect's turn failed: {result.message.error_message or result.message.status}")
        return 0
    except TurnInProgress as exc:
        printer.finish()
        return _fail(f"Still running: {exc}. Your message was not stored.")
    except (BranchError, AgentStillRunning) as exc:
        printer.finish()
        return _fail(str(exc))
    except RuntimeError_ as exc:  # a plan pointed at that does not exist: nothing was stored
        printer.finish()
        return _fail(f"{exc}; your message was not stored")
    finally:
        rt.close()


def run(args: argparse.Namespace) -> int:
    """Ask once; exit 0 when answered, 2 for a usage error, 1 otherwise."""
    from tunaflow_tui.subcommands.arguments import refuse_huge_ids, usage_error

    split = _split_words(args.words)
    if isinstance(split, str):
        return usage_error("ask", split)
    project, text = split
    refused = refuse_huge_ids("ask", [("--fork", args.fork), ("--to", args.to)])
    if refused is not None:
        return refused
    return asyncio.run(_ask(args, project.resolve(), text))

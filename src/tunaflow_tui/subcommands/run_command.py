"""`tunaflow run`: the Plan → Dev → Review cycle headless; gate decisions come only from flags.

Several requests (``--request`` repeated, or ``--requests-file``) make several plans, each taken
through its gates beside the others (see :func:`~tunaflow_tui.runtime.headless.drive`).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import signal
import sys
from pathlib import Path

from tunaflow_tui.subcommands.arguments import is_directory
from tunaflow_tui.subcommands.trust_command import add_trust_flag


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Arguments of `tunaflow run`."""
    parser.add_argument("path", nargs="?", default=".", help="the project (default: the current directory)")
    what = parser.add_mutually_exclusive_group(required=True)
    what.add_argument("--request", metavar="TEXT", action="append",
                      help="what you want built: sent to the Architect (repeat it for several plans at once)")
    what.add_argument("--requests-file", metavar="FILE",
                      help="one request per non-empty line (- reads stdin): several plans at once")
    what.add_argument("--resume", action="store_true", help="continue whatever is in progress")
    parser.add_argument("--approve", action="store_true", help="approve the Architect's proposal")
    parser.add_argument("--accept", action="store_true",
                        help="accept a complete, passing review (never a failed or incomplete one)")
    parser.add_argument("--accept-partial", action="store_true",
                        help="also accept a passing review that a seat gave no verdict on (an incomplete review; "
                             "recorded as such)")
    parser.add_argument("--retry-seats", action="store_true",
                        help="run reviewer seats that errored (crash, timeout, rejected login) again, once per round")
    parser.add_argument("--on-fail", choices=("rework", "redesign", "stop"), default="stop",
                        help="what to do with a failed review (default: stop and leave the decision pending)")
    parser.add_argument("--max-rounds", type=int, default=5, metavar="N",
                        help="stop (pending) after N review rounds (default 5)")
    parser.add_argument("--merge", action="store_true", help="merge the plan's branch into its base when done")
    parser.add_argument("--on-setup-fail", choices=("retry", "skip", "stop"), default="stop",
                        help="what to do when [workflow] worktree_setup failed (default: stop, decision pending)")
    parser.add_argument("--demo", action="store_true", help="use the built-in demo engine for every role")
    parser.add_argument("--initial-commit", action="store_true",
                        help="in a git repository with no commits yet, commit the current files first "
                             "(a plan's branch needs a commit to start from)")
    parser.add_argument("--stop-leftovers", action="store_true",
                        help="stop agents an earlier, crashed tunaflow left running (instead of waiting for them)")
    add_trust_flag(parser)


def run(args: argparse.Namespace) -> int:
    """Drive the cycle; exit 0 done, 3 decision pending, 2 a usage error, 1 error."""
    from tunaflow_tui.core.settings import SettingsError, load_settings
    from tunaflow_tui.core.storage import StorageError
    from tunaflow_tui.core.storage.leases import TurnInProgress
    from tunaflow_tui.core.terminal_text import neutralize
    from tunaflow_tui.runtime.git_guard import create_initial_commit, needs_initial_commit
    from tunaflow_tui.runtime.headless import (
        EXIT_ERROR,
        GatePolicy,
        ProgressPrinter,
        drive,
        plan_of_conversation,
    )
    from tunaflow_tui.runtime.recovery import record_interruption
    from tunaflow_tui.runtime.runtime import WorkflowRuntime
    from tunaflow_tui.runtime.signals import Outcome, run_until_signalled, stop_reason
    from tunaflow_tui.subcommands.trust_command import untrusted_refusal

    project = Path(args.path).resolve()
    from tunaflow_tui.subcommands.arguments import usage_error

    if not is_directory(str(project)):
        return usage_error("run", f"{project} is not a directory")
    if args.max_rounds < 1:
        return usage_error("run", "--max-rounds must be at least 1")
    requests = list(args.request or [])
    if any(not request.strip() for request in requests):  # it would start nothing, and say "Nothing in progress"
        return usage_error("run", "--request is empty; give the words of the request")
    if args.requests_file is not None:
        read = read_requests(args.requests_file)
        if isinstance(read, str):
            return usage_error("run", read)
        requests = read
    try:
        settings = load_settings(project, force_demo=args.demo, trust=args.trust)
    except SettingsError as exc:
        print(f"tunaflow run: {exc}", file=sys.stderr)
        return EXIT_ERROR
    refusal = untrusted_refusal(project, settings)
    if refusal is not None:
        print(f"tunaflow run: {neutralize(refusal)}", file=sys.stderr)
        return EXIT_ERROR
    if settings.workflow.use_worktree and needs_initial_commit(project):
        if not args.initial_commit:
            print(f"tunaflow run: {project} is a git repository with no commits yet, so a plan has nothing to "
                  "branch from. Commit your files first (git add -A && git commit -m \"Initial commit\"), "
                  "or run again with --initial-commit to let tunaflow commit the current files.", file=sys.stderr)
            return EXIT_ERROR
        try:
            sha = create_initial_commit(project)
        except Exception as exc:
            print(f"tunaflow run: could not create the initial commit: {exc}", file=sys.stderr)
            return EXIT_ERROR
        print(f"Created the initial commit {sha[:10]} with the project's current files.")
    policy = GatePolicy(approve=args.approve, accept=args.accept, accept_partial=args.accept_partial,
                        retry_seats=args.retry_seats, on_fail=args.on_fail, max_rounds=args.max_rounds,
                        merge=args.merge, on_setup_fail=args.on_setup_fail)
    printer = ProgressPrinter(sys.stdout)
    try:
        runtime = WorkflowRuntime(project, settings, observer=printer)
    except Exception as exc:
        print(f"tunaflow run: cannot open the project: {exc}", file=sys.stderr)
        return EXIT_ERROR
    printer.plan_of = lambda conversation_id: plan_of_conversation(runtime, conversation_id)
    work = drive(runtime, policy, requests=requests, resume=args.resume, stop_leftovers=args.stop_leftovers)
    outcome: Outcome[int] | None = None

    def stopping(sig: signal.Signals) -> None:
        runtime.runner.stop_reason = stop_reason(sig)  # what the interrupted replies will say
        _tell(f"tunaflow run: {stop_reason(sig)}: stopping the agents and the tests…")

    try:
        outcome = asyncio.run(run_until_signalled(runtime.with_memory(work), on_stop=stopping))
    except KeyboardInterrupt:  # a ctrl+c before the work started or after it ended
        outcome = Outcome(None, signal.SIGINT)
    except TurnInProgress as exc:
        _tell(f"tunaflow run: Still running: {exc}. Your request was not stored.")
        return EXIT_ERROR
    except StorageError as exc:  # its message is the cause, for a person
        _tell(f"tunaflow run: {exc}")
        return EXIT_ERROR
    except Exception as exc:
        _tell(f"tunaflow run: {type(exc).__name__}: {exc}")
        return EXIT_ERROR
    finally:
        if outcome is not None and outcome.stopped_by is not None:
            with contextlib.suppress(Exception):  # the record is a courtesy; the step stays resumable anyway
                record_interruption(runtime, stop_reason(outcome.stopped_by))
        runtime.close()
    if outcome.stopped_by is not None:
        _tell(f"tunaflow run: {stop_reason(outcome.stopped_by)}; the running agent was stopped and what it "
              "wrote is kept. Run again with --resume to continue.")
        return outcome.exit_code or EXIT_ERROR
    return outcome.result if outcome.result is not None else EXIT_ERROR


def read_requests(name: str) -> list[str] | str:
    """The requests in a file, one per non-empty line (``-``: stdin), or why there are none."""
    try:
        if name == "-":
            text = sys.stdin.read()
        else:
            text = Path(name).expanduser().read_text(encoding="utf-8", errors="replace")
    except OSError as exc:
        return f"cannot read {name}: {exc.strerror or exc}"
    requests = [line.strip() for line in text.splitlines() if line.strip()]
    return requests or f"{name} holds no request (one per non-empty line)"


def _tell(text: str) -> None:
    """One line on stderr; a terminal that went away (SIGHUP) is no reason to fail."""
    with contextlib.suppress(OSError, ValueError):
        print(text, file=sys.stderr, flush=True)


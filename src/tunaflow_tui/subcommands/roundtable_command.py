"""`tunaflow roundtable [PATH] --topic TEXT --seat NAME=ENGINE[:ROLE][:blind] … [--mode M] [--rounds N] [--json]`.

Convenes a roundtable in a new branch of the project's main conversation and runs its rounds
headless: one line per event (a round starts, a seat answers or fails, a round ends), then the
brief as Markdown. ``--json`` prints one document instead: the seats, every round with every answer
(its text, tokens, cost, the exact context the seat received and its token count, whether earlier
rounds were compressed, whom it responds to), the tokens per seat, the brief and the consensus.
``--rank`` adds the anonymous peer-ranking round at the end.

Exit codes: 0 every round completed with every seat; 2 a usage error (one line on stderr, nothing
created); 1 the project could not be used; 4 some seat failed, or ``--rank`` got no ranking (its failure is in the output; the other seats' answers are kept);
128 + N stopped by signal N (ctrl+c, SIGTERM, SIGHUP), as `tunaflow run`.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

from tunaflow_tui.subcommands.arguments import is_directory
from tunaflow_tui.subcommands.trust_command import add_trust_flag

if TYPE_CHECKING:
    from tunaflow_tui.core.roundtable.seats import RoundtableSetup
    from tunaflow_tui.runtime.events import RuntimeEvent
    from tunaflow_tui.runtime.roundtable import Roundtable
    from tunaflow_tui.runtime.roundtable_records import RoundResult, RoundtableEvent

USAGE = ("tunaflow roundtable [PATH] --topic TEXT --seat NAME=ENGINE[:ROLE][:blind] [--seat …] "
         "[--mode sequential|deliberative] [--rounds N] [--rank] [--json]")
EXIT_SEAT_FAILED = 4
MAX_ROUNDS = 20


class _Usage(argparse.ArgumentParser):
    """Argument errors are one line on stderr and exit 2, like every other usage error."""

    def error(self, message: str) -> NoReturn:
        """Print ``message`` on one line and exit 2."""
        from tunaflow_tui.subcommands.arguments import USAGE_ERROR

        _fail(message)
        raise SystemExit(USAGE_ERROR)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Arguments of `tunaflow roundtable`."""
    parser.usage = USAGE
    parser.__class__ = _Usage
    parser.add_argument("path", nargs="?", default=".", metavar="PATH", help="the project (default: here)")
    parser.add_argument("--topic", metavar="TEXT", help="what the seats discuss")
    parser.add_argument("--seat", action="append", default=[], metavar="NAME=ENGINE[:ROLE][:blind]",
                        help="a participant: a configured engine, a role (proposer, critic, judge, synthesizer "
                             "or your own words) and :blind to show it no other answer; repeat per seat")
    parser.add_argument("--mode", default="sequential", metavar="sequential|deliberative",
                        help="seats speak in order seeing earlier answers (sequential), or all at once (deliberative)")
    parser.add_argument("--rounds", default="1", metavar="N", help=f"rounds to run, 1 to {MAX_ROUNDS} (default 1)")
    parser.add_argument("--rank", action="store_true",
                        help="end with an anonymous peer-ranking round (Borda count)")
    parser.add_argument("--json", action="store_true", help="print one JSON document at the end")
    add_trust_flag(parser)


def _fail(text: str) -> int:
    from tunaflow_tui.core.terminal_text import neutralize

    print(f"tunaflow roundtable: {' '.join(neutralize(text).split())}", file=sys.stderr, flush=True)
    return 1


def _say(text: str) -> None:
    from tunaflow_tui.core.terminal_text import neutralize

    print(neutralize(text), flush=True)


def _usage_of(usage: Any) -> str:
    cost = f", ${usage.cost_usd:.4f}" if usage.cost_usd is not None else ""
    return f"{usage.input_tokens:,} in / {usage.output_tokens:,} out tokens{cost}"


class _EventLines:
    """One line per roundtable event, for a person reading the terminal."""

    def __init__(self, quiet: bool) -> None:
        self.quiet = quiet
        self.notices: list[str] = []

    def runtime_event(self, event: RuntimeEvent) -> None:
        """A warning or an error the runtime raised around the seats' turns (e.g. git files put back)."""
        from tunaflow_tui.runtime.events import NoticeRaised

        if isinstance(event, NoticeRaised) and event.level in ("warning", "error"):
            self.notices.append(event.text)
            if not self.quiet:
                _say(f"Note: {event.text}")

    def __call__(self, event: RoundtableEvent) -> None:
        from tunaflow_tui.runtime import roundtable_records as rec

        if isinstance(event, rec.RoundtableNotice):
            self.notices.append(event.text)
        if self.quiet:
            return
        if isinstance(event, rec.RoundStarted):
            _say(f"Round {event.round} ({event.mode}): {', '.join(event.seats)}")
        elif isinstance(event, rec.SeatStarted):
            how = ", earlier rounds compressed" if event.compressed else ""
            _say(f"  {event.seat} ({event.engine}) is answering — {event.context_tokens:,} tokens of context{how}")
        elif isinstance(event, rec.SeatFinished):
            answer = event.answer
            if answer.ok:
                responds = f" — responds to {', '.join(answer.responds_to)}" if answer.responds_to else ""
                _say(f"  {answer.seat} answered ({_usage_of(answer.message.usage)}){responds}")
            else:
                _say(f"  {answer.seat} failed: {answer.error}")
        elif isinstance(event, rec.RoundFinished):
            result = event.result
            failed = f", {len(result.failed)} failed" if result.failed else ""
            stopped = ", stopped" if result.stopped else ""
            _say(f"Round {result.round} done: {len(result.answers) - len(result.failed)} answers{failed}{stopped}")
        elif isinstance(event, rec.RoundtableNotice):
            _say(f"Note: {event.text}")
        elif isinstance(event, rec.RankingFinished):
            counted = len(event.scores) - len(event.left_out)
            if counted > 0:
                _say("Ranking (Borda points): " + ", ".join(f"{seat} {points}" for seat, points in event.scores))
            else:
                _say("Ranking: no seat ranked the answers")
            for seat, why in event.left_out.items():
                _say(f"  {seat} was left out of the ranking: {why}")


def _parse(args: argparse.Namespace) -> tuple[Path, RoundtableSetup, int] | str:
    from tunaflow_tui.core.roundtable.seats import MODES, RoundtableSetup, SeatSpecError, parse_seat_spec

    project = Path(args.path).expanduser().resolve()
    if not is_directory(str(project)):
        return f"{project} is not a directory"
    if args.topic is None or not args.topic.strip():
        return "--topic is required (what the seats discuss)"
    if not args.seat:
        return "at least one --seat NAME=ENGINE[:ROLE][:blind] is required"
    if args.mode not in MODES:
        return f"unknown --mode {args.mode!r}: use sequential or deliberative"
    rounds_text = str(args.rounds).strip()
    if not rounds_text.isdigit() or not 1 <= int(rounds_text) <= MAX_ROUNDS:
        return f"--rounds must be a whole number from 1 to {MAX_ROUNDS}, not {rounds_text!r}"
    try:
        seats = tuple(parse_seat_spec(spec) for spec in args.seat)
        setup = RoundtableSetup(topic=args.topic.strip(), seats=seats, mode=args.mode)
    except SeatSpecError as exc:
        return str(exc)
    return project, setup, int(rounds_text)


def _document(table: Roundtable, results: list[RoundResult], notices: list[str],
              ranking: dict[str, Any] | None) -> dict[str, Any]:
    from tunaflow_tui.core.terminal_text import neutralize

    consensus = table.consensus()
    rounds = []
    for result in results:
        answers = [answer.to_json() for answer in result.answers]
        costs = [answer.message.usage.cost_usd for answer in result.answers
                 if answer.message.usage.cost_usd is not None]
        rounds.append({
            "round": result.round, "compressed": result.compressed, "stopped": result.stopped, "answers": answers,
            "tokens": {"input": sum(a.message.usage.input_tokens for a in result.answers),
                       "output": sum(a.message.usage.output_tokens for a in result.answers),
                       "context": sum(a.context_tokens for a in result.answers),
                       "cost_usd": sum(costs) if costs else None},
        })
    document: dict[str, Any] = {
        "branch_id": table.branch.id, "conversation_id": table.conversation_id, "topic": table.setup.topic,
        "mode": table.setup.mode, "seats": [seat.to_json() for seat in table.setup.seats], "rounds": rounds,
        "tokens": table.token_totals(), "brief": table.brief(),
        "consensus": consensus.to_json() if consensus is not None else None,
        "ranking": ranking, "notices": notices,
        "ok": all(not result.failed and not result.stopped for result in results),
    }
    return json.loads(neutralize(json.dumps(document, ensure_ascii=False)))  # type: ignore[no-any-return]


async def _convene(args: argparse.Namespace, project: Path, setup: RoundtableSetup, rounds: int) -> int:
    from tunaflow_tui.core.roundtable.seats import SeatSpecError
    from tunaflow_tui.core.settings import SettingsError, load_settings
    from tunaflow_tui.runtime.branching import BranchError
    from tunaflow_tui.runtime.roundtable import Roundtable
    from tunaflow_tui.runtime.runtime import WorkflowRuntime
    from tunaflow_tui.runtime.signals import run_until_signalled, stop_reason
    from tunaflow_tui.subcommands.trust_command import untrusted_refusal

    try:
        settings = load_settings(project, trust=args.trust)
    except SettingsError as exc:
        return _fail(str(exc))
    refusal = untrusted_refusal(project, settings)
    if refusal is not None:
        return _fail(refusal)
    lines = _EventLines(quiet=args.json)
    rt = WorkflowRuntime(project, settings, observer=lines.runtime_event)
    try:
        try:
            table = Roundtable.convene(rt, setup, observer=lines)
        except SeatSpecError as exc:  # a seat names an engine that is not configured: nothing was created
            from tunaflow_tui.subcommands.arguments import usage_error

            return usage_error("roundtable", str(exc))
        except BranchError as exc:
            return _fail(str(exc))
        if not args.json:
            _say(f"Roundtable {table.branch.id} ({table.conversation_id}) on: {' '.join(setup.topic.split())[:120]}")
        results: list[RoundResult] = []

        async def work() -> dict[str, Any] | None:
            for i in range(rounds):
                results.append(await table.run_round(prefetch=i < rounds - 1))
            if args.rank:
                return (await table.rank()).to_json()
            return None

        def stopping(sig: Any) -> None:
            table.stop(stop_reason(sig))

        try:
            outcome = await run_until_signalled(rt.with_memory(work()), on_stop=stopping)
        except BranchError as exc:
            return _fail(str(exc))
        if outcome.stopped_by is not None and outcome.exit_code is not None:
            table.write_brief()
            _fail(f"{stop_reason(outcome.stopped_by)}; the answers given so far are kept in {table.conversation_id}")
            return outcome.exit_code
        ranking = outcome.result
        if args.json:
            print(json.dumps(_document(table, results, lines.notices, ranking), ensure_ascii=False, indent=2))
        else:
            _say("")
            _say(table.brief())
        failed = any(result.failed for result in results)
        if ranking is not None and not ranking.get("rankings"):  # asked for a ranking, and nobody gave one
            _fail("no seat ranked the answers; the ranking is empty")
            failed = True
        return EXIT_SEAT_FAILED if failed else 0
    finally:
        rt.close()


def run(args: argparse.Namespace) -> int:
    """Convene and run a roundtable; exit 0, 2 (usage), 1 (failed), 4 (a seat failed) or 128 + N (stopped by signal N)."""
    parsed = _parse(args)
    if isinstance(parsed, str):
        from tunaflow_tui.subcommands.arguments import usage_error

        return usage_error("roundtable", parsed)
    project, setup, rounds = parsed
    return asyncio.run(_convene(args, project, setup, rounds))

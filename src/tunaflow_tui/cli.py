"""Command line entry point: ``tunaflow [PATH]`` and its subcommands.

Each subcommand lives in ``tunaflow_tui.subcommands.<name>`` and is imported only when used, so
``tunaflow parse`` never pays for Textual and nothing happens at import time.  The parser is built
the same way: every subcommand is listed, but only the one being run (or asked for ``--help``)
imports its module for its arguments, so ``tunaflow PATH`` does not load the storage, workflow and
marker modules of the other subcommands before its window opens.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence
from typing import NoReturn

from tunaflow_tui import __version__
from tunaflow_tui.subcommands import SUBCOMMANDS


class SubcommandParser(argparse.ArgumentParser):
    """A subcommand's parser: a usage error is one line on stderr naming the mistake, exit 2.

    A module that sets ``USAGE_HINT`` has it said after an unrecognised argument; the others point
    to their ``--help``.
    """

    usage_hint: str | None = None
    given: Sequence[str] = ()
    """The command line as typed (argparse reports a missing argument before an unknown one)."""

    def _unknown_options(self) -> list[str]:
        """The options typed that this subcommand does not have (``--reqest``), before any ``--``."""
        words = list(self.given)
        words = words[: words.index("--")] if "--" in words else words
        return [word for word in words if word.startswith("-") and word != "-" and not word[1:2].isdigit()
                and word.split("=", 1)[0] not in self._option_string_actions]

    def error(self, message: str) -> NoReturn:
        """Report a usage error in one line and exit 2."""
        from tunaflow_tui.subcommands.arguments import USAGE_ERROR, did_you_mean

        unknown = self._unknown_options() if "required" in message else []
        if unknown:  # `run --reqest x`: the misspelt option is the mistake, not the missing --request
            name = unknown[0].split("=", 1)[0]
            message = f"unrecognized arguments: {' '.join(unknown)}{did_you_mean(name, self._option_string_actions)}"
        if message.startswith("unrecognized arguments") and self.usage_hint is not None:
            hint = self.usage_hint
        else:
            hint = f"see {self.prog} --help"
        self.exit(USAGE_ERROR, f"{self.prog}: {message}; {hint}\n")


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The argument parser: every subcommand with its arguments (None), or only ``command``'s.

    ``tunaflow --help`` (``command`` is ``""``) lists every subcommand and needs none of their
    arguments; ``tunaflow parse …`` needs only ``parse`` (argparse's set-up of the other twelve,
    their messages looked up in the translation catalogues one by one, is time `tunaflow PATH`
    would spend before its window opens). A subcommand's module is imported only to add its own
    arguments.
    """
    parser = argparse.ArgumentParser(
        prog="tunaflow",
        description="Run your coding agents under one human-gated Plan → Dev → Review process.",
    )
    parser.add_argument("--version", action="version", version=f"tunaflow {__version__}")
    subs = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=SubcommandParser)
    for name, help_text in SUBCOMMANDS.items():
        if command and command != name:
            continue
        sub = subs.add_parser(name, help=help_text, description=help_text)
        if command is None or command == name:
            module = importlib.import_module(f"tunaflow_tui.subcommands.{name}_command")
            module.add_arguments(sub)
            sub.usage_hint = getattr(module, "USAGE_HINT", None)
            sub.set_defaults(_usage_errors=sub)
    return parser


def _not_utf8(args: Sequence[str]) -> str | None:
    """The first argument that is not UTF-8 text (bytes Python kept as lone surrogates), shown escaped."""
    for arg in args:
        try:
            arg.encode("utf-8")
        except UnicodeEncodeError:
            return arg.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
    return None


def _words_and_unknown(unknown: Sequence[str]) -> tuple[list[str], list[str]]:
    """Split what argparse left over into more words (plain words, anything after ``--``) and real unknown flags.

    argparse gives a ``nargs="*"`` positional only the words before the first option, so
    ``search . --mode fts WAL`` would leave ``WAL`` over.
    """
    words: list[str] = []
    flags: list[str] = []
    after_dashes = False
    for item in unknown:
        if item == "--" and not after_dashes:
            after_dashes = True
        elif after_dashes or not item.startswith("-") or item == "-":
            words.append(item)
        else:
            flags.append(item)
    return words, flags


def main(argv: Sequence[str] | None = None) -> int:
    """Parse ``argv`` and run the chosen subcommand; returns the process exit code."""
    args_list = list(sys.argv[1:] if argv is None else argv)
    bad = _not_utf8(args_list)
    if bad is not None:  # it could be neither stored nor printed: say so before anything runs
        print(f"tunaflow: the argument {bad[:200]} is not UTF-8 text; tunaflow takes text and paths in UTF-8",
              file=sys.stderr, flush=True)
        return 2
    # `tunaflow [PATH] [--no-mouse]` opens the app: insert the implicit `open`.
    implicit_open = not args_list or (args_list[0] not in SUBCOMMANDS
                                      and args_list[0] not in ("-h", "--help", "--version"))
    if implicit_open:
        args_list.insert(0, "open")
    chosen = args_list[0] if args_list[0] in SUBCOMMANDS else ""  # "": only the top-level options
    parser = build_parser(chosen)
    SubcommandParser.given = tuple(args_list[1:])
    args, unknown = parser.parse_known_args(args_list)
    if unknown and chosen and getattr(importlib.import_module(f"tunaflow_tui.subcommands.{chosen}_command"),
                                      "WORDS_ANYWHERE", False):
        more, unknown = _words_and_unknown(unknown)
        args.words = [*args.words, *more]
    if unknown and implicit_open:  # `tunaflow --bogus`: not an option of `tunaflow open`'s either
        from tunaflow_tui.subcommands.arguments import did_you_mean, is_directory, usage_error

        word = str(getattr(args, "path", ""))
        suggestion = did_you_mean(word, SUBCOMMANDS) if "/" not in word and not is_directory(word) else ""
        if suggestion:  # `tunaflow serach WAL`: a mistyped command with its arguments, not a project
            return usage_error(None, f"unknown command {word!r}{suggestion}")
        return usage_error(None, f"unrecognized arguments: {' '.join(unknown)}; see tunaflow --help")
    if unknown:
        from tunaflow_tui.subcommands.arguments import did_you_mean

        reporter: argparse.ArgumentParser = getattr(args, "_usage_errors", parser)
        flag = next((word.split("=", 1)[0] for word in unknown if word.startswith("--")), "")
        hint = did_you_mean(flag, reporter._option_string_actions) if flag else ""  # `--aprove`: `--approve`
        reporter.error(f"unrecognized arguments: {' '.join(unknown)}{hint}")
    if hasattr(args, "_usage_errors"):
        del args._usage_errors
    module = importlib.import_module(f"tunaflow_tui.subcommands.{args.command}_command")
    from tunaflow_tui.core.storage.storage_errors import StorageError

    try:
        return int(module.run(args))
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:  # `tunaflow export | head`: the reader has all it wanted
        return _reader_left()
    except StorageError as exc:  # the project's database failed where the subcommand did not expect it
        print(f"tunaflow {args.command}: {' '.join(str(exc).split())}", file=sys.stderr, flush=True)
        return 1


def _reader_left() -> int:
    """End quietly after the reader of stdout closed it: what is still buffered goes nowhere."""
    import os

    from tunaflow_tui.subcommands.arguments import EXIT_BROKEN_PIPE

    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, sys.stdout.fileno())  # so the flush at exit does not raise again
    except (OSError, ValueError):
        pass
    finally:
        os.close(devnull)
    return EXIT_BROKEN_PIPE

"""What a turn keeps of an agent's bytes: the end of a long stderr for the error card, bytes that are not
UTF-8 on either stream, and what a cancelled turn says.

The agent is a real process replaying a captured ``claude`` stream (tests/fakes/streams), with the
stderr and the stray bytes a test asks for; its lines go through the real Claude parser.
"""

from __future__ import annotations

import os
import sys
import textwrap
from pathlib import Path

from tunaflow_tui.agents.agent_events import (
    EngineError,
    EngineEvent,
    ErrorKind,
    FinalMessage,
    Notice,
    TextDelta,
)
from tunaflow_tui.agents.claude import ClaudeStreamParser
from tunaflow_tui.agents.process import STDERR_TAIL_BYTES, ProcessSpec, SubprocessTurn, tail_text
from tunaflow_tui.core.secret_masking import MASK

STREAM = Path(__file__).resolve().parents[2] / "fakes" / "streams" / "claude-fake-ok.jsonl"

# argv: the stream, a file of bytes written to stderr first, how many stream lines to print (all: -1),
# then "hang" (wait to be stopped) or an exit code, the bytes (in hex) that replace the text delta
# "Hello" ('' keeps it), and bytes (in hex) printed on stdout before the stream
AGENT = textwrap.dedent("""
    import os, sys, time
    stream, stderr_file, count, then, hello, prelude = sys.argv[1:7]
    open(stderr_file + '.stdin', 'wb').write(sys.stdin.buffer.read())  # the prompt, as the CLI reads it
    data = open(stderr_file, 'rb').read()
    for start in range(0, len(data), 1000):  # many small writes, as a chatty CLI logs
        os.write(2, data[start:start + 1000])
    os.write(1, bytes.fromhex(prelude))
    lines = open(stream, 'rb').read().splitlines()
    for line in lines[:int(count)] if int(count) >= 0 else lines:
        if hello:
            line = line.replace(b'"text":"Hello"', b'"text":"' + bytes.fromhex(hello) + b'"')
        os.write(1, line + b'\\n')
    if then == 'hang':
        time.sleep(60)
    sys.exit(int(then))
""")


def _turn(tmp_path: Path, stderr: bytes, *, lines: int = -1, then: str = "0", hello: bytes = b"",
          prompt: bytes | None = None, env: dict[str, str] | None = None, prelude: bytes = b"",
          cap: int = 20_000_000) -> SubprocessTurn:
    stderr_file = tmp_path / "stderr.bin"
    stderr_file.write_bytes(stderr)
    argv = [sys.executable, "-c", AGENT, str(STREAM), str(stderr_file), str(lines), then, hello.hex(), prelude.hex()]
    spec = ProcessSpec(argv=argv, cwd=tmp_path, env={**os.environ, **(env or {})}, stdin_data=prompt,
                       timeout_idle_s=60, timeout_total_s=120, max_output_bytes=cap)
    return SubprocessTurn(spec, ClaudeStreamParser())


def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    return True


async def _all(turn: SubprocessTurn) -> list[EngineEvent]:
    return [event async for event in turn]


async def test_a_failed_turn_shows_the_end_of_a_long_stderr_decoded_whatever_the_bytes(tmp_path: Path) -> None:
    # 200 KiB: more than a pipe holds, so the turn reads it in several pieces and keeps only the end
    log = b"".join(b"retry %03d: " % n + b"the service answered 529 overloaded; waiting " + b"." * 250 + b"\n"
                   for n in range(700))
    last = "fatal: gave up after 700 retries in caf\ufffd mode"
    stderr = log + b"fatal: gave up after 700 retries in caf\xff mode\n"
    events = await _all(_turn(tmp_path, stderr, lines=1, then="3"))  # the init line, then a crash
    err = events[-1]
    assert isinstance(err, EngineError) and err.exit_code == 3, err
    shown = stderr.replace(b"\xff", "\ufffd".encode())[-STDERR_TAIL_BYTES:]
    assert err.stderr_tail == tail_text(shown), "the last 8 KiB of stderr, cut into its last lines"
    assert err.stderr_tail.endswith("\n" + last), "the last line, with the stray byte replaced"
    assert "retry 699: " in err.stderr_tail and "retry 600: " not in err.stderr_tail


async def test_the_end_of_stderr_is_kept_whole_a_cut_secret_masked_a_cut_character_replaced(tmp_path: Path) -> None:
    secret = "sk-live-7f3a9c2e41b8d6f05a7c"
    cut_secret = b"starting\nauthenticating with key " + secret[:12].encode()  # no newline: the CLI was killed
    events = await _all(_turn(tmp_path, cut_secret, lines=1, then="3", env={"SERVICE_API_KEY": secret}))
    err = events[-1]
    assert isinstance(err, EngineError) and err.stderr_tail == f"starting\nauthenticating with key {MASK}"
    events = await _all(_turn(tmp_path, b"starting\nlast words: caf\xc3", lines=1, then="3"))
    err = events[-1]
    assert isinstance(err, EngineError) and err.stderr_tail == "starting\nlast words: caf\ufffd"


async def test_the_prompt_reaches_the_agent_on_stdin(tmp_path: Path) -> None:
    events = await _all(_turn(tmp_path, b"", prompt="Add a word count — please\n".encode()))
    assert isinstance(events[-1], FinalMessage), events[-1]
    assert (tmp_path / "stderr.bin.stdin").read_text(encoding="utf-8") == "Add a word count — please\n"


async def test_bytes_that_are_not_utf8_in_the_reply_are_replaced_not_fatal(tmp_path: Path) -> None:
    events = await _all(_turn(tmp_path, b"", hello=b"H\xffllo"))
    deltas = [event.text for event in events if isinstance(event, TextDelta)]
    assert deltas[0] == "H\ufffdllo"
    final = events[-1]
    assert isinstance(final, FinalMessage), final


async def test_a_cancelled_turn_says_so_and_keeps_the_stderr_and_the_text_so_far(tmp_path: Path) -> None:
    turn = _turn(tmp_path, b"warning: rate limited, retrying in 1 s\n", lines=5, then="hang")
    events: list[EngineEvent] = []
    async for event in turn:
        events.append(event)
        if isinstance(event, TextDelta):
            await turn.cancel()
            assert turn.pid is not None and not _group_alive(turn.pid), "stopped when cancel returns"
    err = events[-1]
    assert isinstance(err, EngineError) and err.kind is ErrorKind.CANCELLED
    assert (err.message, err.stderr_tail, err.partial_text) == (
        "The turn was cancelled.", "warning: rate limited, retrying in 1 s", "Hello")
    early = _turn(tmp_path, b"never written\n")
    await early.cancel()
    (refused,) = await _all(early)
    assert isinstance(refused, EngineError) and refused.kind is ErrorKind.CANCELLED
    assert (refused.message, refused.stderr_tail, refused.partial_text) == ("The turn was cancelled.", "", "")


async def test_lines_that_are_not_json_are_noted_once_and_the_reply_goes_on(tmp_path: Path) -> None:
    events = await _all(_turn(tmp_path, b"", prelude=b"Loading plugins...\n\n  \n[1, 2]\nWarning: slow network\n"))
    notices = [event for event in events if isinstance(event, Notice)]
    assert notices == [Notice("Ignored output from the agent that was not valid JSON.")], "once, blank lines aside"
    assert events[-1] == FinalMessage("Hello from the fake model.")


async def test_the_output_cap_stops_the_first_byte_over_it_not_the_last_byte_under_it(tmp_path: Path) -> None:
    size = sum(len(line) + 1 for line in STREAM.read_bytes().splitlines())  # what the agent prints
    events = await _all(_turn(tmp_path, b"", cap=size))
    assert events[-1] == FinalMessage("Hello from the fake model."), "exactly the cap: the whole reply"
    events = await _all(_turn(tmp_path, b"", cap=size - 1))
    err = events[-1]
    assert isinstance(err, EngineError) and err.kind is ErrorKind.OUTPUT_TOO_LARGE
    assert err.message == f"The agent printed more than {size - 1} bytes; it was stopped."

#!/usr/bin/env python3
"""A scripted stand-in for the claude and codex CLIs, for end-to-end tests of the workflow runtime.

It speaks the real stream formats (claude `-p --output-format stream-json --verbose
--include-partial-messages`, codex `exec --json`), chosen by the name it is called as. What it
answers comes from a JSON script: per role (read from the persona it is given), a list of turns
used in order (the last one repeats; a roundtable seat, named `Seat: NAME` in its persona, is
scripted as `"seat:NAME"`). A turn may wait at a `barrier` (its own file, then all listed files), so
seats that must overlap prove it. A turn may write or delete files in its working directory,
run commands (``"run": [[argv...], ...]``, after the writes — git checkout, commit, push, chmod: a
hostile agent's shell), stream slowly, pause after a given piece of text (for some seconds, or
at a ``gate`` until the test creates a release file), crash, hang (or flood while
it "hangs"), ignore SIGTERM, note when it started and ended (``stamp``: a JSON-lines file that gets
its working directory, wall-clock times and the TUNAFLOW_* / TMPDIR variables it was given), or (codex)
answer 401 Unauthorized — whatever the test needs. Like the real claude, a command that matches
a ``--disallowedTools "Bash(prefix:*)"`` rule is refused, not run; other CLIs' mechanisms are not
emulated (their commands run).

Environment: TUNAFLOW_FAKE_SCRIPT (script path), TUNAFLOW_FAKE_STATE (turn counters),
TUNAFLOW_FAKE_LOG (one JSON line per call: argv, role, cwd; commands go to ``<log>.commands``).
"""

from __future__ import annotations

import fcntl
import json
import os
import re
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path


def _role(argv: list[str]) -> str:
    persona = ""
    for i, arg in enumerate(argv):
        if arg == "--append-system-prompt" and i + 1 < len(argv):
            persona = argv[i + 1]
        if arg.startswith("developer_instructions="):
            persona = arg
    match = re.search(r"Role: (\w+)", persona.replace("\\n", "\n"))
    return match.group(1).lower() if match else "unknown"


def _arg_after(argv: list[str], flag: str) -> str | None:
    for i, arg in enumerate(argv):
        if arg == flag and i + 1 < len(argv):
            return argv[i + 1]
    return None


def _seat(argv: list[str]) -> str:
    """The roundtable seat named in the persona (``Seat: NAME``), if any."""
    for i, arg in enumerate(argv):
        text = argv[i + 1] if arg == "--append-system-prompt" and i + 1 < len(argv) else arg
        match = re.search(r"Seat: ([\w.\-]+)", text.replace("\\n", "\n"))
        if match and (arg == "--append-system-prompt" or arg.startswith("developer_instructions=")):
            return match.group(1)
    return ""


def _await_barrier(turn: dict) -> None:
    """``barrier``: write my file, then wait until every listed file exists; say so in the text if not."""
    barrier = turn.get("barrier")
    if not barrier:
        return
    Path(barrier["mine"]).write_text(str(os.getpid()))
    until = time.monotonic() + float(barrier.get("limit", 30))
    while not all(Path(p).exists() for p in barrier["all"]):
        if time.monotonic() > until:
            turn["text"] = "BARRIER TIMED OUT: the other seats were not running at the same time."
            return
        time.sleep(0.01)


def _next_turn(role: str) -> dict:
    script = json.loads(Path(os.environ["TUNAFLOW_FAKE_SCRIPT"]).read_text())
    state_path = Path(os.environ["TUNAFLOW_FAKE_STATE"])
    # reviewers run in parallel: take turns on the counter file
    with open(str(state_path) + ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        state = json.loads(state_path.read_text()) if state_path.exists() else {}
        index = state.get(role, 0)
        state[role] = index + 1
        state_path.write_text(json.dumps(state))
    turns = script.get(role) or [{"text": f"({role} has nothing to say)"}]  # a seat: "seat:NAME"
    return dict(turns[min(index, len(turns) - 1)])


STAMPED_VARIABLES = ("TUNAFLOW_PLAN", "TUNAFLOW_WORKTREE", "TMPDIR")


def _stamp(turn: dict, cwd: Path, what: str) -> None:
    """``stamp``: append when this turn started or ended, where, and the variables tunaflow set for it."""
    path = turn.get("stamp")
    if not path:
        return
    line = {"at": what, "t": time.time(), "pid": os.getpid(), "cwd": str(cwd),
            "env": {name: os.environ.get(name) for name in STAMPED_VARIABLES}}
    with open(path, "a") as fh:
        fh.write(json.dumps(line) + "\n")


def _emit(obj: dict) -> None:
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


def _apply_files(turn: dict, cwd: Path) -> None:
    for rel, content in (turn.get("write") or {}).items():
        path = cwd / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(content)
    for rel in turn.get("delete") or []:
        (cwd / rel).unlink(missing_ok=True)


def _denied_prefixes(argv: list[str], name: str) -> list[str]:
    """Command prefixes claude's ``--disallowedTools`` rules deny (``Bash(git push:*)`` → ``git push``)."""
    if name != "claude":
        return []
    rules = []
    for i, arg in enumerate(argv):
        if arg in ("--disallowedTools", "--disallowed-tools"):
            for value in argv[i + 1:]:
                if value.startswith("--"):
                    break
                rules += [r for r in re.split(r"[,\s]+(?![^()]*\))", value) if r]
    return [m.group(1).strip() for r in rules if (m := re.fullmatch(r"Bash\((.+?)(?::\*)?\)", r))]


def _run_commands(turn: dict, cwd: Path, denied: list[str]) -> None:
    """Run the turn's commands in ``cwd``; one denied by a permission rule is refused (and logged)."""
    log = os.environ.get("TUNAFLOW_FAKE_LOG")
    for command in turn.get("run") or []:
        line = " ".join(command)
        refused = any(line == prefix or line.startswith(prefix + " ") for prefix in denied)
        result = {"refused": True} if refused else {}
        if not refused:
            proc = subprocess.run(command, cwd=cwd, capture_output=True, text=True)
            result = {"exit": proc.returncode, "stderr": proc.stderr[-2000:]}
        if log:
            with open(log + ".commands", "a") as fh:
                fh.write(json.dumps({"command": command, **result}) + "\n")


def _chunks(text: str) -> list[str]:
    return [text[i:i + 40] for i in range(0, len(text), 40)] or [""]


def _stream_text(turn: dict, emit_delta) -> None:
    text = turn.get("text", "")
    pauses = turn.get("pause_after") or {}
    if pauses:  # {"some text": seconds}: stream up to and including it, then wait
        at = 0
        for needle, seconds in pauses.items():
            end = text.index(needle, at) + len(needle)
            for chunk in _chunks(text[at:end]):
                emit_delta(chunk)
            time.sleep(float(seconds))
            at = end
        for chunk in _chunks(text[at:]):
            emit_delta(chunk)
        return
    gate = turn.get("gate")
    if gate:  # {"after": text, "started": file, "release": file}: stream up to it, then wait for the test
        end = text.index(gate["after"]) + len(gate["after"])
        for chunk in _chunks(text[:end]):
            emit_delta(chunk)
        Path(gate["started"]).write_text(str(os.getpid()))
        until = time.monotonic() + float(gate.get("limit", 120))
        while not Path(gate["release"]).exists() and time.monotonic() < until:
            time.sleep(0.01)
        for chunk in _chunks(text[end:]):
            emit_delta(chunk)
        return
    hang = turn.get("hang_after_partial")
    if hang is not None:
        half = text[: len(text) // 2]
        for chunk in _chunks(half):
            emit_delta(chunk)
        emit_delta("\n\n")  # a finished block, then the pause: the runtime must store it now
        if turn.get("flood"):  # busy, not paused: progress lines as fast as it can, all the while
            until = time.monotonic() + float(hang)
            n = 0
            while time.monotonic() < until:
                _emit({"type": "tool_progress", "tool_use_id": "toolu_flood", "n": n, "pad": "." * 200})
                n += 1
        else:
            time.sleep(float(hang))
        rest = text[len(half):]
        for chunk in _chunks(rest):
            emit_delta(chunk)
        return
    for chunk in _chunks(text):
        emit_delta(chunk)


def _sessions() -> Path:
    return Path(os.environ["TUNAFLOW_FAKE_STATE"] + ".sessions")


def _known(session: str) -> bool:
    path = _sessions()
    return path.exists() and session in path.read_text().split()


def _remember(session: str) -> None:
    with open(_sessions(), "a") as fh:
        fh.write(session + "\n")


def run_claude(argv: list[str], turn: dict, cwd: Path) -> int:
    resumed = _arg_after(argv, "--resume")
    if resumed and not _known(resumed):
        # what claude does for a session it has no transcript of (agent-clis.md §4)
        _emit({"type": "result", "subtype": "error_during_execution", "is_error": True, "session_id": resumed,
               "errors": [f"No conversation found with session ID: {resumed}"], "total_cost_usd": 0})
        sys.stderr.write(f"No conversation found with session ID: {resumed}\n")
        return 1
    session = resumed or _arg_after(argv, "--session-id") or str(uuid.uuid4())
    if resumed and "--fork-session" in argv:  # like claude: the resumed history under a new session id
        session = str(uuid.uuid4())
    _emit({"type": "system", "subtype": "init", "cwd": str(cwd), "session_id": session, "tools": ["Read"],
           "model": "claude-sonnet-4-5", "permissionMode": "default", "apiKeySource": "ANTHROPIC_API_KEY"})
    if turn.get("crash"):
        sys.stderr.write("fatal: the agent crashed\n")
        return 1

    message_id = f"msg_{uuid.uuid4().hex[:12]}"
    _emit({"type": "stream_event", "event": {"type": "message_start", "message": {
        "id": message_id, "type": "message", "role": "assistant", "model": "claude-sonnet-4-5", "content": [],
        "usage": {"input_tokens": 120, "output_tokens": 1}}}, "session_id": session})
    _emit({"type": "stream_event", "event": {"type": "content_block_start", "index": 0,
           "content_block": {"type": "text", "text": ""}}, "session_id": session})

    def delta(chunk: str) -> None:
        _emit({"type": "stream_event", "event": {"type": "content_block_delta", "index": 0,
               "delta": {"type": "text_delta", "text": chunk}}, "session_id": session})

    _stream_text(turn, delta)
    text = turn.get("text", "")
    if turn.get("hang_after_partial") is not None:
        text = text[: len(text) // 2] + "\n\n" + text[len(text) // 2:]
    _emit({"type": "assistant", "message": {"id": message_id, "type": "message", "role": "assistant",
           "content": [{"type": "text", "text": text}]}, "session_id": session})
    _emit({"type": "stream_event", "event": {"type": "content_block_stop", "index": 0}, "session_id": session})
    _emit({"type": "stream_event", "event": {"type": "message_stop"}, "session_id": session})
    _remember(session)  # a finished turn leaves a transcript that can be resumed
    _emit({"type": "result", "subtype": "success", "is_error": False, "result": text, "session_id": session,
           "total_cost_usd": 0.0012, "usage": {"input_tokens": 120, "output_tokens": 40,
                                               "cache_read_input_tokens": 0}, "permission_denials": []})
    return 0


def run_codex(argv: list[str], turn: dict, cwd: Path) -> int:
    thread = _arg_after(argv, "resume") or str(uuid.uuid4())
    _emit({"type": "thread.started", "thread_id": thread})
    _emit({"type": "turn.started"})
    if turn.get("crash"):
        sys.stderr.write("fatal: the agent crashed\n")
        return 1
    if turn.get("auth_401"):  # a rejected key, as codex reports it: five reconnects, then turn.failed, exit 1
        rejected = ("unexpected status 401 Unauthorized: Incorrect API key provided: sk-FAKE., "
                    "url: http://127.0.0.1:18090/v1/responses")
        for attempt in range(1, 6):
            _emit({"type": "error", "message": f"Reconnecting... {attempt}/5 ({rejected})"})
        _emit({"type": "error", "message": rejected})
        _emit({"type": "turn.failed", "error": {"message": rejected}})
        return 1
    parts: list[str] = []
    _stream_text(turn, parts.append)
    _emit({"type": "item.completed", "item": {"id": "item_1", "type": "agent_message", "text": "".join(parts)}})
    _emit({"type": "turn.completed", "usage": {"input_tokens": 100, "cached_input_tokens": 0,
                                               "output_tokens": 30, "reasoning_output_tokens": 0}})
    return 0


def main() -> int:
    argv = sys.argv[1:]
    name = os.environ.get("TUNAFLOW_FAKE_AS") or Path(sys.argv[0]).name
    if "--version" in argv:
        print("2.1.197 (Claude Code)" if name == "claude" else "codex-cli 0.171.0")
        return 0
    if name == "codex" and argv[:2] == ["login", "status"]:
        return 0
    prompt = sys.stdin.read()
    cwd = Path(_arg_after(argv, "-C") or os.getcwd())
    role = _role(argv)
    log = os.environ.get("TUNAFLOW_FAKE_LOG")
    if log:
        with open(log, "a") as fh:
            fh.write(json.dumps({"tool": name, "argv": argv, "role": role, "seat": _seat(argv), "cwd": str(cwd),
                                 "prompt": prompt[:20000]}) + "\n")
    seat = _seat(argv)
    turn = _next_turn(f"seat:{seat}" if seat else role)
    _stamp(turn, cwd, "start")
    _await_barrier(turn)
    if turn.get("ignore_sigterm"):  # only SIGKILL stops it
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    if turn.get("started_file"):
        Path(turn["started_file"]).write_text(str(os.getpid()))
    _apply_files(turn, cwd)
    _run_commands(turn, cwd, _denied_prefixes(argv, name))
    code = run_codex(argv, turn, cwd) if name == "codex" else run_claude(argv, turn, cwd)
    _stamp(turn, cwd, "end")
    return code


if __name__ == "__main__":
    sys.exit(main())

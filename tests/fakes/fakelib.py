"""Shared behaviour of the fake agent CLIs in tests/fakes/bin (stdlib only; run as scripts).

Environment:
- FAKE_CLI_SCENARIO: which captured run (or synthetic behaviour) to replay;
- FAKE_CLI_LOG: a file to which each invocation appends one JSON line {argv, stdin, cwd, env};
- FAKE_CLI_PIDFILE: where the ``grandchild`` scenario's grandchild writes its pid once it ignores SIGTERM,
  and the ``holder-*`` scenarios their grandchild's pid;
- FAKE_CLI_DETACH: ``setsid`` makes the ``holder-*`` grandchild leave the process group (default: stays in it).
- FAKE_CLI_PRELUDE: ``deep-nesting`` prints one line of 200,000 ``[`` before the scenario's stream.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
STREAMS = HERE / "streams"
HELP = HERE / "help"

RECORDED_ENV = ("GEMINI_CLI_TRUST_WORKSPACE", "CODEX_API_KEY", "FAKE_EXTRA")


def scenario() -> str:
    """The scenario chosen by the test (default: a successful turn)."""
    return os.environ.get("FAKE_CLI_SCENARIO", "ok")


def record(stdin_text: str | None, extra: dict[str, object] | None = None) -> None:
    """Append this invocation's argv, stdin and cwd to FAKE_CLI_LOG."""
    log = os.environ.get("FAKE_CLI_LOG")
    if not log:
        return
    entry: dict[str, object] = {
        "argv": sys.argv[1:],
        "stdin": stdin_text,
        "cwd": os.getcwd(),
        "env": {k: os.environ[k] for k in RECORDED_ENV if k in os.environ},
    }
    entry.update(extra or {})
    with open(log, "a", encoding="utf-8") as fh:
        fh.write(json.dumps(entry) + "\n")


def read_stdin() -> str:
    """Read stdin to EOF, like the real CLIs (blocks until the caller closes it)."""
    if sys.stdin is None or sys.stdin.isatty():
        return ""
    return sys.stdin.read()


def emit(line: str) -> None:
    """Print one stdout line and flush it, so the reader sees it at once."""
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


def replay(name: str, subs: dict[str, str] | None = None) -> None:
    """Print the captured stdout of run ``name`` line by line, with text substitutions."""
    for line in (STREAMS / f"{name}.jsonl").read_text(encoding="utf-8").splitlines():
        for old, new in (subs or {}).items():
            line = line.replace(old, new)
        emit(line)


def print_help(name: str) -> None:
    """Print a captured --help text."""
    sys.stdout.write((HELP / f"{name}.txt").read_text(encoding="utf-8"))
    sys.stdout.flush()


HOLDER = """
import os, signal, sys, time
signal.signal(signal.SIGTERM, signal.SIG_IGN)
if os.fork():
    os._exit(0)  # double fork: the holder is nobody's child, as a daemonised helper is
with open(sys.argv[1] + ".tmp", "w") as fh:
    fh.write(str(os.getpid()))
os.rename(sys.argv[1] + ".tmp", sys.argv[1])
time.sleep(60)
"""


def spawn_stdout_holder() -> None:
    """Leave behind a grandchild that ignores SIGTERM and holds stdout open for a minute.

    With FAKE_CLI_DETACH=setsid it also leaves the process group. Returns once its pid is in
    FAKE_CLI_PIDFILE.
    """
    pidfile = Path(os.environ["FAKE_CLI_PIDFILE"])
    subprocess.run([sys.executable, "-c", HOLDER, str(pidfile)], check=True,
                   start_new_session=os.environ.get("FAKE_CLI_DETACH") == "setsid")
    while not pidfile.exists():
        time.sleep(0.01)


def run_common(first_line: str) -> bool:
    """Synthetic scenarios shared by all fakes; returns False when the scenario is not one of them."""
    if os.environ.get("FAKE_CLI_PRELUDE") == "deep-nesting":
        emit("[" * 200_000)  # valid-looking JSON nested far deeper than any decoder recurses
    name = scenario()
    if name == "hang":  # one line, then silence: the idle watchdog must fire
        emit(first_line)
        time.sleep(60)
    elif name == "trickle":  # never idle, never done: the total timeout must fire
        emit(first_line)
        while True:
            emit('{"type":"some_future_event","n":1}')
            time.sleep(0.05)
    elif name == "flood":  # valid lines as fast as the pipe takes them, for a minute; deaf to SIGTERM
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        emit(first_line)
        until = time.monotonic() + 60
        while time.monotonic() < until:
            emit('{"type":"some_future_event","pad":"' + "." * 500 + '"}')
    elif name == "stderr-hang":  # stuck, but chatty on stderr (retry logs): still idle
        emit(first_line)
        for _ in range(1200):
            sys.stderr.write("retrying: waiting for the network\n")
            sys.stderr.flush()
            time.sleep(0.05)
    elif name == "huge-line":  # 10 MB without a newline
        emit(first_line)
        chunk = "x" * 65536
        for _ in range(160):
            sys.stdout.write(chunk)
        sys.stdout.flush()
        time.sleep(30)
    elif name == "grandchild":  # a grandchild that ignores SIGTERM, then a slow stream
        # The grandchild writes its pid only once its handler is set, and the first line waits for that:
        # whoever reacts to the first line meets a grandchild already deaf to SIGTERM.
        pidfile = Path(os.environ["FAKE_CLI_PIDFILE"])
        subprocess.Popen([sys.executable, "-c",
                          "import os,signal,sys,time; signal.signal(signal.SIGTERM, signal.SIG_IGN); "
                          "part = sys.argv[1] + '.part'; open(part, 'w').write(str(os.getpid())); "
                          "os.replace(part, sys.argv[1]); time.sleep(600)", str(pidfile)])
        until = time.monotonic() + 30
        while not pidfile.exists() and time.monotonic() < until:
            time.sleep(0.01)
        emit(first_line)
        time.sleep(60)
    elif name == "close-stdout":  # one line, then stdout closed while the CLI keeps running
        emit(first_line)
        os.close(1)
        time.sleep(60)
        os._exit(0)  # stdout is gone: no flush at exit
    elif name == "crash":
        sys.stderr.write("fatal: something went badly wrong\n")
        sys.stderr.flush()
        sys.exit(3)
    elif name == "leak":  # prints a credential on stderr and stdout, then fails
        secret = os.environ.get("LEAKY_API_KEY", "")
        sys.stderr.write(f"debug: using key {secret}\n")
        emit(f"not json {secret}")
        sys.exit(1)
    else:
        return False
    sys.exit(0)

"""A stand-in ACP agent: replays a capture (``fixtures/agent-streams/acp/*.jsonl`` format) over NDJSON.

Each capture line is ``{"t", "dir", "msg"}``. ``"->"`` lines are what the client sends: the fake waits
for a message with that method (or, for a response to one of its own requests, that id), matching
ids as they come (the SDK numbers its requests from 0, the captures from 1). ``"<-"`` lines are sent
as they are, responses renumbered to the client's ids. Every message received is logged to
``FAKE_ACP_LOG`` as ``{"recv": msg}``.

Beyond the captures, ``"dir": "!"`` lines make the fake hostile: ``{"do": "stderr", "bytes": n}``
floods stderr, ``{"do": "stderr_text", "text": …}``, ``{"do": "exit", "code": n}`` dies mid-turn,
``{"do": "hang"}`` keeps reading (and logging) without answering and never exits on EOF,
``{"do": "ignore_term"}`` ignores SIGTERM, ``{"do": "spawn_child"}`` starts a grandchild in its
group (its pid logged as ``{"child": pid}``), ``{"do": "stamp", "label": …}`` logs the time the next line
leaves (for benches), ``{"do": "sleep", "s": …}`` pauses before the next line.

``FAKE_ACP_CAPTURE`` may name several captures (``os.pathsep`` between them): each start of the agent
plays the next one, as the turns of a conversation do.

``FAKE_ACP_SUBST`` (JSON object) replaces strings in what the fake sends, e.g. the capture's
``/opt/scratch`` by a file in the test's folder.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from typing import Any

LOG = os.environ.get("FAKE_ACP_LOG", "")


def _capture() -> str:
    """The capture for this start: with several (``os.pathsep``-separated), the n-th start plays the n-th."""
    captures = os.environ["FAKE_ACP_CAPTURE"].split(os.pathsep)
    if len(captures) == 1 or not LOG:
        return captures[0]
    with open(LOG + ".starts", "a+", encoding="utf-8") as starts:
        starts.seek(0)
        n = len(starts.read().splitlines())
        starts.write(f"{os.getpid()}\n")
    return captures[min(n, len(captures) - 1)]


CAPTURE = _capture()
SUBST: dict[str, str] = json.loads(os.environ.get("FAKE_ACP_SUBST", "{}"))
#: requests a client may add that the captures do not hold: answered with an empty result
HARMLESS = {"session/set_mode"}

buffer: list[dict[str, Any]] = []
id_map: dict[Any, Any] = {}


def log(entry: dict[str, Any]) -> None:
    if LOG:
        with open(LOG, "a", encoding="utf-8") as out:
            out.write(json.dumps(entry) + "\n")


def send(msg: dict[str, Any]) -> None:
    line = json.dumps(msg)
    for old, new in SUBST.items():
        line = line.replace(json.dumps(old)[1:-1], json.dumps(new)[1:-1])
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


def receive() -> dict[str, Any] | None:
    line = sys.stdin.readline()
    if not line:
        return None
    msg = json.loads(line)
    log({"recv": msg})
    return msg


def take(match: Any) -> dict[str, Any]:
    """The first buffered or next received message ``match`` accepts; exit when stdin ends."""
    while True:
        for i, msg in enumerate(buffer):
            if match(msg):
                return buffer.pop(i)
        msg = receive()
        if msg is None:
            sys.exit(0)
        if match(msg):
            return msg
        if "method" in msg and "id" in msg and msg["method"] in HARMLESS:
            send({"jsonrpc": "2.0", "id": msg["id"], "result": {}})
        elif "method" in msg and "id" in msg:
            # a request the capture does not expect here (session/load where it resumes…): refuse it
            send({"jsonrpc": "2.0", "id": msg["id"],
                  "error": {"code": -32601, "message": f"Method not found: {msg['method']}"}})
        else:
            buffer.append(msg)


def hang() -> None:
    while receive() is not None:
        pass
    while True:  # like codex-acp: stdin's end is not the end
        signal.pause()


def run(entries: list[dict[str, Any]]) -> None:
    for entry in entries:
        direction, msg = entry["dir"], entry.get("msg") or {}
        if direction == "->":
            if "method" in msg:
                got = take(lambda m, method=msg["method"]: m.get("method") == method)
                if "id" in msg:
                    id_map[msg["id"]] = got["id"]
            else:
                take(lambda m, rid=msg["id"]: "method" not in m and m.get("id") == rid)
        elif direction == "<-":
            out = dict(msg)
            if "method" not in out and "id" in out:
                out["id"] = id_map.get(out["id"], out["id"])
            send(out)
        else:
            act(entry)


def act(entry: dict[str, Any]) -> None:
    what = entry["do"]
    if what == "stderr":
        block = b"x" * 1023 + b"\n"
        for _ in range(entry["bytes"] // len(block)):
            sys.stderr.buffer.write(block)
        sys.stderr.buffer.flush()
    elif what == "stderr_text":
        sys.stderr.write(entry["text"] + "\n")
        sys.stderr.flush()
    elif what == "exit":
        sys.stdout.flush()
        os._exit(entry["code"])
    elif what == "hang":
        hang()
    elif what == "ignore_term":
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    elif what == "sleep":  # the agent at work between two messages (running the tool it was allowed)
        time.sleep(float(entry["s"]))
    elif what == "stamp":  # when the next line leaves, for benches
        log({"stamp": entry["label"], "t": time.time()})
    elif what == "spawn_child":
        child = subprocess.Popen([sys.executable, "-c", "import time\nwhile True: time.sleep(1)"],
                                 stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        log({"child": child.pid})


if __name__ == "__main__":
    with open(CAPTURE, encoding="utf-8") as source:
        run([json.loads(line) for line in source if line.strip()])
    while receive() is not None:  # claude-acp and gemini exit on stdin EOF
        pass

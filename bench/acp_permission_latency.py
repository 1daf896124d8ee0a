"""How soon a question an ACP agent asks becomes a runtime event (what the app turns into a card).

A stand-in agent (tests/fakes/acp_agent.py, the real captures' shapes) sends, in one turn, N text
chunks and N permission requests for an edit, alternately, each stamped with the time it leaves the
agent. The question goes through the real path: the SDK connection, the engine's client, the role
policy (the Architect asks), the runtime's permission desk, up to the ``PermissionAsked`` event, which
the bench answers at once. The baseline, measured in the same turn over the same pipe, is a text
chunk's time from the agent to the engine's ``TextDelta``. Figures: p50 / p95 / max in ms and the ratio
of the question's p95 to the chunk's.

Run: ``python bench/acp_permission_latency.py [--questions 200]``. Target: a card within 100 ms of
the agent's request (the event here; the widget mounts in one more frame).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import shlex
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from tunaflow_tui.agents.acp.acp_engine import AcpEngine  # noqa: E402
from tunaflow_tui.agents.agent_events import FinalMessage, TextDelta  # noqa: E402
from tunaflow_tui.agents.base import PermissionProfile, TurnRequest  # noqa: E402
from tunaflow_tui.agents.permissions import PermissionAnswer  # noqa: E402
from tunaflow_tui.core.settings.engines import EngineConfig  # noqa: E402
from tunaflow_tui.runtime.events import PermissionAsked, RuntimeEvent  # noqa: E402
from tunaflow_tui.runtime.permission_desk import PermissionDesk  # noqa: E402

FAKE = ROOT / "tests" / "fakes" / "acp_agent.py"
CAPTURE = ROOT / "tests" / "fakes" / "streams" / "acp" / "codex-fake-ok.jsonl"


def scenario(questions: int, target: str) -> list[dict[str, object]]:
    lines = [json.loads(line) for line in CAPTURE.read_text().splitlines()]
    head = lines[: next(i for i, e in enumerate(lines) if e["msg"].get("method") == "session/prompt") + 1]
    sid = next(e["msg"]["result"]["sessionId"] for e in head if isinstance(e["msg"].get("result"), dict)
               and "sessionId" in e["msg"]["result"])
    body: list[dict[str, object]] = []
    for i in range(questions):
        rid = 100 + i
        body += [
            {"dir": "!", "do": "stamp", "label": f"chunk{i}"},
            {"dir": "<-", "msg": {"jsonrpc": "2.0", "method": "session/update", "params": {
                "sessionId": sid, "update": {"sessionUpdate": "agent_message_chunk",
                                             "content": {"type": "text", "text": f"c{i} "}}}}},
            {"dir": "!", "do": "stamp", "label": f"ask{i}"},
            {"dir": "<-", "msg": {"jsonrpc": "2.0", "id": rid, "method": "session/request_permission", "params": {
                "sessionId": sid, "options": [
                    {"optionId": "proceed_always", "name": "Allow for this session", "kind": "allow_always"},
                    {"optionId": "proceed_once", "name": "Allow", "kind": "allow_once"},
                    {"optionId": "cancel", "name": "Reject", "kind": "reject_once"}],
                "toolCall": {"toolCallId": f"w{i}", "status": "pending", "title": f"Writing to {target}",
                             "kind": "edit", "locations": [{"path": target}],
                             "content": [{"type": "diff", "path": target, "oldText": "a\n", "newText": "b\n"}]}}}},
            {"dir": "->", "msg": {"jsonrpc": "2.0", "id": rid, "result": None}},
        ]
    return [*head, *body, {"dir": "<-", "msg": {"jsonrpc": "2.0", "id": 3, "result": {"stopReason": "end_turn"}}}]


def spread(values: list[float]) -> tuple[float, float, float]:
    ordered = sorted(values)
    return (statistics.median(ordered), ordered[max(int(len(ordered) * 0.95) - 1, 0)], ordered[-1])


async def measure(questions: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp) / "work"
        work.mkdir()
        capture = Path(tmp) / "capture.jsonl"
        capture.write_text("".join(json.dumps(e) + "\n" for e in scenario(questions, str(work / "notes.md"))))
        log = Path(tmp) / "log.jsonl"
        asked: dict[int, float] = {}
        desk: PermissionDesk

        def on_event(event: RuntimeEvent) -> None:
            if isinstance(event, PermissionAsked):
                asked[len(asked)] = time.time()
                desk.answer(event.request_id, PermissionAnswer.ALLOW_ONCE)

        desk = PermissionDesk(on_event)
        engine = AcpEngine(EngineConfig(name="bench-acp", type="acp", command=shlex.join([sys.executable, str(FAKE)]),
                                        env={"FAKE_ACP_CAPTURE": str(capture), "FAKE_ACP_LOG": str(log)}))
        request = TurnRequest(prompt="go", cwd=work, role="architect", profile=PermissionProfile.CHAT,
                              permissions=desk.broker("main"))
        delivered: list[float] = []
        final = None
        async for event in engine.start(request):
            if isinstance(event, TextDelta):
                delivered.append(time.time())
            final = event
        assert isinstance(final, FinalMessage), final
        stamps = {e["stamp"]: e["t"] for e in map(json.loads, log.read_text().splitlines()) if "stamp" in e}
    chunk_ms = [(delivered[i] - stamps[f"chunk{i}"]) * 1000 for i in range(questions)]
    ask_ms = [(asked[i] - stamps[f"ask{i}"]) * 1000 for i in range(questions)]
    c50, c95, cmax = spread(chunk_ms)
    a50, a95, amax = spread(ask_ms)
    print(f"questions: {questions}")
    print(f"text chunk → TextDelta (baseline): p50 {c50:.1f} ms, p95 {c95:.1f} ms, max {cmax:.1f} ms")
    print(f"question → PermissionAsked:        p50 {a50:.1f} ms, p95 {a95:.1f} ms, max {amax:.1f} ms")
    print(f"ratio of p95: {a95 / c95:.2f}×; target p95 ≤ 100 ms: {'met' if a95 <= 100 else 'not met'}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--questions", type=int, default=200)
    asyncio.run(measure(parser.parse_args().questions))


if __name__ == "__main__":
    main()

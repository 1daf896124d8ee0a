"""A whole Architect turn on an ACP agent: the prompt it receives, a permission it asks, the plan it proposes."""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path

from acp_rig import FAKE_AGENT, capture, chunk, result, session_id, until_prompt
from runtime_harness import PROPOSAL, Harness

from tunaflow_tui.agents.permissions import PermissionAnswer
from tunaflow_tui.core.settings import EngineConfig
from tunaflow_tui.runtime.events import PermissionAsked, PermissionSettled, RuntimeEvent
from tunaflow_tui.runtime.runtime import WorkflowRuntime


def _permission_exchange() -> list[dict[str, object]]:
    """gemini's permission request for an edit and the client's answer, as captured."""
    entries = capture("gemini-tool-existing")
    i = next(n for n, e in enumerate(entries) if e["msg"].get("method") == "session/request_permission")
    return entries[i : i + 2]


async def test_an_architect_turn_runs_on_an_acp_agent(harness: Harness, tmp_path: Path) -> None:
    entries = until_prompt(capture("gemini-ok"))
    sid = session_id(entries)
    half = len(PROPOSAL) // 2
    entries += [chunk(sid, PROPOSAL[:half]), *_permission_exchange(), chunk(sid, PROPOSAL[half:]),
                result(3, {"stopReason": "end_turn"})]
    capture_file = tmp_path / "architect.jsonl"
    capture_file.write_text("".join(json.dumps(e) + "\n" for e in entries))
    log = tmp_path / "acp.jsonl"
    agent = EngineConfig(name="gemini-acp", type="acp", command=shlex.join([sys.executable, str(FAKE_AGENT)]),
                         timeout_idle_s=30, env={
                             "FAKE_ACP_CAPTURE": str(capture_file), "FAKE_ACP_LOG": str(log),
                             "FAKE_ACP_SUBST": json.dumps({"/opt/scratch": str(harness.project / "notes.md")})})
    settings = harness.settings()
    settings = settings.model_copy(update={"engines": {**settings.engines, "gemini-acp": agent},
                                           "roles": settings.roles.model_copy(update={"architect": "gemini-acp"})})
    events: list[RuntimeEvent] = []
    rt = WorkflowRuntime(harness.project, settings, observer=events.append)

    def user(event: RuntimeEvent) -> None:
        if isinstance(event, PermissionAsked):
            assert rt.permissions.answer(event.request_id, PermissionAnswer.ALLOW_ONCE)

    rt.subscribe(user)
    try:
        reply = await rt.send_user_message("Please add multiplication")
        assert reply is not None and reply.ok, reply
        [plan] = rt.store.list_plans()
        assert plan.phase == "approval"  # the proposal's markers came through the ACP reply as through any other
        assert [s.title for s in plan.subtasks] == ["Add `mul(a, b)` to calc.py", "Test `mul` in tests/test_mul.py"]
        received = [json.loads(line)["recv"] for line in log.read_text().splitlines() if '"recv"' in line]
        prompt = next(m for m in received if m.get("method") == "session/prompt")["params"]["prompt"]
        sent = "\n".join(block["text"] for block in prompt)
        assert "Please add multiplication" in sent
        assert "Architect" in prompt[0]["text"]  # the persona opens a new session
        asked = [e for e in events if isinstance(e, PermissionAsked)]
        assert [(e.conversation_id, e.request.kind, e.request.paths) for e in asked] == [
            ("main", "edit", (str(harness.project / "notes.md"),))]
        assert [e.answer for e in events if isinstance(e, PermissionSettled)] == [PermissionAnswer.ALLOW_ONCE]
        outcome = next(m for m in received if "method" not in m)["result"]["outcome"]
        assert outcome == {"outcome": "selected", "optionId": "proceed_once"}
        assert rt.permissions.open_questions() == []
        main = rt.store.get_conversation("main")
        assert main is not None and (main.native_engine, main.native_session_id) == ("gemini-acp", sid)
    finally:
        rt.close()

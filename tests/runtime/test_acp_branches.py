"""Branches of a conversation whose engine is an ACP agent: ``session/fork`` where the agent offers it,
else the branch starts a session of its own with the inherited context (the checkpoint and the turns before it)."""

from __future__ import annotations

import json
import os
import shlex
import sys
from pathlib import Path
from typing import Any

from acp_rig import FAKE_AGENT, capture, chunk, expect, received_in, result, session_id, until_prompt
from runtime_harness import Harness

from tunaflow_tui.core.settings import EngineConfig
from tunaflow_tui.runtime.branching import INHERITANCE, NATIVE_FORK
from tunaflow_tui.runtime.runtime import WorkflowRuntime


def _runtime(h: Harness, tmp_path: Path, name: str, turns: list[list[dict[str, Any]]]) -> tuple[WorkflowRuntime, Path]:
    """A runtime whose Architect is the ACP agent ``name``: its n-th start replays ``turns[n]``."""
    paths = []
    for n, entries in enumerate(turns):
        path = tmp_path / f"{name}-turn{n}.jsonl"
        path.write_text("".join(json.dumps(e) + "\n" for e in entries))
        paths.append(str(path))
    log = tmp_path / f"{name}.log"
    agent = EngineConfig(name=name, type="acp", command=shlex.join([sys.executable, str(FAKE_AGENT)]),
                         timeout_idle_s=30, env={"FAKE_ACP_CAPTURE": os.pathsep.join(paths), "FAKE_ACP_LOG": str(log)})
    settings = h.settings()
    settings = settings.model_copy(update={"engines": {**settings.engines, name: agent},
                                           "roles": settings.roles.model_copy(update={"architect": name})})
    return WorkflowRuntime(h.project, settings), log


def _first_turn(name: str, answer: str) -> tuple[list[dict[str, Any]], str]:
    entries = until_prompt(capture(name))
    sid = session_id(entries)
    return [*entries, chunk(sid, answer), result(3, {"stopReason": "end_turn"})], sid


async def test_a_branch_of_an_agent_that_forks_continues_its_session_through_session_fork(
        harness: Harness, tmp_path: Path) -> None:
    first, parent = _first_turn("claude-fake-ok", "Use an LRU cache.")  # claude-code-acp offers fork
    branch_turn = [*capture("claude-fake-ok")[:2], expect("session/fork", 2), result(2, {"sessionId": "forked-1"}),
                   expect("session/prompt", 3), chunk("forked-1", "Then JWT it is."),
                   result(3, {"stopReason": "end_turn"})]
    rt, log = _runtime(harness, tmp_path, "claude-acp", [first, branch_turn])
    try:
        reply = await rt.send_user_message("How should we cache sessions?")
        assert reply is not None and reply.ok, reply
        branch = rt.fork("main", reply.message.id)
        assert branch.context_source == NATIVE_FORK  # the agent said it forks when it started
        answer = await rt.send_user_message("What about JWT instead?", branch.shadow_conversation_id)
        assert answer is not None and answer.ok and answer.text == "Then JWT it is.", answer
        sent = received_in(log)
        [forked] = [m["params"] for m in sent if m.get("method") == "session/fork"]
        assert (forked["sessionId"], forked["cwd"]) == (parent, str(harness.project.resolve()))
        prompt = [m["params"] for m in sent if m.get("method") == "session/prompt"][-1]
        assert prompt["sessionId"] == "forked-1"
        text = "\n".join(block["text"] for block in prompt["prompt"])
        assert "What about JWT instead?" in text
        assert "How should we cache sessions?" not in text  # the forked session has it already
        shadow = rt.store.get_conversation(branch.shadow_conversation_id)
        assert shadow is not None and shadow.native_session_id == "forked-1"
        main = rt.store.get_conversation("main")
        assert main is not None and main.native_session_id == parent  # the parent's session is untouched
        assert rt.store.get_branch(branch.id).context_source == NATIVE_FORK
    finally:
        rt.close()


async def test_a_branch_of_an_agent_that_does_not_fork_starts_its_own_session_with_the_inherited_thread(
        harness: Harness, tmp_path: Path) -> None:
    first, parent = _first_turn("gemini-ok", "Use an LRU cache.")  # gemini --acp offers no fork
    second = until_prompt(capture("gemini-ok"))
    branch_sid = "b4c73e80-0000-4000-8000-00000000b1a5"
    second = [json.loads(json.dumps(e).replace(parent, branch_sid)) for e in second]
    second += [chunk(branch_sid, "Then JWT it is."), result(3, {"stopReason": "end_turn"})]
    rt, log = _runtime(harness, tmp_path, "gemini-acp", [first, second])
    try:
        reply = await rt.send_user_message("How should we cache sessions?")
        assert reply is not None and reply.ok, reply
        branch = rt.fork("main", reply.message.id)
        assert branch.context_source == INHERITANCE
        answer = await rt.send_user_message("What about JWT instead?", branch.shadow_conversation_id)
        assert answer is not None and answer.ok and answer.text == "Then JWT it is.", answer
        sent = received_in(log)
        assert not [m for m in sent if m.get("method") in ("session/fork", "session/resume", "session/load")]
        assert len([m for m in sent if m.get("method") == "session/new"]) == 2
        prompt = [m["params"] for m in sent if m.get("method") == "session/prompt"][-1]
        text = "\n".join(block["text"] for block in prompt["prompt"])
        assert "Use an LRU cache." in text and "How should we cache sessions?" in text  # the inherited thread
        assert "What about JWT instead?" in text
        shadow = rt.store.get_conversation(branch.shadow_conversation_id)
        assert shadow is not None and shadow.native_session_id == branch_sid
    finally:
        rt.close()

"""Background turns (the summaries of long conversations) are registered and ended like any agent's.

A summarizer that hangs must neither outlive its timeout nor be invisible to the leftover check:
while it runs its process group is in the running-process registry, and a timeout or a
cancellation ends the group and forgets the record.
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any

import pytest
from runtime_harness import Harness
from waiting import until

from tunaflow_tui.agents.base import PermissionProfile, TurnRequest
from tunaflow_tui.agents.claude import ClaudeEngine
from tunaflow_tui.core.memory.embedder import Embedder
from tunaflow_tui.core.processes import ProcessIdentity, group_alive
from tunaflow_tui.core.settings import EngineConfig
from tunaflow_tui.core.storage import Store
from tunaflow_tui.runtime import compression
from tunaflow_tui.runtime.quiet_turn import quiet_answer
from tunaflow_tui.runtime.runtime import WorkflowRuntime

FAKES_BIN = Path(__file__).resolve().parents[1] / "fakes" / "bin"


def _hanging_summarizer(tmp_path: Path) -> ClaudeEngine:
    env = {"PATH": f"{FAKES_BIN}{os.pathsep}{os.environ.get('PATH', '')}", "FAKE_CLI_SCENARIO": "hang",
           "FAKE_CLI_LOG": str(tmp_path / "calls.jsonl")}
    return ClaudeEngine(EngineConfig(name="claude", type="claude", env=env, timeout_total_s=600))


def _request(tmp_path: Path) -> TurnRequest:
    return TurnRequest(prompt="Summarise this.", cwd=tmp_path, role="summarizer", profile=PermissionProfile.READ_ONLY)


def _identities(store: Store) -> list[ProcessIdentity]:
    return [record.identity for record in store.list_processes(kind="agent")]


@pytest.mark.asyncio
async def test_a_hanging_summarizer_is_registered_while_it_runs_and_ended_when_cancelled(tmp_path: Path) -> None:
    store = Store.open(tmp_path)
    try:
        task = asyncio.create_task(quiet_answer(store, _hanging_summarizer(tmp_path), _request(tmp_path),
                                                label="summarizer agent (claude)", timeout_s=600))
        await until(None, lambda: store.list_processes(kind="agent"), "the summarizer's process in the registry")
        (record,) = store.list_processes(kind="agent")
        assert record.label == "summarizer agent (claude)"
        identity = _identities(store)[0]
        assert group_alive(identity)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert not group_alive(identity)
        assert store.list_processes() == ()
    finally:
        store.close()


@pytest.mark.asyncio
async def test_a_summarizer_past_its_timeout_is_ended_and_the_extractive_summary_stands_in(
        harness: Harness, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    rt = WorkflowRuntime(harness.project, harness.settings(), engine_factory=lambda _c: _hanging_summarizer(tmp_path),
                         embedder=Embedder(env={"TUNAFLOW_EMBEDDING_MODEL": str(tmp_path / "none.onnx")}))
    rt.settings.memory.compress_after_tokens = 600
    rt.settings.memory.compress_keep_messages = 4
    rt.settings.memory.summary_span_tokens = 300
    monkeypatch.setattr(compression, "SUMMARY_TIMEOUT_S", 3.0)
    seen: list[ProcessIdentity] = []
    real_record = rt.store.record_process

    def record(kind: str, identity: ProcessIdentity, **kwargs: Any) -> Any:
        seen.append(identity)
        return real_record(kind, identity, **kwargs)

    monkeypatch.setattr(rt.store, "record_process", record)
    try:
        for i in range(12):
            rt.store.add_message("main", "user" if i % 2 == 0 else "assistant",
                                 f"On topic {i} we agreed the parser keeps state number {i}. " * 6)
        assert await compression.compress_conversation(rt, "main") >= 1
        assert seen, "the summarizer's process was never registered"
        assert not any(group_alive(identity) for identity in seen)
        assert rt.store.list_processes() == ()
        summaries = rt.store.list_summaries("main")
        assert summaries and all(s.engine is None for s in summaries)  # extractive
    finally:
        rt.close()

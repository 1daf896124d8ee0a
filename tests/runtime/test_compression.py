"""Compressed memory: summaries of a long conversation's older part, with their ranges, re-done as it changes."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from itertools import pairwise
from pathlib import Path

import pytest
from runtime_harness import Harness

from tunaflow_tui.agents.agent_events import EngineEvent, FinalMessage
from tunaflow_tui.agents.base import Engine, Turn, TurnRequest
from tunaflow_tui.core.memory.embedder import Embedder
from tunaflow_tui.core.settings import EngineConfig
from tunaflow_tui.runtime.compression import compress_conversation
from tunaflow_tui.runtime.runtime import WorkflowRuntime


class _Answer(Turn):
    def __init__(self, text: str) -> None:
        self._text = text

    async def _events(self) -> AsyncIterator[EngineEvent]:
        yield FinalMessage(self._text)

    def __aiter__(self) -> AsyncIterator[EngineEvent]:
        return self._events()

    async def cancel(self) -> None:
        return None


class Summarizer(Engine):
    """Answers like a model would: a summary naming the first and last topic numbers it read."""

    name = "summarizer-model"
    type = "claude"

    def __init__(self) -> None:
        self.prompts: list[str] = []

    def start(self, request: TurnRequest) -> Turn:
        self.prompts.append(request.prompt)
        topics = re.findall(r"topic (\d+)", request.prompt)
        return _Answer(f"Discussed topics {topics[0]} to {topics[-1]}.")


def _runtime(harness: Harness, tmp_path: Path, engine: Engine | None) -> WorkflowRuntime:
    def factory(_config: EngineConfig) -> Engine:
        if engine is None:
            raise RuntimeError("the summarizer CLI is not installed")
        return engine

    rt = WorkflowRuntime(harness.project, harness.settings(), engine_factory=factory,
                         embedder=Embedder(env={"TUNAFLOW_EMBEDDING_MODEL": str(tmp_path / "none.onnx")}))
    rt.settings.memory.compress_after_tokens = 600
    rt.settings.memory.compress_keep_messages = 4
    rt.settings.memory.summary_span_tokens = 300
    return rt


def _talk(rt: WorkflowRuntime, start: int, count: int) -> list[int]:
    ids = []
    for i in range(start, start + count):
        role = "user" if i % 2 == 0 else "assistant"
        text = f"On topic {i} we agreed the parser keeps state number {i}. " + "It stays simple and tested. " * 6
        ids.append(rt.store.add_message("main", role, text).id)
    return ids


@pytest.mark.asyncio
async def test_the_older_part_is_summarised_in_ranges_and_the_last_turns_stay_verbatim(
        harness: Harness, tmp_path: Path) -> None:
    engine = Summarizer()
    rt = _runtime(harness, tmp_path, engine)
    try:
        ids = _talk(rt, 0, 20)
        written = await compress_conversation(rt, "main")
        summaries = rt.store.list_summaries("main")
        assert written == len(summaries) >= 2
        assert summaries[0].first_message_id == ids[0]
        for before, after in pairwise(summaries):
            assert ids.index(after.first_message_id) == ids.index(before.last_message_id) + 1, "no gap, no overlap"
        assert summaries[-1].last_message_id == ids[-5], "the last 4 messages are never summarised"
        assert all(s.engine == "summarizer-model" for s in summaries)
        assert summaries[0].content.startswith("Discussed topics 0 to ")

        assert await compress_conversation(rt, "main") == 0, "nothing changed: nothing is re-done"
        _talk(rt, 20, 12)
        await compress_conversation(rt, "main")
        grown = rt.store.list_summaries("main")
        assert [s.id for s in grown[:len(summaries) - 1]] == [s.id for s in summaries[:-1]], "earlier ones stay"
        assert grown[-1].last_message_id > summaries[-1].last_message_id

        first = grown[0]
        rt.store.update_message(first.first_message_id, content="On topic 0 we changed our mind entirely.")
        await compress_conversation(rt, "main")
        redone = rt.store.list_summaries("main")[0]
        assert redone.id != first.id and redone.first_message_id == first.first_message_id

        rt.settings.context.recent_turns_kept = 2
        pack = rt.context.build(role="architect", conversation_id="main", request="what about the parser?")
        memory = next(s for s in pack.sections if s.name == "memory")
        assert f"[messages {redone.first_message_id}–{redone.last_message_id}]" in memory.text
        assert memory.tokens <= rt.settings.context.memory_tokens + 20
    finally:
        rt.close()


@pytest.mark.asyncio
async def test_without_a_summarizer_engine_an_extractive_summary_is_written(harness: Harness, tmp_path: Path) -> None:
    rt = _runtime(harness, tmp_path, None)
    try:
        ids = _talk(rt, 0, 20)
        await compress_conversation(rt, "main")
        summaries = rt.store.list_summaries("main")
        assert summaries and all(s.engine is None for s in summaries)
        assert summaries[0].content.startswith("- User: On topic 0 we agreed the parser keeps state number 0.")
        assert summaries[-1].last_message_id == ids[-5]
    finally:
        rt.close()


@pytest.mark.asyncio
async def test_a_short_conversation_is_left_alone(harness: Harness, tmp_path: Path) -> None:
    engine = Summarizer()
    rt = _runtime(harness, tmp_path, engine)
    try:
        _talk(rt, 0, 3)
        assert await compress_conversation(rt, "main") == 0
        assert rt.store.list_summaries("main") == () and engine.prompts == []
    finally:
        rt.close()

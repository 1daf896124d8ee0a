"""Shared set-up of the roundtable runtime tests: a runtime on the scripted project, seats, answers."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from runtime_harness import Harness

from tunaflow_tui.core.memory.embedder import Embedder
from tunaflow_tui.core.roundtable.seats import RoundtableSetup, Seat
from tunaflow_tui.core.settings import EngineConfig
from tunaflow_tui.runtime.roundtable import Roundtable
from tunaflow_tui.runtime.roundtable_records import RoundtableEvent
from tunaflow_tui.runtime.runtime import WorkflowRuntime

TOPIC = "Should the storage layer be split into three modules (schema, records, queries)?"


def no_model(tmp: Path) -> Embedder:
    """An embedder whose model file is missing: earlier rounds go in full."""
    return Embedder(env={"TUNAFLOW_EMBEDDING_MODEL": str(tmp / "missing-model.onnx")})


def runtime(h: Harness, embedder: Embedder | None = None) -> WorkflowRuntime:
    """A runtime with the scripted claude and codex, plus an engine whose binary is missing."""
    settings = h.settings()
    engines = dict(settings.engines)
    engines["gone"] = EngineConfig(name="gone", type="gemini", command=str(h.root / "no-such-gemini"))
    settings = settings.model_copy(update={"engines": engines})
    return WorkflowRuntime(h.project, settings, embedder=embedder or no_model(h.root))


def convene(rt: WorkflowRuntime, *seats: Seat, mode: str = "sequential",
            events: list[RoundtableEvent] | None = None, **kwargs: Any) -> Roundtable:
    """A new roundtable on :data:`TOPIC`, recording its events into ``events``."""
    setup = RoundtableSetup(topic=TOPIC, seats=seats, mode=mode)
    return Roundtable.convene(rt, setup, observer=events.append if events is not None else None, **kwargs)


def said(text: str) -> dict[str, Any]:
    """A scripted turn that answers ``text``."""
    return {"text": text}

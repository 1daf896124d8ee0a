"""How soon an ACP agent's permission question is on screen as a card, in the real app (Pilot, headless).

The app is tunaflow's own (``build_app`` on a copy of the demo project, the Architect on a stand-in ACP
agent: tests/fakes/acp_agent.py with the real captures' shapes). In one turn the agent sends N
permission requests for an edit, one after the other, each stamped with the time it leaves the agent
(the next is sent ``--gap`` seconds after the bench answered the previous one: the agent runs the
tool it was allowed). A question goes the product's whole way:
the SDK connection, the engine's client, the role policy (the Architect asks), the runtime's permission
desk, the bridge to the app, the permission controller, and the card mounted in the main chat's dock.

The baseline, in the same run and for the same questions: a plain notification (a toast) the bench
posts from the runtime's ``PermissionAsked`` event — the cheapest way the app could tell the user.
Both are seen the same way: the first screen refresh after the widget was mounted in which it has a
region on screen (a callback ``call_after_refresh`` queued from its mount), the moment it is drawn. Figures: p50 / p95 / max in ms from the agent's stamp, and the ratio of the card's p95 to the
toast's.

Run: ``python bench/acp_permission_card.py [--questions 100] [--gap 0.5]``. Target: the card's p95 ≤ 100 ms.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import shlex
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from acp_permission_latency import FAKE, scenario  # noqa: E402
from textual.widget import Widget  # noqa: E402

from tunaflow_tui.agents.demo.sample import copy_demo_project  # noqa: E402
from tunaflow_tui.agents.permissions import PermissionAnswer  # noqa: E402
from tunaflow_tui.core.settings import EngineConfig, load_settings  # noqa: E402
from tunaflow_tui.runtime.events import PermissionAsked, RuntimeEvent  # noqa: E402
from tunaflow_tui.runtime.runtime import WorkflowRuntime  # noqa: E402
from tunaflow_tui.subcommands.open_command import build_app  # noqa: E402
from tunaflow_tui.textual_compat import Toast  # noqa: E402
from tunaflow_tui.widgets.permission.permission_card import PermissionCard  # noqa: E402

LIMIT_S = 30.0


def spread(values: list[float]) -> tuple[float, float, float]:
    ordered = sorted(values)
    return (statistics.median(ordered), ordered[max(int(len(ordered) * 0.95) - 1, 0)], ordered[-1])


def questions_only(entries: list[dict[str, object]], gap: float) -> list[dict[str, object]]:
    """The latency bench's scenario without its text chunks: questions one after the other, the agent
    working ``gap`` seconds after each answer (as it runs the tool it was allowed) before the next."""
    kept: list[dict[str, object]] = []
    for entry in entries:
        label = str(entry.get("label", ""))
        msg = entry.get("msg")
        if label.startswith("chunk") or (isinstance(msg, dict) and "agent_message_chunk" in json.dumps(msg)):
            continue
        if label.startswith("ask") and label != "ask0":
            kept.append({"dir": "!", "do": "sleep", "s": gap})
        kept.append(entry)
    return kept


async def measure(questions: int, gap: float) -> tuple[list[float], list[float], list[float]]:
    with tempfile.TemporaryDirectory() as tmp:
        project = copy_demo_project(Path(tmp) / "textstats")
        capture = Path(tmp) / "capture.jsonl"
        entries = questions_only(scenario(questions, str(project / "notes.md")), gap)
        capture.write_text("".join(json.dumps(e) + "\n" for e in entries))
        log = Path(tmp) / "log.jsonl"
        settings = load_settings(project, force_demo=True)
        agent = EngineConfig(name="bench-acp", type="acp", command=shlex.join([sys.executable, str(FAKE)]),
                             timeout_idle_s=120, env={"FAKE_ACP_CAPTURE": str(capture), "FAKE_ACP_LOG": str(log)})
        settings = settings.model_copy(update={
            "engines": {**settings.engines, "bench-acp": agent},
            "roles": settings.roles.model_copy(update={"architect": "bench-acp"}),
            "ui": settings.ui.model_copy(update={"bell": False})})
        runtime = WorkflowRuntime(project, settings)
        app = build_app(runtime, cursor_blink=False)

        def toast(event: RuntimeEvent) -> None:  # the baseline: a plain notification for the same question
            if isinstance(event, PermissionAsked):
                event_seen.append(time.time())
                app.notify(f"bench question {event.request_id}", timeout=60)

        event_seen: list[float] = []
        runtime.subscribe(toast)
        shown: dict[str, dict[int, float]] = {"card": {}, "toast": {}}
        arrived = asyncio.Event()

        def on_screen(kind: str, request_id: int, widget: Widget) -> None:
            if not widget.region.area:  # not laid out on the screen yet: the next refresh
                widget.call_after_refresh(on_screen, kind, request_id, widget)
                return
            shown[kind].setdefault(request_id, time.time())
            arrived.set()

        def card_mounted(card: PermissionCard) -> None:  # on screen after the refresh that lays it out
            if card.view.is_open:
                card.call_after_refresh(on_screen, "card", card.view.request_id, card)

        real_toast_mount = Toast._on_mount

        def toast_mounted(toast: Toast, event: Any) -> None:
            real_toast_mount(toast, event)
            message = toast._notification.message
            if message.startswith("bench question "):
                toast.call_after_refresh(on_screen, "toast", int(message.rsplit(" ", 1)[1]), toast)

        PermissionCard.on_mount = card_mounted  # type: ignore[attr-defined]
        Toast._on_mount = toast_mounted  # type: ignore[method-assign]
        card_seen: list[float] = []
        toast_seen: list[float] = []
        try:
            async with app.run_test(size=(120, 40), notifications=True) as pilot:
                app.controller.send("main", "go")
                for n in range(questions):
                    request_id = n + 1  # the desk numbers questions from 1
                    deadline = time.monotonic() + LIMIT_S
                    while request_id not in shown["card"] or request_id not in shown["toast"]:
                        arrived.clear()
                        left = deadline - time.monotonic()
                        if left <= 0:
                            raise TimeoutError(f"question {n} did not show within {LIMIT_S:g} s")
                        with contextlib.suppress(TimeoutError):
                            await asyncio.wait_for(arrived.wait(), left)
                    card_seen.append(shown["card"][request_id])
                    toast_seen.append(shown["toast"][request_id])
                    app.clear_notifications()
                    assert runtime.permissions.answer(request_id, PermissionAnswer.ALLOW_ONCE)
                deadline = time.monotonic() + LIMIT_S
                while runtime.store.list_messages("main")[-1].status == "streaming":  # the turn ends
                    if time.monotonic() > deadline:
                        states = [(m.role, m.status) for m in runtime.store.list_messages("main")]
                        raise TimeoutError(f"the agent's turn did not end: {states}")
                    await asyncio.sleep(0.05)
                await pilot.pause()
            stamps = {e["stamp"]: e["t"] for e in map(json.loads, log.read_text().splitlines()) if "stamp" in e}
        finally:
            del PermissionCard.on_mount  # type: ignore[attr-defined]
            Toast._on_mount = real_toast_mount  # type: ignore[method-assign]
            runtime.close()
    asked = [stamps[f"ask{i}"] for i in range(questions)]
    return ([(seen - at) * 1000 for seen, at in zip(card_seen, asked, strict=True)],
            [(seen - at) * 1000 for seen, at in zip(toast_seen, asked, strict=True)],
            [(seen - at) * 1000 for seen, at in zip(event_seen, asked, strict=True)])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--questions", type=int, default=100)
    parser.add_argument("--gap", type=float, default=0.5, help="seconds the agent works between an answer and "
                                                                "its next question")
    args = parser.parse_args()
    count = args.questions
    card_ms, toast_ms, event_ms = asyncio.run(measure(count, args.gap))
    e50, e95, emax = spread(event_ms)
    c50, c95, cmax = spread(card_ms)
    t50, t95, tmax = spread(toast_ms)
    print(f"questions: {count}, the agent working {args.gap:g} s after each answer")
    print(f"question → runtime's PermissionAsked event (both start here): p50 {e50:.1f} ms, p95 {e95:.1f} ms, "
          f"max {emax:.1f} ms")
    print(f"question → plain notification on screen (baseline): p50 {t50:.1f} ms, p95 {t95:.1f} ms, max {tmax:.1f} ms")
    print(f"question → permission card on screen:               p50 {c50:.1f} ms, p95 {c95:.1f} ms, max {cmax:.1f} ms")
    print(f"ratio of p95: {c95 / t95:.2f}×; target card p95 ≤ 100 ms: {'met' if c95 <= 100 else 'not met'}")


if __name__ == "__main__":
    main()

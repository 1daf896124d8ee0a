"""Open permission questions: answered once, withdrawn when the turn gives up, late answers ignored."""

from __future__ import annotations

import asyncio
import io

from waiting import until

from tunaflow_tui.agents.permissions import PermissionAnswer, PermissionRequest
from tunaflow_tui.runtime.events import PermissionAsked, PermissionSettled, RuntimeEvent
from tunaflow_tui.runtime.headless import ProgressPrinter
from tunaflow_tui.runtime.permission_desk import PermissionDesk

REQUEST = PermissionRequest(engine="gemini-acp", role="architect", session_id="s", tool_call_id="t",
                            title="Writing to notes.md", kind="edit", paths=("/p/notes.md",))


async def test_an_answer_settles_the_question_once() -> None:
    events: list[RuntimeEvent] = []
    desk = PermissionDesk(events.append)
    asking = asyncio.create_task(desk.broker("branch:2").decide(REQUEST))
    await until(None, lambda: desk.open_questions(), "the question")
    [question] = desk.open_questions("branch:2")
    assert desk.open_questions("main") == []
    assert desk.answer(question.request_id, PermissionAnswer.DENY)
    assert await asking is PermissionAnswer.DENY
    assert not desk.answer(question.request_id, PermissionAnswer.ALLOW_ONCE)  # a second click changes nothing
    assert events == [PermissionAsked("branch:2", question.request_id, REQUEST),
                      PermissionSettled("branch:2", question.request_id, PermissionAnswer.DENY)]


async def test_a_withdrawn_question_closes_and_a_late_answer_is_ignored() -> None:
    events: list[RuntimeEvent] = []
    desk = PermissionDesk(events.append)
    asking = asyncio.create_task(desk.broker("main").decide(REQUEST))
    await until(None, lambda: desk.open_questions(), "the question")
    [question] = desk.open_questions()
    asking.cancel()  # the turn was cancelled or ran out of time
    await asyncio.gather(asking, return_exceptions=True)
    assert desk.open_questions() == []
    assert not desk.answer(question.request_id, PermissionAnswer.ALLOW_ONCE)
    assert events[-1] == PermissionSettled("main", question.request_id, None, "cancelled")


async def test_a_question_the_timeout_withdrew_says_so() -> None:
    events: list[RuntimeEvent] = []
    desk = PermissionDesk(events.append)
    asking = asyncio.create_task(desk.broker("main").decide(REQUEST))
    await until(None, lambda: desk.open_questions(), "the question")
    asking.cancel("timeout")  # how the ACP engine withdraws its questions when the idle timeout ends the turn
    await asyncio.gather(asking, return_exceptions=True)
    assert events[-1] == PermissionSettled("main", events[0].request_id, None, "timeout")


def test_tunaflow_run_says_a_question_waits_with_nobody_to_answer_it() -> None:
    out = io.StringIO()
    hostile = PermissionRequest(engine="gemini-acp", role="developer", session_id="s", tool_call_id="t",
                                title="Run \x1b[2Jrm -rf build", kind="execute", command="rm -rf build")
    ProgressPrinter(out)(PermissionAsked("main", 1, hostile))
    line = out.getvalue()
    assert "gemini-acp asks before: Run" in line and "cancelled at the idle timeout" in line
    assert "\x1b" not in line

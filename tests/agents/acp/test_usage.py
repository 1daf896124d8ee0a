"""What an ACP agent reports using: its context window as it works, tokens, and the turn's share of its cost."""

from __future__ import annotations

from typing import Any

from acp_rig import AcpRig, capture, chunk, collect, expect, result, session_id, until_prompt

from tunaflow_tui.agents.agent_events import FinalMessage, TextDelta, Usage


def usage_update(sid: str, used: int, size: int, cost: float | None = None) -> dict[str, Any]:
    """An agent→client ``usage_update``, shaped as codex-acp sent it (with ``cost`` where an agent adds one)."""
    update: dict[str, Any] = {"sessionUpdate": "usage_update", "used": used, "size": size}
    if cost is not None:
        update["cost"] = {"amount": cost, "currency": "USD"}
    return {"t": 0, "dir": "<-", "msg": {"jsonrpc": "2.0", "method": "session/update",
                                         "params": {"sessionId": sid, "update": update}}}


async def test_codex_usage_update_is_reported_as_it_comes_and_with_the_turn(rig: AcpRig) -> None:
    entries = until_prompt(capture("codex-fake-ok"))
    sid = session_id(entries)
    [update] = [e for e in capture("codex-fake-ok") if e["msg"].get("params", {}).get("update", {}).get(
        "sessionUpdate") == "usage_update"]  # the real capture's line: {"used": 126, "size": 258400}
    entries += [update, chunk(sid, "still working"), result(3, {"stopReason": "end_turn"})]
    events = await collect(rig.engine(entries).start(rig.request()))
    usage = [e for e in events if isinstance(e, Usage)]
    assert usage and all(u == Usage(context_used=126, context_size=258400) for u in usage)
    first_text = next(i for i, e in enumerate(events) if isinstance(e, TextDelta))
    assert events.index(usage[0]) < first_text  # reported as it came, not only with the turn's end
    assert events[-1] == FinalMessage("still working")


async def test_a_turn_costs_what_the_session_cost_grew_by_during_it(rig: AcpRig) -> None:
    first = until_prompt(capture("claude-fake-ok"))
    sid = session_id(first)
    first += [usage_update(sid, 900, 200000, cost=0.02), chunk(sid, "one"), result(3, {"stopReason": "end_turn"})]
    second = [*capture("claude-fake-ok")[:2], expect("session/resume", 2), result(2, {}), expect("session/prompt", 3),
              usage_update(sid, 1500, 200000, cost=0.05), chunk(sid, "two"), result(3, {"stopReason": "end_turn"})]
    engine = rig.engine(first)
    one = await collect(engine.start(rig.request()))
    assert one[-1] == FinalMessage("one")
    assert [e.cost_usd for e in one if isinstance(e, Usage)][-1] == 0.02
    engine.config = rig.engine(second).config  # the same engine's next turn, on the agent's next capture
    two = await collect(engine.start(rig.request(resume=sid)))
    assert two[-1] == FinalMessage("two")
    last = [e for e in two if isinstance(e, Usage)][-1]
    assert abs((last.cost_usd or 0) - 0.03) < 1e-9  # not the session's 0.05 so far
    assert (last.context_used, last.context_size) == (1500, 200000)


async def test_a_resumed_session_whose_earlier_cost_is_unknown_reports_no_cost_rather_than_a_wrong_one(
        rig: AcpRig) -> None:
    sid = "stored-1"
    entries = [*capture("claude-fake-ok")[:2], expect("session/resume", 2), result(2, {}),
               expect("session/prompt", 3), usage_update(sid, 1500, 200000, cost=0.05), chunk(sid, "two"),
               result(3, {"stopReason": "end_turn"})]
    events = await collect(rig.engine(entries).start(rig.request(resume=sid)))
    last = [e for e in events if isinstance(e, Usage)][-1]
    assert last.cost_usd is None and last.context_used == 1500

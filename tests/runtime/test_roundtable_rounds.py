"""Roundtable rounds with real subprocesses (the scripted claude/codex): what each seat is sent, overlap,
cancel and re-run of one seat, failures, the user between rounds, the line-up, adopt."""

from __future__ import annotations

import asyncio

import pytest
from roundtable_seats import TOPIC, convene, runtime, said
from runtime_harness import Harness
from waiting import until

from tunaflow_tui.core.roundtable.seats import Seat, SeatSpecError
from tunaflow_tui.runtime.branching import BranchError
from tunaflow_tui.runtime.roundtable import Roundtable, RoundtableError
from tunaflow_tui.runtime.roundtable_records import RoundtableEvent, SeatFinished, SeatStarted

ALICE = "Split it into three modules now. The schema changes least, so it goes first."
BOB = ("I disagree with alice on timing: the boundary between records and queries is vague. "
       "plan_coverage 3, code_quality 3, test_coverage 2, convention 4.")
CAROL = "Independently: keep one module until the migrations settle. Splitting now costs more than it saves."


def _seats() -> tuple[Seat, ...]:
    return (Seat("alice", "fclaude", "proposer"), Seat("bob", "fcodex", "critic"),
            Seat("carol", "fclaude", "judge", blind=True))


async def test_sequential_seats_get_exactly_their_context_and_answers_show_whom_they_answer(
        harness: Harness) -> None:
    harness.set_script(**{"seat:alice": [said(ALICE)], "seat:bob": [said(BOB)], "seat:carol": [said(CAROL)]})
    rt = runtime(harness)
    table = convene(rt, *_seats())
    result = await table.run_round()
    alice, bob, carol = result.answers
    assert [a.seat for a in result.answers] == ["alice", "bob", "carol"] and not result.failed
    assert [a.message.content for a in result.answers] == [ALICE, BOB, CAROL]

    project = f"## Project\nProject: {harness.project.name} ({harness.project})\nActive plan: none."
    assert alice.prompt.startswith("[Output limit: Keep your response under approximately 800 tokens.]\n\n"
                                   "You are alice, a participant in a roundtable discussion with bob, carol (round 1).")
    assert project in alice.prompt and f"## Topic\n{TOPIC}" in alice.prompt
    assert "This round so far" not in alice.prompt, "the first speaker sees no answer"
    assert bob.prompt.startswith("[Output limit: Keep your response under approximately 600 tokens.]")
    assert "plan_coverage, code_quality, test_coverage, convention" in bob.prompt
    assert f"## This round so far\n### alice (proposer), round 1\n{ALICE}" in bob.prompt
    assert carol.prompt == (
        "[Output limit: Keep your response under approximately 500 tokens.]\n\n"
        "You are carol, a participant in a roundtable discussion (round 1).\nYour role: judge.\n"
        "Judge independently: form your own assessment from the topic and the evidence, and do not defer to the "
        "other participants' opinions or scores. State your verdict in your first two sentences, then your "
        "reasons.\nYou answer independently: you are not shown the other participants' answers.\n"
        "Do not edit any file; answer in prose.\n\n"
        f"## Topic\n{TOPIC}\n\nGive your answer now, as carol.")
    received = {call["seat"]: call["prompt"] for call in harness.calls()}
    assert received == {"alice": alice.prompt, "bob": bob.prompt, "carol": carol.prompt}, \
        "what is recorded is exactly what each CLI received"
    assert all(a.context_tokens > 20 for a in result.answers) and alice.context_tokens < bob.context_tokens
    assert bob.responds_to == ("alice",) and alice.responds_to == () and carol.responds_to == ()
    branch = rt.store.get_branch(table.branch.id)
    assert branch is not None and branch.mode == "roundtable"
    rt.close()


async def test_deliberative_seats_run_at_the_same_time_and_see_no_answer_of_this_round(harness: Harness) -> None:
    files = [str(harness.root / f"started-{name}") for name in ("alice", "bob", "carol")]
    harness.set_script(**{f"seat:{name}": [{"text": f"{name} holds a position.",
                                            "barrier": {"mine": mine, "all": files, "limit": 60}}]
                          for name, mine in zip(("alice", "bob", "carol"), files, strict=True)})
    events: list[RoundtableEvent] = []
    rt = runtime(harness)
    table = convene(rt, *_seats(), mode="deliberative", events=events)
    stored_when_reported: list[str] = []

    def check(event: RoundtableEvent) -> None:
        if isinstance(event, SeatFinished):
            message = rt.store.get_message(event.answer.message.id)
            assert message is not None
            stored_when_reported.append(message.status)

    table.subscribe(check)
    result = await table.run_round()
    assert [a.message.content for a in result.answers] == [
        "alice holds a position.", "bob holds a position.", "carol holds a position."], \
        "every seat was running while the others waited at the barrier"
    for answer in result.answers:
        assert "This round so far" not in answer.prompt
        assert "holds a position" not in answer.prompt
    assert stored_when_reported == ["done", "done", "done"]
    started = [e for e in events if isinstance(e, SeatStarted)]
    assert len(started) == 3
    rt.close()


async def test_cancelling_one_seat_lets_the_others_finish(harness: Harness) -> None:
    harness.set_script(**{"seat:alice": [said(ALICE)], "seat:bob": [{"text": BOB, "hang_after_partial": 120}],
                          "seat:carol": [said(CAROL)]})
    rt = runtime(harness)
    table = convene(rt, Seat("alice", "fclaude"), Seat("bob", "fclaude", "critic"), Seat("carol", "fcodex", "judge"),
                    mode="deliberative")
    running = asyncio.create_task(table.run_round())

    def bob_streamed() -> bool:
        return any(m.meta.get("seat") == "bob" and m.status == "streaming" and m.content for m in table.messages())

    await until(None, bob_streamed, "bob's partial answer")
    assert table.cancel_seat("bob")
    result = await running
    by_seat = {a.seat: a for a in result.answers}
    assert by_seat["alice"].ok and by_seat["carol"].ok
    assert by_seat["bob"].message.status == "interrupted" and by_seat["bob"].error == "cancelled by you"
    assert by_seat["bob"].message.content, "its partial text is kept"
    assert not table.cancel_seat("bob"), "nothing left to cancel"
    rt.close()


async def test_re_running_one_seat_replaces_only_its_answer(harness: Harness) -> None:
    harness.set_script(**{"seat:alice": [said(ALICE)], "seat:bob": [{"text": "", "crash": True}, said(BOB)],
                          "seat:carol": [said(CAROL)]})
    rt = runtime(harness)
    table = convene(rt, *_seats())
    first = await table.run_round()
    old_bob = first.answers[1]
    assert not old_bob.ok and [a.seat for a in first.failed] == ["bob"]
    before = {a.seat: (a.message.id, a.message.content) for a in first.answers if a.seat != "bob"}
    new_bob = await table.rerun_seat("bob")
    assert new_bob.ok and new_bob.message.content == BOB and new_bob.round == 1
    assert new_bob.prompt == old_bob.prompt, "it is sent exactly what it was sent the first time"
    assert rt.store.get_message(old_bob.message.id) is None
    assert {a.seat: (a.message.id, a.message.content) for a in table.answers() if a.seat != "bob"} == before
    assert [a.seat for a in table.answers()] == ["alice", "bob", "carol"]
    assert "**bob** (critic): I disagree with alice on timing" in table.brief()
    with pytest.raises(RoundtableError, match="no answer to re-run"):
        await table.rerun_seat("carol", round_number=7)
    rt.close()


async def test_a_failing_seat_is_recorded_and_the_round_completes(harness: Harness) -> None:
    harness.set_script(**{"seat:alice": [said(ALICE)], "seat:bob": [{"text": "", "auth_401": True}],
                          "seat:dave": [{"text": "", "crash": True}]})
    rt = runtime(harness)
    table = convene(rt, Seat("alice", "fclaude"), Seat("bob", "fcodex", "critic"), Seat("carol", "gone", "judge"),
                    Seat("dave", "fclaude", "judge"), mode="deliberative")
    result = await table.run_round()
    by_seat = {a.seat: a for a in result.answers}
    assert by_seat["alice"].ok
    assert {name: by_seat[name].message.error_kind for name in ("bob", "carol", "dave")} == {
        "bob": "auth_rejected", "carol": "binary_missing", "dave": "crashed"}
    assert all(by_seat[name].error for name in ("bob", "carol", "dave"))
    brief = table.brief()
    assert "**alice**" in brief and "**bob**" not in brief and "**carol**" not in brief
    rt.close()


async def test_the_users_word_between_rounds_reaches_every_seat_next_round(harness: Harness) -> None:
    harness.set_script(**{"seat:alice": [said(ALICE)], "seat:bob": [said(BOB)], "seat:carol": [said(CAROL)]})
    rt = runtime(harness)
    table = convene(rt, *_seats())
    await table.run_round()
    with pytest.raises(RoundtableError, match="empty"):
        table.add_user_message("  ")
    table.add_user_message("Assume the migrations are frozen until March.")
    second = await table.run_round()
    assert second.round == 2, "the user's word takes no round of its own"
    for answer in second.answers:
        assert "## The moderator (the user) says\nAssume the migrations are frozen until March." in answer.prompt
    carol = second.answers[2]
    assert ALICE not in carol.prompt and BOB not in carol.prompt and "## Project" not in carol.prompt
    assert ALICE in second.answers[1].prompt, "earlier rounds reach the sighted seats (in full: no model here)"
    rt.close()


async def test_rounds_count_on_after_the_users_word_and_a_ranking(harness: Harness) -> None:
    harness.set_script(**{"seat:alice": [said(ALICE)] * 4, "seat:bob": [said(BOB)] * 4})
    rt = runtime(harness)
    table = convene(rt, Seat("alice", "fclaude"), Seat("bob", "fcodex", "critic"))
    assert [(await table.run_round()).round for _ in range(2)] == [1, 2]
    table.add_user_message("Weigh the memory cost first.")
    third = await table.run_round()
    assert third.round == 3, "rounds 1, 2, then 3: the moderator's word is no round"
    assert all("Weigh the memory cost first." in a.prompt for a in third.answers)
    assert table.user_turns() == ((3, "Weigh the memory cost first."),), "stored under the round it went to"
    assert table.seat_rounds() == (1, 2, 3)
    reopened = Roundtable.open(rt, table.branch.id)
    assert reopened.last_round() == 3, "a second process reading the store counts the same"
    table.add_user_message("Now the cache.")
    fourth = await reopened.run_round()
    assert fourth.round == 4 and all("Now the cache." in a.prompt for a in fourth.answers)
    assert all("Weigh the memory cost first." not in a.prompt.split("## The moderator")[-1]
               for a in fourth.answers), "an earlier word is not repeated as the moderator's latest"
    rt.close()


async def test_seats_are_added_and_removed_between_rounds_only(harness: Harness) -> None:
    harness.set_script(**{"seat:alice": [said(ALICE)], "seat:bob": [said(BOB)], "seat:erin": [said("Erin here.")]})
    rt = runtime(harness)
    table = convene(rt, Seat("alice", "fclaude"), Seat("bob", "fcodex", "critic"))
    await table.run_round()
    table.add_seat(Seat("erin", "fclaude", "synthesizer"))
    table.remove_seat("bob")
    with pytest.raises(SeatSpecError, match="unknown engine 'nope'"):
        table.add_seat(Seat("zed", "nope"))
    with pytest.raises(SeatSpecError, match="two seats are called"):
        table.add_seat(Seat("ALICE", "fclaude"))
    second = await table.run_round()
    assert [a.seat for a in second.answers] == ["alice", "erin"]
    reopened = Roundtable.open(rt, table.branch.id)
    assert [s.name for s in reopened.setup.seats] == ["alice", "erin"], "the line-up is stored"
    running = asyncio.create_task(table.run_round())
    await until(None, lambda: table.running, "the third round to start")
    with pytest.raises(RoundtableError, match="a round is running"):
        table.add_seat(Seat("frank", "fclaude"))
    with pytest.raises(RoundtableError, match="a round is running"):
        table.remove_seat("erin")
    await running
    table.remove_seat("erin")
    with pytest.raises(RoundtableError, match="last seat"):
        table.remove_seat("alice")
    rt.close()


async def test_adopting_a_roundtable_inserts_its_brief(harness: Harness) -> None:
    consensus = ("Most agree.\n\n<!-- tunaflow:consensus -->\nconsensus:\n- Split later\ncontested:\n- Timing\n"
                 "<!-- /tunaflow:consensus -->\n")
    harness.set_script(**{"seat:alice": [said(ALICE)], "seat:bob": [said(BOB)], "seat:sam": [said(consensus)]})
    rt = runtime(harness)
    table = convene(rt, Seat("alice", "fclaude"), Seat("bob", "fcodex", "critic"),
                    Seat("sam", "fclaude", "synthesizer"))
    await table.run_round()
    brief = table.brief()
    assert rt.store.list_memos(kind="roundtable_brief", branch_id=table.branch.id)[-1].content == brief
    adoption = await rt.adopt_branch(table.branch.id)
    assert adoption.record.conversation_id == "main"
    assert adoption.record.meta["summary_source"] == "roundtable_brief"
    assert "## Key Positions\n- **alice** (proposer): Split it into three modules now." in adoption.record.content
    assert "- **sam** (synthesizer): Most agree." in adoption.record.content
    assert "- Split later" in adoption.record.content and "- Timing" in adoption.record.content
    with pytest.raises(RoundtableError, match="adopted; restore it first"):
        await Roundtable.open(rt, table.branch.id).run_round()
    rt.close()


async def test_stopping_cancels_the_running_seats_and_starts_no_other(harness: Harness) -> None:
    harness.set_script(**{"seat:alice": [said(ALICE)], "seat:bob": [{"text": BOB, "hang_after_partial": 120}],
                          "seat:carol": [said(CAROL)]})
    rt = runtime(harness)
    table = convene(rt, Seat("alice", "fclaude"), Seat("bob", "fclaude", "critic"), Seat("carol", "fclaude", "judge"))
    running = asyncio.create_task(table.run(3))
    await until(None, lambda: table.seat_running("bob"), "bob to answer")
    assert table.stop() == 1
    results = await running
    assert len(results) == 1 and results[0].stopped, "no further round started"
    assert [(a.seat, a.message.status, a.error) for a in results[0].answers] == [
        ("alice", "done", ""), ("bob", "interrupted", "stopped by you")], "carol, still to speak, never started"
    assert not any(call["seat"] == "carol" for call in harness.calls())
    rt.close()


async def test_a_roundtable_branch_takes_no_architect_turn(harness: Harness) -> None:
    harness.set_script(**{"seat:alice": [said(ALICE)]})
    rt = runtime(harness)
    table = convene(rt, Seat("alice", "fclaude"))
    with pytest.raises(BranchError, match="is a roundtable"):
        await rt.send_user_message("hello?", table.conversation_id)
    assert [m.meta.get("kind") for m in table.messages()] == ["roundtable_topic"], "nothing was stored"
    rt.close()

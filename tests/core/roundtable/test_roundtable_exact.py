"""Roundtable building blocks to the character: what a seat and a ranker are sent, set-ups stored and read back,
the limits of a seat and the words of each refusal, Borda points and the stored ranking."""

from __future__ import annotations

import re

import pytest

from tunaflow_tui.core.roundtable.ranking import RankedLine, RankingResult, borda, parse_ranking
from tunaflow_tui.core.roundtable.seat_prompts import (
    EarlierRounds,
    PromptParts,
    SpokenAnswer,
    ballot_letters,
    build_seat_prompt,
    full_transcript,
    ranking_prompt,
)
from tunaflow_tui.core.roundtable.seats import (
    CUSTOM,
    MAX_NAME_CHARS,
    MAX_OUTPUT_LIMIT,
    MAX_ROLE_TEXT_CHARS,
    MIN_OUTPUT_LIMIT,
    RoundtableSetup,
    Seat,
    SeatSpecError,
    parse_seat_spec,
)


def test_the_ranking_prompt_reads_exactly_so() -> None:
    prompt = ranking_prompt(Seat("alice", "claude"), "  Split the store?  ",
                            [("A", " Keep one module. "), ("B", "Split now.")])
    assert prompt == (
        "[Output limit: Keep your response under approximately 300 tokens.]\n\n"
        "You are alice. Rank the other participants' answers on this topic, best first. "
        "They are anonymous; judge the content only.\n\n"
        "## Topic\nSplit the store?\n\n"
        "## Answers\n### Answer A\nKeep one module.\n\n### Answer B\nSplit now.\n\n"
        "Reply with exactly one line per answer (A, B), best first, each with one line of reason:\n"
        "1. A — <one line: why this place>\n2. B — <one line: why this place>")
    short = ranking_prompt(Seat("bob", "codex", output_limit=100), "t", [("A", "x")])
    assert short.startswith("[Output limit: Keep your response under approximately 100 tokens.]")


def test_the_full_transcript_puts_the_moderator_first_in_a_round_and_keeps_the_answers_order() -> None:
    answers = [SpokenAnswer("carol", "judge", 2, "C."), SpokenAnswer("alice", "proposer", 1, "A."),
               SpokenAnswer("bob", "critic", 2, "B.")]
    assert full_transcript(answers, [(2, " Focus on tests. ")]) == (
        "### alice (proposer), round 1\nA.\n\n"
        "### The moderator (the user), round 2\nFocus on tests.\n\n"
        "### carol (judge), round 2\nC.\n\n"
        "### bob (critic), round 2\nB.")


def test_a_seat_prompt_names_full_earlier_rounds_and_separates_this_rounds_answers() -> None:
    parts = PromptParts(topic="Split?", round=3, participants=("alice", "bob", "carol"),
                        earlier=EarlierRounds("### alice (proposer), round 1\nA.", compressed=False),
                        this_round=(SpokenAnswer("alice", "proposer", 3, "A3."), SpokenAnswer("bob", "critic", 3, "B3.")))
    prompt = build_seat_prompt(Seat("carol", "claude", "judge"), parts)
    assert "\n\n## Earlier rounds\n### alice (proposer), round 1\nA.\n\n" in prompt
    assert ("## This round so far\n### alice (proposer), round 3\nA3.\n\n### bob (critic), round 3\nB3.\n\n"
            "Give your answer now, as carol.") in prompt


def test_a_set_up_is_stored_and_read_back_whole() -> None:
    setup = RoundtableSetup(topic="Split?", mode="deliberative", seats=(
        Seat("alice", "claude", CUSTOM, "security auditor", blind=True, model="opus", output_limit=1200),
        Seat("bob", "codex", "critic")))
    stored = setup.to_json()
    assert stored == {"topic": "Split?", "mode": "deliberative", "seats": [
        {"name": "alice", "engine": "claude", "role": CUSTOM, "role_text": "security auditor", "blind": True,
         "model": "opus", "output_limit": 1200, "output_limit_given": True},
        {"name": "bob", "engine": "codex", "role": "critic", "role_text": "", "blind": False, "model": "",
         "output_limit": 600, "output_limit_given": False}]}
    assert RoundtableSetup.from_json(stored) == setup
    assert RoundtableSetup.from_json({"topic": "t", "seats": [{"name": "a", "engine": "e"}]}).mode == "sequential"
    assert setup.seat("BOB") is setup.seats[1]
    with pytest.raises(SeatSpecError, match=r"^there is no seat 'dave' \(seats: alice, bob\)$"):
        setup.seat("dave")
    assert setup.with_seats([setup.seats[1]]) == RoundtableSetup("Split?", (setup.seats[1],), "deliberative")


def test_the_limits_of_a_seat_are_inclusive() -> None:
    assert Seat("a" * MAX_NAME_CHARS, "claude").name == "a" * MAX_NAME_CHARS
    assert Seat("a", "claude", output_limit=MIN_OUTPUT_LIMIT).limit == MIN_OUTPUT_LIMIT
    assert Seat("a", "claude", output_limit=MAX_OUTPUT_LIMIT).limit == MAX_OUTPUT_LIMIT
    role = "r" * MAX_ROLE_TEXT_CHARS
    assert parse_seat_spec(f"a=claude:{role}").role_text == role


@pytest.mark.parametrize(("make", "message"), [
    (lambda: Seat("", "claude"), "a seat needs a name (NAME=ENGINE)"),
    (lambda: Seat("a", " "), "seat 'a' names no engine"),
    (lambda: Seat("a", "claude", "boss"), "seat 'a': unknown role 'boss'"),
    (lambda: Seat("a", "claude", CUSTOM), "seat 'a': a custom role needs its text"),
    (lambda: Seat("a", "claude", output_limit=MIN_OUTPUT_LIMIT - 1),
     f"seat 'a': the output limit must be between {MIN_OUTPUT_LIMIT} and {MAX_OUTPUT_LIMIT} tokens"),
    (lambda: parse_seat_spec("a=claude:" + "r" * (MAX_ROLE_TEXT_CHARS + 1)),
     f"a custom role is at most {MAX_ROLE_TEXT_CHARS} characters"),
    (lambda: RoundtableSetup(" ", (Seat("a", "claude"),)), "the topic is empty"),
    (lambda: RoundtableSetup("t", ()), "a roundtable needs at least one seat (--seat NAME=ENGINE)"),
])
def test_each_refusal_says_exactly_what_is_wrong(make: object, message: str) -> None:
    with pytest.raises(SeatSpecError, match=f"^{re.escape(message)}$"):
        make()  # type: ignore[operator]


def test_seat_specs_split_at_the_first_equals_and_blind_only_after_the_engine() -> None:
    assert parse_seat_spec("alice=blind") == Seat("alice", "blind")
    assert parse_seat_spec("a=b=c") == Seat("a", "b=c"), "the name ends at the first '='"
    assert parse_seat_spec("alice=claude:critic:blind") == Seat("alice", "claude", "critic", blind=True)
    with pytest.raises(SeatSpecError, match="cannot contain ':'"):
        parse_seat_spec("alice=claude:critic:x")


def test_borda_points_are_exact() -> None:
    # on a ballot of n answers, first place scores n and last place 1
    assert borda({"alice": ["bob", "carol"], "bob": ["carol", "alice"], "carol": ["alice", "bob"]},
                 ["alice", "bob", "carol"]) == (("alice", 3), ("bob", 3), ("carol", 3))
    assert borda({"alice": ["bob", "carol"], "bob": ["carol", "alice"]}, ["alice", "bob", "carol", "dave"]) == (
        ("carol", 3), ("bob", 2), ("alice", 1), ("dave", 0))
    assert borda({"x": ["late"]}, ["alice"]) == (("late", 1), ("alice", 0)), "a seat not listed still counts"


def test_a_ranking_reads_past_lines_it_cannot_use() -> None:
    text = "Here is my ranking:\n1. Z — not an answer here\n1. B — clearer\n2. A — vaguer\n"
    assert parse_ranking(text, ["A", "B"]) == (("B", "clearer"), ("A", "vaguer"))


def test_a_ranking_result_is_stored_whole() -> None:
    result = RankingResult(scores=(("bob", 2), ("alice", 1)),
                           rankings={"carol": (RankedLine("bob", "B", "clearer"), RankedLine("alice", "A", "vaguer"))},
                           left_out={"dave": "no ranking"}, ballots={"carol": {"A": "alice", "B": "bob"}})
    assert result.to_json() == {
        "scores": [{"seat": "bob", "points": 2}, {"seat": "alice", "points": 1}],
        "rankings": {"carol": [{"place": 1, "seat": "bob", "label": "B", "reason": "clearer"},
                               {"place": 2, "seat": "alice", "label": "A", "reason": "vaguer"}]},
        "left_out": {"dave": "no ranking"},
        "labels": {"carol": {"A": "alice", "B": "bob"}},
    }


def test_two_words_of_the_moderator_in_one_round_keep_their_order() -> None:
    assert full_transcript([], [(2, "Zoom out first."), (2, "Also: a deadline.")]) == (
        "### The moderator (the user), round 2\nZoom out first.\n\n"
        "### The moderator (the user), round 2\nAlso: a deadline.")


def test_the_letters_a_ranking_prompt_asks_for_are_read_back_in_order_and_no_other_prompt_has_any() -> None:
    """What a stand-in agent (the demo's) ranks: the letters of the ranking prompt, nothing from any other prompt."""
    prompt = ranking_prompt(Seat("alice", "claude"), "Split the store?", [("B", "keep it"), ("A", "split it")])
    assert ballot_letters(prompt) == ["B", "A"]
    assert ballot_letters("### Answer A\nwhat do you think?") is None, "headings alone are not a ranking prompt"
    assert ballot_letters(prompt.split("### Answer")[0]) is None, "a ranking request with no answers shown"

"""Roundtable building blocks: seat specs, prompts per role and blindness, brief, references, ranking."""

from __future__ import annotations

import random

import pytest

from tunaflow_tui.core.markers import Consensus
from tunaflow_tui.core.roundtable.brief import Position, build_brief, first_sentences
from tunaflow_tui.core.roundtable.ranking import borda, make_ballots, parse_ranking
from tunaflow_tui.core.roundtable.references import responds_to
from tunaflow_tui.core.roundtable.seat_prompts import (
    EarlierRounds,
    PromptParts,
    SpokenAnswer,
    build_seat_prompt,
    full_transcript,
    ranking_prompt,
)
from tunaflow_tui.core.roundtable.seats import (
    CUSTOM,
    RoundtableSetup,
    Seat,
    SeatSpecError,
    parse_seat_spec,
)

# ----------------------------------------------------------------------------- seat specs


@pytest.mark.parametrize(("spec", "expected"), [
    ("alice=claude", Seat("alice", "claude", "proposer")),
    ("bob=codex:critic", Seat("bob", "codex", "critic")),
    ("bob=codex:reviewer", Seat("bob", "codex", "critic")),
    ("carol=gemini:verifier:blind", Seat("carol", "gemini", "judge", blind=True)),
    ("dave=claude:lead", Seat("dave", "claude", "synthesizer")),
    ("eve=claude:blind", Seat("eve", "claude", "proposer", blind=True)),
    ("sec=codex:security auditor:blind", Seat("sec", "codex", CUSTOM, "security auditor", blind=True)),
])
def test_seat_specs_are_read_with_role_aliases_custom_roles_and_blind(spec: str, expected: Seat) -> None:
    assert parse_seat_spec(spec) == expected


@pytest.mark.parametrize(("spec", "message"), [
    ("alice", "write NAME=ENGINE"),
    ("=claude", "needs a name"),
    ("alice=", "no engine"),
    ("alice=claude:", "empty role"),
    ("a b=claude", "may hold only letters"),
    ("alice=claude:a:b:c", "cannot contain ':'"),
    ("x" * 41 + "=claude", "longer than 40"),
])
def test_bad_seat_specs_say_what_is_wrong(spec: str, message: str) -> None:
    with pytest.raises(SeatSpecError, match=message):
        parse_seat_spec(spec)


def test_a_setup_needs_a_topic_seats_unique_names_and_a_known_mode() -> None:
    seat = Seat("alice", "claude")
    with pytest.raises(SeatSpecError, match="topic is empty"):
        RoundtableSetup(topic=" ", seats=(seat,))
    with pytest.raises(SeatSpecError, match="at least one seat"):
        RoundtableSetup(topic="t", seats=())
    with pytest.raises(SeatSpecError, match="two seats are called"):
        RoundtableSetup(topic="t", seats=(seat, Seat("ALICE", "codex")))
    with pytest.raises(SeatSpecError, match="unknown mode"):
        RoundtableSetup(topic="t", seats=(seat,), mode="parallel")
    setup = RoundtableSetup(topic="t", seats=(seat, Seat("bob", "codex", "critic", blind=True, output_limit=300)))
    assert RoundtableSetup.from_json(setup.to_json()) == setup


# ----------------------------------------------------------------------------- prompts
PARTS = PromptParts(
    topic="Split the store into modules?", round=2, participants=("alice", "bob", "carol"),
    project_context="Project: calc (/src/calc)\nActive plan: none.",
    earlier=EarlierRounds("[alice, round 1]\nKeep one module.", compressed=True),
    moderator="Focus on migrations.",
    this_round=(SpokenAnswer("alice", "proposer", 2, "Split it in three."),),
)


def test_a_critic_sees_limit_guidance_context_excerpts_moderator_and_this_round() -> None:
    prompt = build_seat_prompt(Seat("bob", "codex", "critic"), PARTS)
    assert prompt == (
        "[Output limit: Keep your response under approximately 600 tokens.]\n\n"
        "You are bob, a participant in a roundtable discussion with alice, carol (round 2).\n"
        "Your role: critic.\n"
        "Evaluate the proposals on the four rubric dimensions — plan_coverage, code_quality, test_coverage, "
        "convention — with a score from 1 to 5 and one line of reason each. State your overall judgement in your "
        "first two sentences, then the scores, then the most important change you ask for.\n"
        "Do not edit any file; answer in prose.\n\n"
        "## Project\nProject: calc (/src/calc)\nActive plan: none.\n\n"
        "## Topic\nSplit the store into modules?\n\n"
        "## Earlier rounds (the most relevant excerpts)\n[alice, round 1]\nKeep one module.\n\n"
        "## The moderator (the user) says\nFocus on migrations.\n\n"
        "## This round so far\n### alice (proposer), round 2\nSplit it in three.\n\n"
        "Give your answer now, as bob."
    )


def test_a_blind_seat_gets_the_topic_its_role_and_the_moderator_only() -> None:
    prompt = build_seat_prompt(Seat("carol", "gemini", "judge", blind=True), PARTS)
    assert prompt == (
        "[Output limit: Keep your response under approximately 500 tokens.]\n\n"
        "You are carol, a participant in a roundtable discussion (round 2).\n"
        "Your role: judge.\n"
        "Judge independently: form your own assessment from the topic and the evidence, and do not defer to the "
        "other participants' opinions or scores. State your verdict in your first two sentences, then your "
        "reasons.\n"
        "You answer independently: you are not shown the other participants' answers.\n"
        "Do not edit any file; answer in prose.\n\n"
        "## Topic\nSplit the store into modules?\n\n"
        "## The moderator (the user) says\nFocus on migrations.\n\n"
        "Give your answer now, as carol."
    )


@pytest.mark.parametrize(("seat", "limit", "words"), [
    (Seat("p", "claude", "proposer"), 800, "State your conclusion first"),
    (Seat("s", "claude", "synthesizer"), 900, "<!-- tunaflow:consensus -->"),
    (Seat("c", "claude", CUSTOM, "Play the devil's advocate.", output_limit=120), 120, "Play the devil's advocate."),
])
def test_every_role_states_its_limit_first_and_its_guidance(seat: Seat, limit: int, words: str) -> None:
    prompt = build_seat_prompt(seat, PARTS)
    assert prompt.startswith(f"[Output limit: Keep your response under approximately {limit} tokens.]\n\n")
    assert words in prompt


def test_the_full_transcript_keeps_round_order_with_the_moderator() -> None:
    text = full_transcript([SpokenAnswer("alice", "proposer", 1, "A."), SpokenAnswer("bob", "critic", 3, "B.")],
                           [(2, "Consider B.")])
    assert text.index("alice") < text.index("Consider B.") < text.index("bob (critic), round 3")


def test_the_ranking_prompt_shows_letters_never_names() -> None:
    prompt = ranking_prompt(Seat("alice", "claude"), "topic", [("A", "bob's idea"), ("B", "carol's idea")])
    assert "### Answer A\nbob's idea" in prompt and "### Answer B\ncarol's idea" in prompt
    assert "bob " not in prompt.replace("bob's idea", "") and "carol" not in prompt.replace("carol's idea", "")


# ----------------------------------------------------------------------------- brief
def test_first_sentences_in_english_korean_and_indonesian() -> None:
    assert first_sentences("Split the store. Keep the API. Then migrate.") == "Split the store. Keep the API."
    assert first_sentences("모듈을 세 개로 나누자. 경계가 모호하다. 테스트가 부족하다.") == "모듈을 세 개로 나누자. 경계가 모호하다."
    assert first_sentences("Mari pisahkan menjadi 3 modul. Batas modul samar-samar! Cakupan tes kurang?") \
        == "Mari pisahkan menjadi 3 modul. Batas modul samar-samar!"
    assert first_sentences("日本語の文です。二つ目です。三つ目。") == "日本語の文です。二つ目です。"


def test_first_sentences_drop_markdown_and_stay_under_300_characters() -> None:
    assert first_sentences("## Conclusion\n- **Use SQLite** for 3.5 reasons.\n- Then `ship`.\n- Never.") \
        == "Conclusion Use SQLite for 3.5 reasons. Then ship."
    long = "word " * 200
    cut = first_sentences(long)
    assert len(cut) <= 300 and cut.endswith("…")


def test_the_brief_lists_key_positions_and_the_consensus() -> None:
    brief = build_brief("Split the store?", [
        Position("alice", "proposer", "Split it in three. Reasons follow. More."),
        Position("budi", "critic", "Batas modul samar-samar. Perlu antarmuka. Lagi."),
        Position("minji", "judge", "경계가 모호하다. 테스트가 부족하다. 끝."),
    ], Consensus(consensus=("Split storage",), contested=("Naming",), dissent=("budi: keep one module",)))
    assert brief.splitlines()[2:6] == [
        "## Key Positions",
        "- **alice** (proposer): Split it in three. Reasons follow.",
        "- **budi** (critic): Batas modul samar-samar. Perlu antarmuka.",
        "- **minji** (judge): 경계가 모호하다. 테스트가 부족하다.",
    ]
    assert "## Consensus" in brief and "- Split storage" in brief and "- budi: keep one module" in brief
    assert brief.count("Consensus") == 1, "the heading, not a heading then **Consensus** under it"
    assert brief.splitlines()[brief.splitlines().index("## Consensus") + 1:][:2] == ["**Agreed**", "- Split storage"]


# ----------------------------------------------------------------------------- references
def test_an_answer_responds_to_the_speakers_it_names_or_quotes() -> None:
    earlier = {"alice": "We should split the store into three modules now.", "bob": "The boundary is vague.",
               "carol": "Tests are thin."}
    answer = 'As Alice said, "split the store into three modules" — but I disagree with nobody else.'
    assert responds_to(answer, "dave", earlier) == ("alice",)
    assert responds_to("> The boundary is vague.\nI agree.", "dave", earlier) == ("bob",)
    assert responds_to("alice and bob are right", "alice", earlier) == ("bob",), "never itself"
    assert responds_to("Alicent and bobby disagree", "dave", earlier) == (), "whole words only"


# ----------------------------------------------------------------------------- ranking
def test_each_ballot_shuffles_the_others_and_never_shows_the_voter() -> None:
    answers = {name: f"{name}'s answer" for name in ("a1", "b2", "c3", "d4", "e5")}
    ballots = make_ballots(answers, random.Random(3))
    orders = set()
    for ballot in ballots:
        assert ballot.voter not in ballot.labels.values()
        assert list(ballot.labels) == ["A", "B", "C", "D"]
        assert sorted(ballot.labels.values()) == sorted(set(answers) - {ballot.voter})
        orders.add(tuple(ballot.labels.values()))
    assert len(orders) > 1, "orders differ between voters"


def test_a_ranking_must_place_every_letter_once() -> None:
    assert parse_ranking("1. B — clearest\n2. **A**: vague\n", ["A", "B"]) == (("B", "clearest"), ("A", "vague"))
    assert parse_ranking("Answer C - best\nAnswer A - fine\nAnswer B - weak", ["A", "B", "C"]) == (
        ("C", "best"), ("A", "fine"), ("B", "weak"))
    assert parse_ranking("1. A — good", ["A", "B"]) is None, "B is missing"
    assert parse_ranking("1. A — good\n2. A — again\n3. B — x", ["A", "B"]) is None, "A twice"
    assert parse_ranking("I refuse to rank.", ["A", "B"]) is None


def test_borda_gives_n_for_first_place_and_one_for_last() -> None:
    scores = borda({"a": ["b", "c"], "b": ["a", "c"], "c": ["b", "a"]}, ["a", "b", "c"])
    assert scores == (("b", 4), ("a", 3), ("c", 2))


def test_a_two_seat_ranking_scores_the_votes_it_got() -> None:
    assert borda({"a": ["b"], "b": ["a"]}, ["a", "b"]) == (("a", 1), ("b", 1))
    assert borda({"a": ["b"]}, ["a", "b"]) == (("b", 1), ("a", 0)), "b's ballot was left out: a got no vote"


def test_a_table_of_thirty_seats_puts_all_twenty_nine_other_answers_on_every_ballot() -> None:
    answers = {f"seat{i:02}": f"answer {i}" for i in range(30)}
    ballots = make_ballots(answers, random.Random(5))
    for ballot in ballots:
        assert sorted(ballot.labels.values()) == sorted(set(answers) - {ballot.voter}), "no answer left out"
        assert list(ballot.labels)[24:] == ["Y", "Z", "AA", "AB", "AC"]
    ballot = ballots[0]
    reply = "\n".join(f"{place}. {label} — reason {place}" for place, label in enumerate(reversed(ballot.labels), 1))
    parsed = parse_ranking(reply, list(ballot.labels))
    assert parsed is not None and [label for label, _r in parsed][:3] == ["AC", "AB", "AA"]
    assert parsed[0][1] == "reason 1"
    assert parse_ranking(reply.replace("AB —", "B —"), list(ballot.labels)) is None, "AB missing, B twice"

"""Reciprocal rank fusion on hand-made rankings."""

from __future__ import annotations

import pytest

from tunaflow_tui.core.memory.fusion import rank_owners, reciprocal_rank_fusion


def test_an_id_both_lists_agree_on_beats_each_lists_own_winner() -> None:
    fused = reciprocal_rank_fusion({"fts": ["a", "b", "c"], "vector": ["d", "b", "a"]})
    assert [hit.id for hit in fused] == ["a", "b", "d", "c"]
    a, b, d, c = fused
    assert a.score == pytest.approx(1 / 61 + 1 / 63)
    assert b.score == pytest.approx(2 / 62)
    assert a.ranks == {"fts": 1, "vector": 3} and a.sources == ("fts", "vector")
    assert d.sources == ("vector",) and c.ranks == {"fts": 3}


def test_ties_are_broken_by_best_rank_then_first_appearance() -> None:
    fused = reciprocal_rank_fusion({"fts": ["x", "y"], "vector": ["y", "x"]})
    assert [hit.id for hit in fused] == ["x", "y"]  # equal scores, equal best rank: x appeared first
    fused = reciprocal_rank_fusion({"fts": ["p", "q"], "vector": ["r"]})
    assert [hit.id for hit in fused] == ["p", "r", "q"]  # p and r tie at 1/61; p's list came first
    assert [hit.id for hit in reciprocal_rank_fusion({"vector": ["r"], "fts": ["p", "q"]})] == ["r", "p", "q"]


def test_an_id_repeated_within_one_list_counts_once_at_its_best_position() -> None:
    fused = reciprocal_rank_fusion({"vector": ["m1", "m2", "m1", "m1"]})
    assert [(hit.id, hit.ranks) for hit in fused] == [("m1", {"vector": 1}), ("m2", {"vector": 2})]
    fused = reciprocal_rank_fusion({"vector": ["m1", "m1", "m2", "m3"]})  # the list goes on after a repeat
    assert [(hit.id, hit.ranks) for hit in fused] == [("m1", {"vector": 1}), ("m2", {"vector": 3}),
                                                      ("m3", {"vector": 4})]


def test_unnamed_lists_weights_k_and_limit() -> None:
    fused = reciprocal_rank_fusion([[1, 2], [2, 3]], k=0)
    assert [hit.id for hit in fused] == [2, 1, 3] and fused[0].score == pytest.approx(1 / 2 + 1 / 1)
    assert fused[0].ranks == {"0": 2, "1": 1}
    weighted = reciprocal_rank_fusion({"fts": [1], "vector": [2]}, weights={"vector": 2.0})
    assert [hit.id for hit in weighted] == [2, 1]
    assert len(reciprocal_rank_fusion({"a": list(range(100))}, limit=10)) == 10
    assert reciprocal_rank_fusion({}) == [] and reciprocal_rank_fusion({"fts": []}) == []
    assert reciprocal_rank_fusion({"a": [1, 2]}, limit=0) == []
    assert reciprocal_rank_fusion({"a": [1, 2]}, limit=-3) == []
    with pytest.raises(ValueError, match=r"^k must not be negative$"):
        reciprocal_rank_fusion({"a": [1]}, k=-1)


def test_chunk_hits_collapse_to_their_messages() -> None:
    owner = {"m1#0": "m1", "m1#1": "m1", "m2#0": "m2", "m3#4": "m3"}
    assert rank_owners(["m2#0", "m1#1", "m2#0", "m1#0", "m3#4"], owner.__getitem__) == ["m2", "m1", "m3"]

"""Full-text search: kept in sync with edits and deletions, multilingual, safe with any input."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tunaflow_tui.core.storage import Store
from tunaflow_tui.core.storage.search_query import SNIPPET_END, SNIPPET_START


def _ids(store: Store, query: str) -> list[int]:
    return [hit.message.id for hit in store.search_messages(query)]


def test_search_finds_words_across_conversations(store: Store) -> None:
    a = store.add_message("main", "user", "The migration broke the login page")
    branch = store.create_branch(conversation_id="main", checkpoint_id=a.id, parent_branch_id=None,
                                 mode="chat", kind="general", label="b")
    b = store.add_message(branch.shadow_conversation_id, "assistant", "Login handler fixed in the branch")
    store.add_message("main", "user", "unrelated text")
    assert sorted(_ids(store, "login")) == [a.id, b.id]
    assert _ids(store, "login migration") == [a.id]  # every word must appear
    assert _ids(store, "migr") == [a.id]  # word prefixes match
    hit = store.search_messages("handler")[0]
    assert f"{SNIPPET_START}handler{SNIPPET_END}" in hit.snippet
    assert hit.message == store.get_message(b.id)


def test_index_follows_updates_and_deletes(store: Store) -> None:
    msg = store.add_message("main", "assistant", "", status="streaming")
    assert _ids(store, "quokka") == []
    store.update_message(msg.id, content="a quokka appears")
    assert _ids(store, "quokka") == []  # a reply is searchable once it has finished
    store.update_message(msg.id, content="now a wombat instead", status="done")
    assert _ids(store, "quokka") == []
    assert _ids(store, "wombat") == [msg.id]
    branch = store.create_branch(conversation_id="main", checkpoint_id=msg.id, parent_branch_id=None,
                                 mode="chat", kind="general", label="b")
    shadow = store.add_message(branch.shadow_conversation_id, "user", "platypus in a branch")
    assert _ids(store, "platypus") == [shadow.id]
    store.delete_branch(branch.id)  # active branch: its messages go, and leave the index
    assert _ids(store, "platypus") == []
    assert _ids(store, "wombat") == [msg.id]


def test_korean_text_is_found(store: Store) -> None:
    ko = store.add_message("main", "user", "데이터베이스를 마이그레이션하고 로그인 화면을 고쳐 주세요")
    store.add_message("main", "user", "영어로만 된 다른 메시지")
    assert _ids(store, "로그인") == [ko.id]
    assert _ids(store, "데이터베이스") == [ko.id]  # a word followed by a particle still matches
    assert _ids(store, "화면을 로그인") == [ko.id]
    assert _ids(store, "없는단어") == []


def test_ranking_prefers_more_relevant_messages(store: Store) -> None:
    weak = store.add_message("main", "user", "cache " + "filler " * 40)
    strong = store.add_message("main", "user", "cache cache cache invalidation")
    hits = store.search_messages("cache")
    assert [h.message.id for h in hits] == [strong.id, weak.id]
    assert hits[0].rank <= hits[1].rank
    assert len(store.search_messages("cache", limit=1)) == 1


HOSTILE = [
    '"', '""', "'", "*", "a*", "*a", "AND", "OR", "NOT", "a AND", "NOT NOT", "NEAR(a b)", "NEAR(",
    "(", ")", "((a)", "content:a", "-a", "+a", "^a", "a:b:c", "{a b}:c", "col : x", "\\", "\x00",
    "'; DROP TABLE messages; --", '"unterminated', "a\"b'c", "😀", "🔥 fix", "ﬁ", "  ", "", "\n\t",
    "login\" OR \"x", "로그인\"", "\u200b", "a" * 5000,
]


def test_hostile_queries_never_raise(store: Store) -> None:
    target = store.add_message("main", "user", 'content: a "quoted" login NEAR the AND operator')
    for query in HOSTILE:
        hits = store.search_messages(query)
        assert all(h.message.id == target.id for h in hits), query
    assert _ids(store, '"quoted"') == [target.id]
    assert _ids(store, "AND") == [target.id]  # operators are searched for as words
    assert _ids(store, "NEAR(") == [target.id]
    assert store.count_messages("main") == 1


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(query=st.text(max_size=40))
def test_any_text_is_a_valid_query(store: Store, query: str) -> None:
    if not store.count_messages("main"):
        store.add_message("main", "user", "some searchable text 검색")
    for hit in store.search_messages(query):
        assert hit.message.conversation_id == "main"

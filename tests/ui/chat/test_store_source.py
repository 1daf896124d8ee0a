"""The chat's window onto the database: pages of a stored conversation, as the chat shows them."""

from __future__ import annotations

from pathlib import Path

from tunaflow_tui.controllers.sources import StoreMessageSource
from tunaflow_tui.core.storage import Store
from tunaflow_tui.core.turns import ToolLine


def _filled(tmp_path: Path, count: int) -> tuple[Store, list[int]]:
    store = Store.open(tmp_path)
    ids = []
    with store.transaction():
        for i in range(1, count + 1):
            if i % 2:
                ids.append(store.add_message("main", "user", f"question {i}").id)
            else:
                ids.append(store.add_message("main", "assistant", f"answer {i}\n<!-- tunaflow:impl-complete -->",
                                             persona="developer", engine="claude", model="sonnet").id)
    return store, ids


def test_window_and_after_page_a_long_conversation_in_order(tmp_path: Path) -> None:
    store, ids = _filled(tmp_path, 10_000)
    try:
        source = StoreMessageSource(store, "main")
        assert source.count() == 10_000
        newest = source.window(None, 20)
        assert [v.id for v in newest] == ids[-20:]
        older = source.window(newest[0].id, 20)
        assert [v.id for v in older] == ids[-40:-20]
        # reading far back, then paging forward again towards the newest
        deep = source.window(ids[100], 20)
        assert [v.id for v in deep] == ids[80:100]
        forward = source.after(deep[-1].id, 20)
        assert [v.id for v in forward] == ids[100:120]
        assert [v.id for v in source.after(ids[-3], 20)] == ids[-2:]
        assert source.after(ids[-1], 20) == []
    finally:
        store.close()


def test_views_show_labels_without_markers_and_keep_tools_seen_live(tmp_path: Path) -> None:
    store, ids = _filled(tmp_path, 4)
    try:
        tools = {ids[1]: (ToolLine("Edit", "calc.py"),)}
        source = StoreMessageSource(store, "main", tools)
        question, answer = source.window(ids[2], 2)
        assert question.label == "You" and question.content == "question 1"
        assert answer.label == "Developer · claude · sonnet"
        assert "<!--" not in answer.content and answer.content.strip() == "answer 2"
        assert answer.tools == (ToolLine("Edit", "calc.py"),)
    finally:
        store.close()

"""What each native session was sent: kept per (engine, session), once, visible to a second process."""

from __future__ import annotations

from pathlib import Path

import pytest

from tunaflow_tui.core.storage import Store
from tunaflow_tui.core.storage.deliveries import Delivered, DeliveryItem


def test_a_session_remembers_its_range_chunks_and_links_once(store: Store) -> None:
    store.add_message("main", "user", "hello")
    assert store.delivered("claude", "s1") == Delivered()
    items = [DeliveryItem("from", 3), DeliveryItem("through", 7), DeliveryItem("events", 2),
             DeliveryItem("summaries", 0), DeliveryItem("chunk", 5, 800), DeliveryItem("link", 4)]
    store.record_delivery("claude", "s1", "main", items)
    store.record_delivery("claude", "s1", "main", [DeliveryItem("from", 9), DeliveryItem("through", 12),
                                                   DeliveryItem("chunk", 5, 800)])
    got = store.delivered("claude", "s1")
    assert (got.from_id, got.through_id, got.events_through, got.summaries_through) == (3, 12, 2, 0)
    assert got.chunks == frozenset({(5, 800)}) and got.links == frozenset({4}) and got.known
    assert store.delivered("codex", "s1") == Delivered(), "another engine's session of the same id is another"
    with pytest.raises(ValueError):
        store.record_delivery("claude", "s1", "main", [DeliveryItem("message", 1)])


def test_a_renamed_session_keeps_what_it_was_sent(store: Store) -> None:
    store.add_message("main", "user", "hello")
    store.record_delivery("claude", "old", "main", [DeliveryItem("through", 7), DeliveryItem("chunk", 2, 0)])
    store.copy_deliveries("claude", "old", "new")
    assert store.delivered("claude", "new") == store.delivered("claude", "old")


def test_a_second_process_sees_what_the_first_recorded(project_dir: Path, store: Store) -> None:
    store.add_message("main", "user", "hello")
    with Store.open(project_dir) as other:
        other.record_delivery("claude", "s1", "main", [DeliveryItem("through", 1)])
    assert store.delivered("claude", "s1").through_id == 1

"""Record cards: how a record tunaflow wrote into a conversation shows in the chat, by ``meta["kind"]``.

A record is a system message with structured ``meta``. Each kind has its own module holding a
:class:`~tunaflow_tui.widgets.decision.records.record_card.RecordCard` subclass; :data:`RECORD_CARDS` maps the kind to
it. A message whose kind has no card here shows as an ordinary message (its text).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from tunaflow_tui.widgets.decision.records.adopt_record import AdoptCard
from tunaflow_tui.widgets.decision.records.decision_record import DecisionRecordCard
from tunaflow_tui.widgets.decision.records.record_card import RecordCard

RECORD_CARDS: dict[str, Callable[[Mapping[str, object]], RecordCard]] = {
    DecisionRecordCard.KIND: DecisionRecordCard,
    AdoptCard.KIND: AdoptCard,
}
"""The card of each record kind (add a kind: a module with a RecordCard subclass, and a line here)."""


def record_card(meta: Mapping[str, object]) -> RecordCard | None:
    """The card showing a record with this ``meta``, or None when it is not a record shown as a card."""
    make = RECORD_CARDS.get(str(meta.get("kind") or "")) if meta else None
    return make(meta) if make is not None else None


__all__ = ["RECORD_CARDS", "RecordCard", "record_card"]

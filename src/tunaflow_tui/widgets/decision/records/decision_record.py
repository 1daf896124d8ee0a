"""The record of a decision of the user's: a proposal approved or sent back, a verdict settled, a merge."""

from __future__ import annotations

from typing import ClassVar

from tunaflow_tui.core import decision_records
from tunaflow_tui.widgets.decision.records.record_card import RecordCard


class DecisionRecordCard(RecordCard):
    """``✓ You approved plan 1 “…” (revision 2) · 14:03``; unfolded: who, when, feedback, what was decided on."""

    KIND: ClassVar[str] = decision_records.DECISION_KIND

    def headline(self) -> str:
        return decision_records.headline(self.meta)

    def details(self) -> list[str]:
        return decision_records.detail_lines(self.meta)

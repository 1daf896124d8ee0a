"""The one error plan-document code raises."""

from __future__ import annotations


class PlanDocsError(ValueError):
    """A plan document cannot be written: invalid slug, or a path that would leave ``docs/plans/``."""

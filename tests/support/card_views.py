"""Sample views the card tests share: one plan proposal, as an Architect would write it."""

from __future__ import annotations

from tunaflow_tui.viewmodels.plan_rows import ProposalView, SubtaskView

RATE_LIMITING = ProposalView(
    plan_id=7,
    message_id=42,
    title="Add rate limiting to the public API",
    subtasks=(
        SubtaskView(1, "Token bucket middleware", "per API key, 100 req/min"),
        SubtaskView(2, "Configuration", "limits in settings.toml"),
        SubtaskView(3, "Tests", "burst and refill behaviour"),
    ),
    description="Protect the API from bursts by limiting requests per key.",
    expected_outcome="Requests above the limit get HTTP 429 with Retry-After.",
    constraints=("No new dependencies",),
)
"""A proposal with subtasks, a description, an expected outcome and a constraint (no non-goals)."""

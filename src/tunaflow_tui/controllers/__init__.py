"""Where the runtime, the store and the widgets meet: the app's controllers and their data sources.

A :class:`~tunaflow_tui.controllers.session.ProjectSession` composes one small controller per job
(conversation, decisions, outcomes, panes, project, tools, status, attention); see its module for
how a runtime event travels to the screen. The names are loaded on first use, so that opening the
app does not import the workflow runtime before the first frame (see
:mod:`tunaflow_tui.controllers.opener`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from tunaflow_tui.core.lazy_names import lazy_names

if TYPE_CHECKING:
    from tunaflow_tui.controllers.opener import ProjectOpener
    from tunaflow_tui.controllers.session import ProjectSession
    from tunaflow_tui.controllers.sources import StoreMessageSource, message_view

__all__ = ["ProjectOpener", "ProjectSession", "StoreMessageSource", "message_view"]

_HOMES = {
    "ProjectOpener": "tunaflow_tui.controllers.opener",
    "ProjectSession": "tunaflow_tui.controllers.session",
    "StoreMessageSource": "tunaflow_tui.controllers.sources",
    "message_view": "tunaflow_tui.controllers.sources",
}


__getattr__, __dir__ = lazy_names(__name__, _HOMES)

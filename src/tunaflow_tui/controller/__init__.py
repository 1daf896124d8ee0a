"""Where the runtime, the store and the widgets meet: the app's controller and its data sources."""

from tunaflow_tui.controller.runtime_controller import RuntimeController
from tunaflow_tui.controller.sources import StoreMessageSource, message_view

__all__ = ["RuntimeController", "StoreMessageSource", "message_view"]

"""DecisionScreen: a generic modal asking the user to pick one of a few labelled choices."""

from __future__ import annotations

from typing import ClassVar

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.events import Key
from textual.widget import Widget
from textual.widgets import Button, Static, TextArea

from tunaflow_tui.screens.dialog import DialogScreen
from tunaflow_tui.textual_compat import declared_bindings
from tunaflow_tui.widgets.decision import arming as arming_clock
from tunaflow_tui.widgets.decision.arming import PRESS_AGAIN

TYPED_BACK = "This question appeared while you were typing: your keys went to the composer. Press again to choose."


class DecisionScreen(DialogScreen[str | None]):
    """Show a question with choices `(key, label, value)`; dismisses with the chosen value.

    Pressing a choice's key or its button chooses it; escape dismisses with None ("decide later").
    A subclass may declare a choice as a binding whose action is ``choose('<value>')`` (with an id,
    so the keymap can move it); that choice then answers to the binding's keys only.

    Args:
        arming: Seconds during which the choice keys do nothing, for a question that appeared on
            its own: a key typed for something else must not answer it.  Characters typed in that
            time go to the input the user was writing in, and each one restarts the time.
        failure: The question follows a failure (a setup that broke, reviews that keep failing): its
            frame is drawn in the error colour rather than the question's.
    """

    DEFAULT_CSS = """
    DecisionScreen #body { margin-bottom: 1; }
    DecisionScreen #later { color: $text-muted; width: 1fr; height: auto; }
    DecisionScreen #choices { height: auto; margin-top: 1; }
    DecisionScreen #choices Button { margin-right: 1; }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "later", "Decide later", id="decision.later"),
    ]

    plan_id: int | None = None
    """The plan the question is about, when it is a plan's (set by whoever asks it)."""

    def __init__(self, title: str, body: str, choices: tuple[tuple[str, str, str], ...], *,
                 arming: float = 0.0, failure: bool = False) -> None:
        super().__init__(classes="-danger" if failure else "-question")
        self._title = title
        self._body = body
        self.choices = choices
        self.arming = arming
        # unarmed from the start (not only once mounted): keys can arrive before the first mount
        self._armed_at = arming_clock.now() + arming if arming > 0 else 0.0
        self._typing_in: Widget | None = None
        self._told = ""

    @property
    def is_armed(self) -> bool:
        """True when the choice keys answer the question."""
        return arming_clock.now() >= self._armed_at

    def _bound(self, value: str) -> Binding | None:
        """The binding that takes ``value``, if the screen declares one."""
        action = f"choose({value!r})"
        bindings = (b for group in declared_bindings(self).values() for b in group)
        return next((b for b in bindings if b.action == action), None)

    def _key_label(self, key: str, value: str) -> str:
        """The key shown on a choice's button: as the keymap has it now."""
        binding = self._bound(value)
        if binding is None:
            return key
        for active in self.active_bindings.values():
            if active.node is self and active.binding.action == binding.action:
                return self.app.get_key_display(active.binding)
        return key

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog") as dialog:
            # several plans can wait at once: the question names the one its keys decide on
            dialog.border_title = self._title if self.plan_id is None else f"Plan {self.plan_id} · {self._title}"
            yield Static(self._body, id="body", classes="dialog-text", markup=False)
            yield from self.compose_details()
            with Horizontal(id="choices"):
                for number, (key, label, value) in enumerate(self.choices):
                    yield Button(f"{label} ({self._key_label(key, value)})", id=f"choice-{number}",
                                 variant="primary" if number == 0 else "default")
            from tunaflow_tui.keyhints import key_for

            yield Static(f"{key_for(self.app, DecisionScreen, 'decision.later', words=True)} — decide later",
                         id="later", markup=False)

    def compose_details(self) -> ComposeResult:
        """Extra content between the body and the buttons (for subclasses)."""
        yield from ()

    def on_mount(self) -> None:
        if self.choices:
            self.query_one("#choice-0", Button).focus()
        if self.arming > 0:
            self._armed_at = arming_clock.now() + self.arming
            stack = self.app.screen_stack
            below = stack[stack.index(self) - 1] if self in stack and stack.index(self) > 0 else None
            self._typing_in = below.focused if below is not None else None

    def on_key(self, event: Key) -> None:
        """While arming, typed keys go back to where the user was typing; then a choice's key answers."""
        if not self.is_armed and (event.is_printable or event.key == "enter"):
            event.stop()
            event.prevent_default()
            self._typed_while_arming(event)
            return
        for key, _label, value in self.choices:
            if event.key == key and self._bound(value) is None:
                event.stop()
                event.prevent_default()
                self.dismiss(value)
                return

    def _typed_while_arming(self, event: Key) -> None:
        """A key typed for something else: hand a character back, keep the choices waiting a moment more."""
        target = self._typing_in
        if event.character and event.is_printable and isinstance(target, TextArea) \
                and target.is_attached and not target.read_only:
            target.insert(event.character)
            self._armed_at = arming_clock.now() + self.arming
            self._tell(TYPED_BACK)
        else:
            self._tell(PRESS_AGAIN)

    def _tell(self, text: str) -> None:
        if self._told != text:  # once, not once per key of a word
            self._told = text
            self.notify(text, timeout=6)

    def on_click(self) -> None:
        """A click on the question is the user's choice to answer it: the keys act at once."""
        self._armed_at = 0.0

    @on(Button.Pressed)
    def _chosen(self, event: Button.Pressed) -> None:
        if event.button.id and event.button.id.startswith("choice-"):
            self.dismiss(self.choices[int(event.button.id.removeprefix("choice-"))][2])

    def action_choose(self, value: str) -> None:
        """Answer with ``value`` (once the keys are armed)."""
        if not self.is_armed:
            self._tell(PRESS_AGAIN)
            return
        if any(choice_value == value for _key, _label, choice_value in self.choices):
            self.dismiss(value)

    def action_later(self) -> None:
        """Close without an answer: the question waits (the decision key brings it back)."""
        self.dismiss(None)


DEV_STALLED_CHOICES: tuple[tuple[str, str, str], ...] = (
    ("c", "Continue", "continue"),
    ("m", "Mark complete", "complete"),
    ("x", "Abandon", "abandon"),
)


class DevStalledScreen(DecisionScreen):
    """The Developer stopped without saying it finished: continue, mark complete, or abandon."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("c", "choose('continue')", "Developer continues", id="stalled.continue"),
        Binding("m", "choose('complete')", "Mark complete (start the review)", id="stalled.complete"),
        Binding("x", "choose('abandon')", "Abandon the plan", id="stalled.abandon"),
    ]


def dev_stalled_screen(plan_title: str, *, arming: float = 0.0, cancelled: bool = False) -> DecisionScreen:
    """The question asked when the Developer stopped without saying it finished (``cancelled``: the user stopped it)."""
    why = (f"You cancelled the Developer working on “{plan_title}”." if cancelled
           else f"The Developer stopped working on “{plan_title}” without saying it finished.")
    return DevStalledScreen(
        "The Developer stopped",
        f"{why}\n"
        "Continue asks it to carry on; mark complete starts the review; abandon ends the plan.",
        DEV_STALLED_CHOICES,
        arming=arming,
    )

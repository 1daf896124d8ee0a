"""Numbers and switches in the configuration, kept apart: ``true`` is no number and ``1`` is no switch.

Python counts ``True`` as the integer 1, so a plain ``int`` or ``float`` field takes
``timeout_idle_s = true`` as one second; these types refuse it with the key named. Text from an
environment variable (``"30"``, ``"true"``) is still read as usual.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import BeforeValidator


def _no_switch(value: object) -> object:
    if isinstance(value, bool):
        raise ValueError(f"a number is expected here, not {str(value).lower()}")
    return value


def _no_number(value: object) -> object:
    if isinstance(value, int | float) and not isinstance(value, bool):
        raise ValueError(f"true or false is expected here, not {value}")
    return value


Number = Annotated[float, BeforeValidator(_no_switch)]
"""A number of seconds, a ratio…: an integer or a decimal, never true/false."""

WholeNumber = Annotated[int, BeforeValidator(_no_switch)]
"""A count or a size: an integer, never true/false."""

Switch = Annotated[bool, BeforeValidator(_no_number)]
"""On or off: true or false, never a number."""

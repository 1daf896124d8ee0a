"""What a key, a paste or a mouse event sends to a program in a terminal (xterm's encodings).

Keys are named as Textual names them (``up``, ``ctrl+shift+left``, ``f5``, ``alt+x``, ``ctrl+a``),
with the character the terminal gave where there is one; nothing here imports Textual.
"""

from __future__ import annotations

ESC = "\x1b"
CSI = "\x1b["
SS3 = "\x1bO"
PASTE_START = "\x1b[200~"
PASTE_END = "\x1b[201~"

_CURSOR = {"up": "A", "down": "B", "right": "C", "left": "D", "home": "H", "end": "F"}
_TILDE = {"insert": 2, "delete": 3, "pageup": 5, "pagedown": 6,
          "f5": 15, "f6": 17, "f7": 18, "f8": 19, "f9": 20, "f10": 21, "f11": 23, "f12": 24}
_SS3_FKEYS = {"f1": "P", "f2": "Q", "f3": "R", "f4": "S"}
_PLAIN = {"enter": "\r", "tab": "\t", "backspace": "\x7f", "escape": ESC, "space": " ",
          "ctrl+h": "\x08", "ctrl+i": "\t", "ctrl+m": "\r", "ctrl+j": "\n"}
# Textual's names of the punctuation that has a control code
_CTRL_PUNCT = {"@": "\x00", "at": "\x00", "space": "\x00", "left_square_bracket": ESC, "backslash": "\x1c",
               "right_square_bracket": "\x1d", "circumflex_accent": "\x1e", "underscore": "\x1f",
               "question_mark": "\x7f"}
_MODIFIER_BITS = {"shift": 1, "alt": 2, "meta": 2, "ctrl": 4}


def _split(key: str) -> tuple[frozenset[str], str]:
    *mods, base = key.split("+") if key != "+" else ["+"]
    return frozenset(mods), base


def key_bytes(key: str, character: str | None, *, application_cursor: bool = False) -> bytes | None:
    """The bytes ``key`` sends, or None when it sends nothing a terminal program would read.

    ``application_cursor`` (DECCKM) sends unmodified arrows, home and end as ``ESC O x``.
    """
    text = _key_text(key, character, application_cursor)
    return text.encode() if text is not None else None


def _key_text(key: str, character: str | None, application_cursor: bool) -> str | None:
    mods, base = _split(key)
    code = 1 + sum(_MODIFIER_BITS.get(m, 0) for m in mods)
    if base in _CURSOR:
        if code == 1:
            return (SS3 if application_cursor else CSI) + _CURSOR[base]
        return f"{CSI}1;{code}{_CURSOR[base]}"
    if base in _SS3_FKEYS:
        return SS3 + _SS3_FKEYS[base] if code == 1 else f"{CSI}1;{code}{_SS3_FKEYS[base]}"
    if base in _TILDE:
        return f"{CSI}{_TILDE[base]}~" if code == 1 else f"{CSI}{_TILDE[base]};{code}~"
    if key == "shift+tab":
        return CSI + "Z"
    if key in _PLAIN:
        return _PLAIN[key]
    alt = bool(mods & {"alt", "meta"})
    if alt:
        rest = "+".join([*sorted(mods - {"alt", "meta"}), base])
        inner = _key_text(rest, character, application_cursor)
        return ESC + inner if inner is not None else None
    if "ctrl" in mods and mods <= {"ctrl", "shift"}:
        if len(base) == 1 and base.isalpha():
            return chr(ord(base.lower()) & 0x1F)
        if base in _CTRL_PUNCT:
            return _CTRL_PUNCT[base]
    if character and (character.isprintable() or (len(character) == 1 and ord(character) < 0x20)):
        return character
    if not character and len(base) == 1 and base.isprintable() and mods <= {"shift"}:
        return base.upper() if mods else base  # alt+x reaches here as "x" with no character
    return None


def paste_bytes(text: str, *, bracketed: bool) -> bytes:
    """A paste as the program should get it: newlines as carriage returns, and wrapped in
    ``ESC[200~`` … ``ESC[201~`` when the program asked for bracketed paste (an end marker inside the
    text is removed, so pasted text cannot end the paste early and be run as typed keys)."""
    text = text.replace("\r\n", "\r").replace("\n", "\r")
    if bracketed:
        while PASTE_END in text:
            text = text.replace(PASTE_END, "")
        return (PASTE_START + text + PASTE_END).encode()
    return text.encode()


def mouse_bytes(button: int, x: int, y: int, *, pressed: bool, shift: bool = False, alt: bool = False,
                ctrl: bool = False) -> bytes:
    """An SGR (mode 1006) mouse report; ``x``/``y`` 0-based cells, ``button`` 0-2 or 64/65 for the wheel."""
    code = button + (4 if shift else 0) + (8 if alt else 0) + (16 if ctrl else 0)
    return f"{CSI}<{code};{x + 1};{y + 1}{'M' if pressed else 'm'}".encode()

"""A terminal inside the app: a VT emulator, the key table and PTY sessions for native CLIs.

Nothing here imports the UI stack: the pane widget renders what :class:`.emulator.Emulator` holds.
"""

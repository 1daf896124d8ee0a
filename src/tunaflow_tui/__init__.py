"""tunaflow: run your coding agents under one human-gated Plan → Dev → Review process."""

__version__ = "0.1.0"

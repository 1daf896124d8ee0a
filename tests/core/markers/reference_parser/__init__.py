"""The marker parser as it stood before the shared line pass: the reference the differential tests
(and ``bench/markers_parse.py --before``) compare the current parser against. Not used by the app."""

from .parser import parse_markers
from .scanner import scrub_markers

__all__ = ["parse_markers", "scrub_markers"]

"""The embedding worker's wire format and where its socket and lock live.

One frame is two 4-byte big-endian lengths, then a UTF-8 JSON object (the header), then that many
raw bytes (the payload: vectors as little-endian float32 rows, or nothing). A client sends one
request frame and reads one answer frame, in turn, on one connection. Every answer has ``ok``;
an answer with ``bye`` means the worker is leaving because it was idle: the request was not
served, and the client connects to a new worker and asks again.

Importing this module imports neither numpy nor onnxruntime.
"""

from __future__ import annotations

import hashlib
import json
import os
import socket
import struct
import tempfile
from pathlib import Path
from typing import Any

#: File names inside the project's ``.tunaflow/`` folder.
SOCKET_NAME = "embed.sock"
LOCK_NAME = "embed.lock"
LOG_NAME = "embed-worker.log"
#: Longest header or payload accepted (a message of several MB is cut into 800-character chunks).
MAX_FRAME_BYTES = 64 * 1024 * 1024
#: Unix socket paths longer than this cannot be bound (108 bytes with the terminating NUL on Linux).
MAX_SOCKET_PATH = 100

_LENGTHS = struct.Struct(">II")


class ProtocolError(ConnectionError):
    """The other side sent something that is not a frame, or closed the connection mid-frame."""


def socket_path(state_dir: Path) -> Path:
    """Where the worker of the project whose state folder is ``state_dir`` listens.

    Inside the state folder when the path is short enough to bind; otherwise a per-user folder in
    the temporary directory, named after a hash of the state folder so every process finds the same.
    """
    inside = state_dir / SOCKET_NAME
    if len(os.fsencode(inside)) <= MAX_SOCKET_PATH:
        return inside
    digest = hashlib.sha256(os.fsencode(state_dir.resolve())).hexdigest()[:20]
    return Path(tempfile.gettempdir()) / f"tunaflow-{os.getuid()}" / f"{digest}.sock"


def send_frame(sock: socket.socket, header: dict[str, Any], payload: bytes = b"") -> None:
    """Send one frame (raises OSError when the connection is gone)."""
    body = json.dumps(header, ensure_ascii=False).encode("utf-8")
    if len(body) > MAX_FRAME_BYTES or len(payload) > MAX_FRAME_BYTES:
        raise ValueError("a frame is larger than the protocol allows")
    sock.sendall(_LENGTHS.pack(len(body), len(payload)) + body + payload)


def _read_exactly(sock: socket.socket, size: int) -> bytes:
    parts: list[bytes] = []
    left = size
    while left:
        part = sock.recv(min(left, 1 << 20))
        if not part:
            raise ProtocolError("the connection closed mid-frame")
        parts.append(part)
        left -= len(part)
    return b"".join(parts)


def receive_frame(sock: socket.socket) -> tuple[dict[str, Any], bytes] | None:
    """One frame, or None when the other side closed the connection cleanly before it.

    Raises :class:`ProtocolError` for a malformed or truncated frame.
    """
    first = sock.recv(_LENGTHS.size)
    if not first:
        return None
    if len(first) < _LENGTHS.size:
        first += _read_exactly(sock, _LENGTHS.size - len(first))
    header_size, payload_size = _LENGTHS.unpack(first)
    if header_size > MAX_FRAME_BYTES or payload_size > MAX_FRAME_BYTES:
        raise ProtocolError("a frame is larger than the protocol allows")
    try:
        header = json.loads(_read_exactly(sock, header_size).decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ProtocolError(f"a frame's header is not JSON: {exc}") from exc
    if not isinstance(header, dict):
        raise ProtocolError("a frame's header is not a JSON object")
    return header, _read_exactly(sock, payload_size)

"""The embedding worker's frames: what goes in comes out, and a broken peer is an error, not a hang."""

from __future__ import annotations

import socket
import struct
from pathlib import Path

import pytest

from tunaflow_tui.core.memory.worker_protocol import (
    MAX_FRAME_BYTES,
    MAX_SOCKET_PATH,
    ProtocolError,
    receive_frame,
    send_frame,
    socket_path,
)


def test_a_frame_carries_its_header_and_payload_and_a_clean_close_is_none() -> None:
    left, right = socket.socketpair()
    with left, right:
        send_frame(left, {"op": "embed", "texts": ["한국어 text", "two"]}, b"\x00\x01" * 1000)
        header, payload = receive_frame(right) or ({}, b"")
        assert header == {"op": "embed", "texts": ["한국어 text", "two"]} and payload == b"\x00\x01" * 1000
        left.close()
        assert receive_frame(right) is None


@pytest.mark.parametrize("raw", [
    struct.pack(">II", 10, 0) + b'{"op"',  # cut mid-header
    struct.pack(">II", 4, 0) + b"nope",  # not JSON
    struct.pack(">II", 2, 0) + b"[]",  # not an object
    struct.pack(">II", MAX_FRAME_BYTES + 1, 0),  # larger than allowed
])
def test_a_broken_frame_is_a_protocol_error(raw: bytes) -> None:
    left, right = socket.socketpair()
    with left, right:
        left.sendall(raw)
        left.shutdown(socket.SHUT_WR)
        with pytest.raises(ProtocolError):
            receive_frame(right)


def test_a_deep_project_gets_a_socket_path_that_can_be_bound(tmp_path: Path) -> None:
    deep = tmp_path / ("d" * 120) / ".tunaflow"
    path = socket_path(deep)
    assert len(str(path)) <= MAX_SOCKET_PATH and path == socket_path(deep), "the same for every process"
    path.parent.mkdir(parents=True, exist_ok=True)
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as listener:
        listener.bind(str(path))
    path.unlink()
    shallow = Path("/tmp/p/.tunaflow")
    assert socket_path(shallow) == shallow / "embed.sock", "inside the state folder when it fits"

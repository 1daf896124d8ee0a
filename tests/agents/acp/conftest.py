"""The rig every ACP engine test uses: a stand-in agent working in a folder of its own."""

from __future__ import annotations

from pathlib import Path

import pytest
from acp_rig import AcpRig


@pytest.fixture
def rig(tmp_path: Path) -> AcpRig:
    work = tmp_path / "work"
    work.mkdir()
    return AcpRig(tmp_path, work)
